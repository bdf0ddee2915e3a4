package resources_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

const poolAddr = "windows_node_pool.p"

// nodePoolConfig is the golden image "test", the flannel networking, and a
// pool of replicas members made from template; extra adds resources (a
// second image) and body attributes of the pool.
func nodePoolConfig(image, prefix string, replicas int, template, extra, body string) string {
	return acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") + acctest.GoldenImageConfig(image, nil) + extra +
		fmt.Sprintf(`
resource "windows_node_pool" "p" {
  name_prefix       = %q
  replicas          = %d
  template          = %s
  networking_id     = windows_node_networking.test.id
%s  drain = {
    timeout = "2m"
  }
%s
}
`, prefix, replicas, template, acctest.MachineInSandbox(), body)
}

// secondImage is another golden image, "v2", in the same configuration.
func secondImage(name string) string {
	c := acctest.GoldenImageConfig(name, nil)
	c = c[strings.Index(c, `resource "windows_golden_image"`):]
	return strings.Replace(c, `"windows_golden_image" "test"`, `"windows_golden_image" "v2"`, 1)
}

type poolMember struct {
	name, id, revision, health, created string
}

func poolMembers(s *terraform.State) ([]poolMember, error) {
	rs, ok := s.RootModule().Resources[poolAddr]
	if !ok {
		return nil, fmt.Errorf("%s not in the state", poolAddr)
	}
	a := rs.Primary.Attributes
	n, err := strconv.Atoi(a["members.#"])
	if err != nil {
		return nil, fmt.Errorf("members.# = %q", a["members.#"])
	}
	var out []poolMember
	for i := range n {
		at := func(k string) string { return a[fmt.Sprintf("members.%d.%s", i, k)] }
		out = append(out, poolMember{at("name"), at("id"), at("revision"), at("health"), at("created")})
	}
	return out, nil
}

func memberNames(ms []poolMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name)
	}
	return out
}

// checkPool checks that the pool has want members, each Ready in the
// cluster with the pool's label and its VM in vSphere, all of the pool's
// revision; it returns them.
func checkPool(t *testing.T, s *terraform.State, prefix string, want int) ([]poolMember, error) {
	ms, err := poolMembers(s)
	if err != nil {
		return nil, err
	}
	rev := s.RootModule().Resources[poolAddr].Primary.Attributes["revision"]
	if len(ms) != want {
		return nil, fmt.Errorf("%d members %v, want %d", len(ms), memberNames(ms), want)
	}
	for _, m := range ms {
		if !strings.HasPrefix(m.name, prefix+"-") || m.revision != rev || m.health != string(winpool.Ready) {
			return nil, fmt.Errorf("member %+v: want %s-..., revision %s, ready", m, prefix, rev)
		}
		if err := acctest.CheckNodeReady(t, m.name); err != nil {
			return nil, err
		}
		n, _ := acctest.Kube(t).FindNode(context.Background(), m.name)
		if n.Labels[winpool.LabelPool] != prefix {
			return nil, fmt.Errorf("Node %s has label %s = %q, want %q", m.name, winpool.LabelPool, n.Labels[winpool.LabelPool], prefix)
		}
		if id, err := acctest.VMAt(t, m.name); err != nil || id != m.id {
			return nil, fmt.Errorf("VM of member %s: %q (err %v), state %q", m.name, id, err, m.id)
		}
	}
	// Nothing else is in the cluster under the pool's label.
	nodes, err := acctest.Kube(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: winpool.LabelPool + "=" + prefix})
	if err != nil {
		return nil, err
	}
	if len(nodes.Items) != want {
		return nil, fmt.Errorf("%d Nodes labelled %s=%s, want %d", len(nodes.Items), winpool.LabelPool, prefix, want)
	}
	return ms, nil
}

// checkAntiAffinity checks that the pool's DRS anti-affinity rule lists
// exactly the members' VMs (members nil: that there is no rule).
func checkAntiAffinity(t *testing.T, prefix string, members []poolMember) error {
	pool := vimtypes.ManagedObjectReference{Type: "ResourcePool", Value: os.Getenv("SANDBOX_RESOURCE_POOL_ID")}
	vms, err := acctest.VSphere(t).VMAntiAffinity(context.Background(), pool, "windows-node-pool-"+prefix)
	if err != nil {
		return err
	}
	var got, want []string
	for _, vm := range vms {
		got = append(got, vm.Value)
	}
	for _, m := range members {
		want = append(want, m.id)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("the DRS anti-affinity rule lists VMs %v, want the members' %v", got, want)
	}
	return nil
}

// checkGone checks that the members' VMs and Nodes no longer exist.
func checkGone(t *testing.T, ms []poolMember) error {
	for _, m := range ms {
		if _, err := acctest.Kube(t).FindNode(context.Background(), m.name); !kube.IsNotFound(err) {
			return fmt.Errorf("Node %s of a removed member still exists (err %v)", m.name, err)
		}
		if _, err := acctest.VSphere(t).FindVMByID(context.Background(), m.id); !vsphere.IsNotFound(err) {
			return fmt.Errorf("VM %s of removed member %s still exists (err %v)", m.id, m.name, err)
		}
	}
	return nil
}

// capacitySampler watches, while a roll runs, how many of the pool's Nodes
// are Ready and schedulable, and how many pods of a Deployment are available.
type capacitySampler struct {
	mu                     sync.Mutex
	minNodes, minAvailable int
	samples                int
	stop                   chan struct{}
	done                   chan struct{}
}

func sampleCapacity(t *testing.T, prefix, ns, deployment string) *capacitySampler {
	c := &capacitySampler{minNodes: 1 << 30, minAvailable: 1 << 30, stop: make(chan struct{}), done: make(chan struct{})}
	k := acctest.Kube(t)
	go func() {
		defer close(c.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
			ctx := context.Background()
			nodes, err := k.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: winpool.LabelPool + "=" + prefix})
			if err != nil {
				continue
			}
			d, err := k.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
			if err != nil {
				continue
			}
			ready := 0
			for i := range nodes.Items {
				if kube.NodeIsReady(&nodes.Items[i]) && !nodes.Items[i].Spec.Unschedulable {
					ready++
				}
			}
			c.mu.Lock()
			c.minNodes, c.minAvailable = min(c.minNodes, ready), min(c.minAvailable, int(d.Status.AvailableReplicas))
			c.samples++
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *capacitySampler) finish() (minNodes, minAvailable, samples int) {
	close(c.stop)
	<-c.done
	return c.minNodes, c.minAvailable, c.samples
}

// TestAccNodePool_lifecycle drives a pool through the real CLI: create 3,
// scale to 5 and back to 2 (the newest go), roll a new golden image through
// with max_surge 1 and max_unavailable 0 while a PodDisruptionBudget guards
// a workload on the pool (capacity and availability sampled throughout),
// replace a member whose VM was destroyed outside Terraform, import the
// pool by its prefix, and destroy it.
func TestAccNodePool_lifecycle(t *testing.T) {
	acctest.PreCheck(t)
	image, image2 := acctest.Name("img"), acctest.Name("img2")
	prefix := fmt.Sprintf("p%d", acctest.Seq()%100000)
	const tmpl1, tmpl2 = "windows_golden_image.test.template_path", "windows_golden_image.v2.template_path"
	var first, five, two, rolled []poolMember
	var ns string
	var sampler *capacitySampler
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkPoolDestroyed(t, prefix),
		Steps: []resource.TestStep{
			{
				Config: nodePoolConfig(image, prefix, 3, tmpl1, "", "  anti_affinity = true\n"),
				Check: func(s *terraform.State) (err error) {
					if first, err = checkPool(t, s, prefix, 3); err != nil {
						return err
					}
					return checkAntiAffinity(t, prefix, first)
				},
			},
			{
				// Two more members, and a label every member gets: the
				// new ones at their join, the others in place.
				Config: nodePoolConfig(image, prefix, 5, tmpl1, "", `  labels = { "example.com/tier" = "web" }`+"\n  anti_affinity = true\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) (err error) {
					if five, err = checkPool(t, s, prefix, 5); err != nil {
						return err
					}
					for _, m := range first {
						if !slices.Contains(memberNames(five), m.name) {
							return fmt.Errorf("member %s of the first 3 is gone after scaling up: %v", m.name, memberNames(five))
						}
					}
					for _, m := range five {
						n, err := acctest.Kube(t).FindNode(context.Background(), m.name)
						if err != nil {
							return err
						}
						if n.Labels["example.com/tier"] != "web" {
							return fmt.Errorf("Node %s has labels %v, want example.com/tier=web", m.name, n.Labels)
						}
					}
					return checkAntiAffinity(t, prefix, five)
				},
			},
			{
				Config: nodePoolConfig(image, prefix, 2, tmpl1, "", "  anti_affinity = true\n"),
				Check: func(s *terraform.State) (err error) {
					if two, err = checkPool(t, s, prefix, 2); err != nil {
						return err
					}
					if err := checkAntiAffinity(t, prefix, two); err != nil {
						return err
					}
					// The two oldest stay.
					byAge := slices.Clone(five)
					slices.SortFunc(byAge, func(a, b poolMember) int {
						return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.name, b.name))
					})
					if want := memberNames(byAge[:2]); !slices.Equal(memberNames(two), sortedCopy(want)) {
						return fmt.Errorf("members %v after scaling down, want the two oldest %v", memberNames(two), want)
					}
					return checkGone(t, byAge[2:])
				},
			},
			{
				// A workload on the pool, two replicas, at most one
				// disrupted at a time; the roll must keep it available.
				PreConfig: func() {
					k := acctest.Kube(t)
					ns = createNamespace(t, k, "roll")
					ctx := context.Background()
					d := deployment("web", 2, corev1.PodSpec{
						NodeSelector: map[string]string{winpool.LabelPool: prefix},
						Tolerations:  []corev1.Toleration{osWindowsToleration},
					})
					if _, err := k.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					pdb := &policyv1.PodDisruptionBudget{
						ObjectMeta: metav1.ObjectMeta{Name: "web"},
						Spec: policyv1.PodDisruptionBudgetSpec{
							MinAvailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 1},
							Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
						},
					}
					if _, err := k.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					if err := acctest.Eventually(60*time.Second, "the budget sees 2 healthy pods", func(ctx context.Context) (bool, error) {
						p, err := k.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
						if err != nil {
							return false, err
						}
						return p.Status.CurrentHealthy == 2, fmt.Errorf("status %+v", p.Status)
					}); err != nil {
						t.Fatal(err)
					}
					sampler = sampleCapacity(t, prefix, ns, "web")
				},
				Config: nodePoolConfig(image, prefix, 2, tmpl2, secondImage(image2), "  max_surge = 1\n  max_unavailable = 0\n"),
				Check: func(s *terraform.State) (err error) {
					minNodes, minAvailable, samples := sampler.finish()
					if rolled, err = checkPool(t, s, prefix, 2); err != nil {
						return err
					}
					for _, m := range rolled {
						if slices.Contains(memberNames(two), m.name) {
							return fmt.Errorf("member %s was not replaced by the roll", m.name)
						}
					}
					if err := checkGone(t, two); err != nil {
						return err
					}
					// anti_affinity off: the rule is gone.
					if err := checkAntiAffinity(t, prefix, nil); err != nil {
						return err
					}
					if samples < 10 || minNodes < 2 || minAvailable < 1 {
						return fmt.Errorf("during the roll (%d samples): at least %d Ready schedulable members (want 2) and %d available pods (want 1, the budget's minAvailable)",
							samples, minNodes, minAvailable)
					}
					t.Logf("roll: %d samples, capacity never below %d Ready members, the workload never below %d available pods", samples, minNodes, minAvailable)
					return nil
				},
			},
			{
				// A member's VM destroyed outside Terraform is replaced.
				PreConfig: func() {
					c := acctest.VSphere(t)
					ref := vsphere.VMRef(rolled[0].id)
					if err := c.PowerOff(context.Background(), ref); err != nil {
						t.Fatal(err)
					}
					if err := c.Destroy(context.Background(), ref); err != nil {
						t.Fatal(err)
					}
				},
				Config: nodePoolConfig(image, prefix, 2, tmpl2, secondImage(image2), "  max_surge = 1\n  max_unavailable = 0\n"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(poolAddr, tfjsonpath.New("members")),
				}},
				Check: func(s *terraform.State) error {
					healed, err := checkPool(t, s, prefix, 2)
					if err != nil {
						return err
					}
					if slices.Contains(memberNames(healed), rolled[0].name) || !slices.Contains(memberNames(healed), rolled[1].name) {
						return fmt.Errorf("members %v: want %s replaced and %s kept", memberNames(healed), rolled[0].name, rolled[1].name)
					}
					return checkGone(t, rolled[:1])
				},
			},
			{
				// The workload goes before the destroy: its budget would
				// rightly hold the drain of the pool's last members.
				PreConfig: func() {
					k := acctest.Kube(t)
					if err := k.PolicyV1().PodDisruptionBudgets(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					if err := k.AppsV1().Deployments(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				ResourceName:  poolAddr,
				ImportState:   true,
				ImportStateId: prefix,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("%d imported states, want 1", len(states))
					}
					a := states[0].Attributes
					if a["name_prefix"] != prefix || a["replicas"] != "2" || a["members.#"] != "2" || a["ready_replicas"] != "2" {
						return fmt.Errorf("imported name_prefix %q, replicas %q, %q members, %q ready; want %s, 2, 2, 2",
							a["name_prefix"], a["replicas"], a["members.#"], a["ready_replicas"], prefix)
					}
					return nil
				},
			},
		},
	})
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// checkPoolDestroyed checks that no VM or Node of the pool is left.
func checkPoolDestroyed(t *testing.T, prefix string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		nodes, err := acctest.Kube(t).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: winpool.LabelPool + "=" + prefix})
		if err != nil {
			return err
		}
		if len(nodes.Items) > 0 {
			return fmt.Errorf("%d Nodes of pool %s left after destroy", len(nodes.Items), prefix)
		}
		if vms := poolVMs(t, prefix); len(vms) > 0 {
			return fmt.Errorf("VMs %v of pool %s left after destroy", vms, prefix)
		}
		return acctest.CheckTemplatesDestroyed(t)(s)
	}
}

// poolVMs lists the names of the VMs of the pool in vSphere.
func poolVMs(t *testing.T, prefix string) []string {
	vms, err := acctest.VSphere(t).ListVMs(context.Background(), vimtypes.ManagedObjectReference{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vm := range vms {
		if strings.HasPrefix(vm.Name, prefix+"-") {
			out = append(out, vm.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestAccNodePool_interruptedRoll stops a roll midway: the first new
// member's kubelet never turns Ready, so the apply fails at its update
// timeout with the old members still serving (max_unavailable = 0) and the
// new one's VM in the state. The next apply resumes: the unfinished member
// and the old ones are replaced, and nothing is left behind.
func TestAccNodePool_interruptedRoll(t *testing.T) {
	acctest.RequireSandbox(t, "simulated host faults (a kubelet that never turns Ready)")
	acctest.PreCheck(t)
	image := acctest.Name("img")
	prefix := fmt.Sprintf("r%d", acctest.Seq()%100000)
	const tmpl = "windows_golden_image.test.template_path"
	var old []poolMember
	var unfinished string
	t.Cleanup(func() { acctest.Sandbox.Hosts.SetDefaultFaults(winsim.Faults{}) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkPoolDestroyed(t, prefix),
		Steps: []resource.TestStep{
			{
				Config: nodePoolConfig(image, prefix, 2, tmpl, "", ""),
				Check: func(s *terraform.State) (err error) {
					old, err = checkPool(t, s, prefix, 2)
					return err
				},
			},
			{
				PreConfig: func() { acctest.Sandbox.Hosts.SetDefaultFaults(winsim.Faults{KubeletNeverReady: true}) },
				Config:    nodePoolConfig(image, prefix, 2, tmpl, "", "  num_cpus = 4\n  timeouts {\n    update = \"60s\"\n  }\n"),
				ExpectError: acctest.Wrapped(`(?s)updating Windows node pool \(` + prefix + `\).*creating member ` + prefix +
					`-[a-z0-9]{5}: .*Every member whose VM exists is in the state; the next apply resumes from there`),
			},
			{
				PreConfig: func() {
					acctest.Sandbox.Hosts.SetDefaultFaults(winsim.Faults{})
					vms := poolVMs(t, prefix)
					if len(vms) != 3 {
						t.Fatalf("after the interrupted roll, VMs %v: want the 2 old members and the unfinished new one", vms)
					}
					for _, vm := range vms {
						if !slices.Contains(memberNames(old), vm) {
							unfinished = vm
						}
					}
					for _, m := range old {
						if err := acctest.CheckNodeReady(t, m.name); err != nil {
							t.Fatalf("an old member stopped serving during the interrupted roll: %v", err)
						}
					}
				},
				Config: nodePoolConfig(image, prefix, 2, tmpl, "", "  num_cpus = 4\n"),
				Check: func(s *terraform.State) error {
					rolled, err := checkPool(t, s, prefix, 2)
					if err != nil {
						return err
					}
					if slices.Contains(memberNames(rolled), unfinished) {
						return fmt.Errorf("the unfinished member %s was kept", unfinished)
					}
					if err := checkGone(t, old); err != nil {
						return err
					}
					if vms := poolVMs(t, prefix); !slices.Equal(vms, memberNames(rolled)) {
						return fmt.Errorf("VMs %v left, want exactly the members %v", vms, memberNames(rolled))
					}
					return nil
				},
			},
		},
	})
}
