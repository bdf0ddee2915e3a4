package reliability_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// TestAccKube_faults is the Kubernetes side of the fault matrix: each row
// injects its fault into the sandbox's cluster during a real apply or
// destroy. A row either recovers (want is empty: the run succeeds despite
// the fault) or fails with a diagnostic naming the stage and the fix
// (want); either way it ends with vSphere, the cluster and the state
// agreeing (no untracked VM, no orphaned Node, no bootstrap token or cordon
// left) and the next plain apply converging. The node rows clone from one
// golden image built for them all.
func TestAccKube_faults(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	var (
		once     sync.Once
		template string
	)
	shared := func() string {
		once.Do(func() { template = acctest.SharedTemplate(t) })
		return template
	}
	rows := []struct {
		fault string // what is injected
		stage string // where in the run
		want  string // the diagnostic; "" when the run recovers
		run   func(t *testing.T, template func() string, want string)
	}{
		{"API server stopped, restarted", "create: the Ready wait", "", apiDownInReadyWait},
		{"API server stopped past the create timeout", "create: the Ready wait",
			`(?s)waiting for the Node to become Ready.*could not tell whether it is Ready.*the API server has not answered since .*check that it is running and reachable`,
			apiDownPastCreateTimeout},
		{"API server stopped, restarted", "destroy: the drain (evictions refused by a PodDisruptionBudget)", "", apiDownInDrain},
		{"bootstrap token TTL shorter than the boot", "create: the join (kubelet started late)", "", tokenOutlivedByBoot},
		{"Ctrl-C (SIGINT to the CLI)", "destroy: the drain",
			`(?s)deleting Windows node.*draining the Node: draining Node "[^"]+": interrupted \(context canceled\).*the destroy was interrupted, so the Node was uncordoned`,
			ctrlCInDrain},
		{"Linux DaemonSet guard's node selector removed by hand", "between two applies", "", guardRemovedOutside},
		{"RuntimeClass edited by hand", "between two applies", "", runtimeClassEditedOutside},
	}
	for _, row := range rows {
		t.Run(row.fault+" during "+row.stage, func(t *testing.T) {
			start := time.Now()
			row.run(t, shared, row.want)
			t.Logf("row %q during %q: %s", row.fault, row.stage, time.Since(start).Round(time.Second))
		})
	}
}

const nodeAddr = "windows_node.n0"

// converged checks that vSphere, the cluster and the state agree on a
// Ready node: its VM is the one in the state, its Node Ready and not
// cordoned, and no bootstrap token of it is left.
func converged(t *testing.T, s *terraform.State, node string) error {
	rs := s.RootModule().Resources[nodeAddr]
	if rs == nil {
		return fmt.Errorf("%s is not in the state", nodeAddr)
	}
	if id, err := acctest.VMAt(t, node); err != nil || id != rs.Primary.ID {
		return fmt.Errorf("VM at the node's path %q (err %v), in the state %q", id, err, rs.Primary.ID)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		return err
	}
	return noBootstrapToken(t, node)
}

func noBootstrapToken(t *testing.T, node string) error {
	secrets, err := acctest.Kube(t).CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
	if err != nil {
		return err
	}
	for _, s := range secrets.Items {
		if string(s.Data["description"]) == "windows_node "+node {
			return fmt.Errorf("the bootstrap token %s of %s is left", s.Name, node)
		}
	}
	return nil
}

// stopAPIServerWhenNotReady waits (a watch) until node has registered and is
// held NotReady by the KubeletNotReady fault, the provider then being in its
// Ready wait, and stops the API server.
func stopAPIServerWhenNotReady(t *testing.T, node string) error {
	if err := acctest.WaitForNode(t, node, 5*time.Minute, "registered and NotReady", func(n *corev1.Node) bool { return !kube.NodeIsReady(n) }); err != nil {
		return err
	}
	return acctest.Sandbox.ControlPlane.StopAPIServer()
}

// keepAPIServer starts the API server again when t ends, should the row
// have failed during its outage: the rows after it need the cluster.
func keepAPIServer(t *testing.T) {
	t.Cleanup(func() { _ = startAPIServer() }) // waits for it when the row restarted it
}

// startAPIServer ends the outage and returns once the cluster has healed
// from it as far as the rows need: the API server ready, and the cluster
// DNS with a ready endpoint again. An outage longer than the node
// lifecycle controller's grace period has it mark the Linux node's pods
// not Ready when the API server returns, and the controller manager, which
// exits when it cannot renew its leader lease, may be in its restart
// back-off before its EndpointSlice controller marks the DNS pod ready
// again (seen in CI: the next rows' network probes found no DNS endpoint).
// The upstream e2e framework likewise waits for kube-system to be ready
// before its tests.
func startAPIServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := acctest.Sandbox.ControlPlane.StartAPIServer(ctx); err != nil {
		return err
	}
	return waitForClusterDNS(ctx, acctest.Sandbox.ControlPlane.Client)
}

// waitForClusterDNS waits on a watch until an EndpointSlice of
// kube-system/kube-dns has a ready endpoint.
func waitForClusterDNS(ctx context.Context, cs kubernetes.Interface) error {
	lw := cache.NewFilteredListWatchFromClient(cs.DiscoveryV1().RESTClient(), "endpointslices", metav1.NamespaceSystem,
		func(o *metav1.ListOptions) { o.LabelSelector = discoveryv1.LabelServiceName + "=kube-dns" })
	_, err := watchtools.UntilWithSync(ctx, lw, &discoveryv1.EndpointSlice{}, nil, func(e watch.Event) (bool, error) {
		s, ok := e.Object.(*discoveryv1.EndpointSlice)
		if !ok || e.Type == watch.Deleted {
			return false, nil
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("after the API server's outage, kube-system/kube-dns has no ready endpoint: %w", err)
	}
	return nil
}

// apiDownInReadyWait: the API server stops while the create waits for the
// Node to be Ready, and comes back; only then does the kubelet report
// Ready, so the create sees it through a watch that resumed after the
// outage.
func apiDownInReadyWait(t *testing.T, template func() string, _ string) {
	keepAPIServer(t)
	node := acctest.NodeName("kapi")
	config := acctest.NodeConfigOnTemplate(template(), []string{node}, "  timeouts {\n    create = \"5m\"\n  }\n")
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(node) })
	outage := make(chan error, 1)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{KubeletNotReady: true})
					go func() {
						err := stopAPIServerWhenNotReady(t, node)
						down := time.Now()
						// Started again whatever happened, or the apply
						// would wait out its timeout.
						if serr := startAPIServer(); err == nil {
							err = serr
						}
						t.Logf("the API server was down for %s", time.Since(down).Round(time.Millisecond))
						acctest.Sandbox.Hosts.ClearFaults(node)
						outage <- err
					}()
				},
				Config: config,
				Check: func(s *terraform.State) error {
					if err := <-outage; err != nil {
						return fmt.Errorf("injecting the outage: %w", err)
					}
					return converged(t, s, node)
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// apiDownPastCreateTimeout: the API server stops in the Ready wait and is
// still down when the create's timeout ends it. The next apply, with the
// API server back, replaces the tainted node and deletes the token the
// failed run could not.
func apiDownPastCreateTimeout(t *testing.T, template func() string, want string) {
	keepAPIServer(t)
	node := acctest.NodeName("kapx")
	// The create's timeout ends the outage's run; the next apply's create
	// has time for a loaded machine.
	config := acctest.NodeConfigOnTemplate(template(), []string{node}, "  timeouts {\n    create = \"45s\"\n  }\n")
	next := acctest.NodeConfigOnTemplate(template(), []string{node}, "  timeouts {\n    create = \"5m\"\n  }\n")
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(node) })
	outage := make(chan error, 1)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{KubeletNotReady: true})
					go func() { outage <- stopAPIServerWhenNotReady(t, node) }()
				},
				Config:      config,
				ExpectError: acctest.Wrapped(want),
			},
			{
				PreConfig: func() {
					if err := <-outage; err != nil {
						t.Fatalf("injecting the outage: %v", err)
					}
					if err := startAPIServer(); err != nil {
						t.Fatal(err)
					}
					acctest.Sandbox.Hosts.ClearFaults(node)
				},
				Config: next,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					acctest.ExpectTracked{T: t, Addr: nodeAddr, Name: node, Tainted: true},
					plancheck.ExpectResourceAction(nodeAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(s *terraform.State) error { return converged(t, s, node) },
			},
		},
	})
}

// apiDownInDrain: the API server stops while the destroy's drain retries an
// eviction a PodDisruptionBudget refuses, and comes back; the budget is then
// relaxed and the destroy completes.
func apiDownInDrain(t *testing.T, template func() string, _ string) {
	keepAPIServer(t)
	node := acctest.NodeName("kdrn")
	// A bounded destroy: should the drain not resume after the outage, the
	// row fails with the provider's diagnostic of what it waited on instead
	// of hanging for the default 30 minutes (seen once in a full run).
	config := acctest.NodeConfigOnTemplate(template(), []string{node}, "  timeouts {\n    delete = \"6m\"\n  }\n")
	var release func()
	outage := make(chan error, 1)
	var injecting atomic.Bool
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			// Only the destroy step starts the outage: after an earlier
			// failure, nothing will ever send on the channel (waiting on it
			// hung a full run).
			if injecting.Load() {
				if err := <-outage; err != nil {
					return fmt.Errorf("injecting the outage: %w", err)
				}
			}
			return acctest.CheckNodesDestroyed(t)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					release = acctest.BlockedWorkload(t, node)
					return nil
				},
			},
			{
				PreConfig: func() {
					injecting.Store(true)
					go func() {
						outage <- func() error {
							if err := acctest.WaitForNode(t, node, 5*time.Minute, "cordoned by the drain", func(n *corev1.Node) bool { return n.Spec.Unschedulable }); err != nil {
								return err
							}
							err := acctest.Sandbox.ControlPlane.StopAPIServer()
							if err == nil {
								// The outage lasts longer than the drain's
								// longest retry interval (5 s), so an
								// eviction meets it.
								<-time.After(6 * time.Second)
							}
							// Started again whatever happened, or the
							// destroy would wait out its timeout.
							if serr := startAPIServer(); err == nil {
								err = serr
							}
							release()
							return err
						}()
					}()
				},
				Config:  config,
				Destroy: true,
			},
		},
	})
}

// tokenOutlivedByBoot: the join token lives 6 s and the kubelet starts 15 s
// after it was created (its service step is delayed): refreshed while the
// node has not joined, it is still valid when the kubelet bootstraps.
func tokenOutlivedByBoot(t *testing.T, template func() string, _ string) {
	node := acctest.NodeName("ktok")
	config := acctest.NodeConfigOnTemplate(template(), []string{node}, "  timeouts {\n    create = \"2m\"\n  }\n")
	ttl := winnode.BootstrapTokenTTL
	t.Cleanup(func() {
		winnode.BootstrapTokenTTL = ttl
		acctest.Sandbox.Hosts.ClearFaults(node)
	})
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					winnode.BootstrapTokenTTL = 6 * time.Second
					acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{Steps: []winsim.StepFault{{Step: "kubelet-service", Delay: 15 * time.Second}}})
				},
				Config: config,
				Check: func(s *terraform.State) error {
					winnode.BootstrapTokenTTL = ttl
					return converged(t, s, node)
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// ctrlCInDrain: the user presses Ctrl-C while the destroy drains a node
// whose pod a PodDisruptionBudget protects. The node stays in the state and
// in service (uncordoned); the next apply has nothing to do, and the next
// destroy removes it.
func ctrlCInDrain(t *testing.T, template func() string, want string) {
	node := acctest.NodeName("kint")
	config := acctest.NodeConfigOnTemplate(template(), []string{node}, "")
	cli := acctest.NewCLI(t)
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("creating the node: %v\n%s", err, out)
	}
	release := acctest.BlockedWorkload(t, node)
	interrupt := make(chan struct{})
	cordoned := make(chan error, 1)
	go func() {
		err := acctest.WaitForNode(t, node, 5*time.Minute, "cordoned by the drain", func(n *corev1.Node) bool { return n.Spec.Unschedulable })
		if err == nil {
			close(interrupt)
		}
		cordoned <- err
	}()
	out, err := cli.DestroyInterrupted(config, interrupt)
	if werr := <-cordoned; werr != nil {
		t.Fatalf("the drain never began: %v", werr)
	}
	if err == nil {
		t.Fatalf("the interrupted destroy succeeded:\n%s", out)
	}
	if !acctest.Wrapped(want).MatchString(out) {
		t.Fatalf("the interrupted destroy printed:\n%s\nwant it to match %s", out, want)
	}
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	r := acctest.StateResource(st, nodeAddr)
	if r == nil {
		t.Fatal("the interrupted destroy removed the node from the state")
	}
	if id, err := acctest.VMAt(t, node); err != nil || id != r.AttributeValues["id"] {
		t.Fatalf("VM at the node's path %q (err %v), in the state %v", id, err, r.AttributeValues["id"])
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Fatalf("after the interrupted destroy: %v", err)
	}
	_, plan, err := cli.Plan(config, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the next apply would %v %s; want nothing to do", rc.Change.Actions, rc.Address)
		}
	}
	// The next destroy drains and removes it, once the budget allows.
	release()
	if out, err := cli.DestroyInterrupted(config, nil); err != nil {
		t.Fatalf("destroying after the interruption: %v\n%s", err, out)
	}
	if id, err := acctest.VMAt(t, node); err != nil || id != "" {
		t.Errorf("after the destroy: VM %q (err %v)", id, err)
	}
	if _, err := acctest.Kube(t).FindNode(context.Background(), node); !kube.IsNotFound(err) {
		t.Errorf("after the destroy: Node %s still there (err %v)", node, err)
	}
}

// guardRemovedOutside: the node selector windows_linux_daemonset_guard put
// on a DaemonSet is removed by hand: the plan shows it, the apply puts it
// back, and the plan after is empty.
func guardRemovedOutside(t *testing.T, _ func() string, _ string) {
	k := acctest.Kube(t)
	ctx := context.Background()
	ns, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: acctest.Name("guard")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "kube-proxy"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.36.3"}},
			}},
		},
	}
	if _, err := k.AppsV1().DaemonSets(ns.Name).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const addr = "windows_linux_daemonset_guard.test"
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_linux_daemonset_guard" "test" {
  provider = windows.admin
  namespace = %q
  names     = ["kube-proxy"]
}
`, ns.Name)
	guarded := func() error {
		ds, err := k.FindDaemonSet(ctx, ns.Name, "kube-proxy")
		if err != nil {
			return err
		}
		if !kube.LinuxOnly(ds) || !kube.GuardOwnsSelector(ds) {
			return fmt.Errorf("kube-proxy's node selector %v (the guard owns it: %v): not guarded", ds.Spec.Template.Spec.NodeSelector, kube.GuardOwnsSelector(ds))
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: func(*terraform.State) error { return guarded() }},
			{
				PreConfig: func() {
					ds, err := k.FindDaemonSet(ctx, ns.Name, "kube-proxy")
					if err != nil {
						t.Fatal(err)
					}
					delete(ds.Spec.Template.Spec.NodeSelector, kube.LabelOS)
					if _, err := k.AppsV1().DaemonSets(ns.Name).Update(ctx, ds, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return guarded() },
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// runtimeClassEditedOutside: a windows_runtime_class object's scheduling is
// changed by hand: the plan shows it, the apply puts it back, and the plan
// after is empty.
func runtimeClassEditedOutside(t *testing.T, _ func() string, _ string) {
	name := acctest.Name("win-edit")
	const addr = "windows_runtime_class.test"
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name            = %q
  windows_version = "2022"
}
`, name)
	k := acctest.Kube(t)
	ctx := context.Background()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					rc, err := k.FindRuntimeClass(ctx, name)
					if err != nil {
						t.Fatal(err)
					}
					rc.Scheduling.NodeSelector[winnode.LabelWindowsBuild] = "10.0.17763"
					rc.Scheduling.Tolerations = nil
					if _, err := k.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					rc, err := k.FindRuntimeClass(ctx, name)
					if err != nil {
						return err
					}
					if got := rc.Scheduling.NodeSelector[winnode.LabelWindowsBuild]; got != "10.0.20348" || len(rc.Scheduling.Tolerations) == 0 {
						return fmt.Errorf("not put back: node selector %v, tolerations %v", rc.Scheduling.NodeSelector, rc.Scheduling.Tolerations)
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}
