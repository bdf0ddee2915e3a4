package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// flannelNodeConfig is a flannel windows_node_networking in namespace ns, a
// golden image (with flanneld and the flannel CNI plugin, as every test
// image has) and nodes referencing the networking.
func flannelNodeConfig(ns, image string, nodes []string, body string) string {
	return acctest.NetworkingConfig(ns, "flannel", "") + acctest.NodeConfigWithout(image, nodes, "  networking_id = windows_node_networking.test.id\n"+body)
}

// checkAgentsRunning: the Node is Ready and, for every agent of the
// flannel mode, a pod of its DaemonSet in ns is Running and Ready on it.
func checkAgentsRunning(t *testing.T, ns, node string) error {
	if err := acctest.CheckNodeReady(t, node); err != nil {
		return err
	}
	pods, err := acctest.Kube(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return err
	}
	flannel, ok := networking.Lookup("flannel")
	if !ok {
		return fmt.Errorf("no flannel networking mode registered")
	}
	for _, a := range flannel.Agents() {
		var found *corev1.Pod
		for i := range pods.Items {
			if strings.HasPrefix(pods.Items[i].Name, a.DaemonSet+"-") {
				found = &pods.Items[i]
			}
		}
		if found == nil {
			return fmt.Errorf("no %s pod (DaemonSet %s/%s) on node %s", a.Name, ns, a.DaemonSet, node)
		}
		if !kube.PodRunningAndReady(found) {
			return fmt.Errorf("%s", kube.AgentStatus{Agent: a, Pod: found}.Describe())
		}
	}
	return nil
}

// TestAccNode_flannel: with a flannel windows_node_networking, a node joins
// with the flannel CNI configuration (win-overlay on flannel.4096, the
// portMappings and dns capabilities, the service CIDR routed through the
// overlay), the kubelet as a service under kube-log-runner that depends on
// containerd, no flanneld or kube-proxy Windows service, and create returns
// only once its kube-proxy and flannel pods are Running and Ready on it.
func TestAccNode_flannel(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' CNI and flanneld")
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "fl")
	image := acctest.Name("img-fl")
	node := fmt.Sprintf("fl-%d", acctest.Seq())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: flannelNodeConfig(ns, image, []string{node}, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("cni"), knownvalue.StringExact("flannel")),
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("ready"), knownvalue.Bool(true)),
			},
			Check: func(*terraform.State) error {
				if err := checkAgentsRunning(t, ns, node); err != nil {
					return err
				}
				host := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
				if host == nil {
					return fmt.Errorf("no simulated host for %s", node)
				}
				conf, err := os.ReadFile(host.DiskPath(`C:\etc\cni\net.d\10-flannel.conflist`))
				if err != nil {
					return err
				}
				var list struct {
					Name    string `json:"name"`
					Plugins []struct {
						Type         string          `json:"type"`
						Capabilities map[string]bool `json:"capabilities"`
						Delegate     struct {
							Type     string            `json:"type"`
							Policies []json.RawMessage `json:"policies"`
						} `json:"delegate"`
					} `json:"plugins"`
				}
				if err := json.Unmarshal(conf, &list); err != nil {
					return fmt.Errorf("10-flannel.conflist: %v\n%s", err, conf)
				}
				p := list.Plugins[0]
				if list.Name != "flannel.4096" || p.Type != "flannel" || p.Delegate.Type != "win-overlay" ||
					!p.Capabilities["portMappings"] || !p.Capabilities["dns"] || len(p.Delegate.Policies) != 2 ||
					!strings.Contains(string(conf), `"NeedEncap": true`) {
					return fmt.Errorf("10-flannel.conflist is not flannel over win-overlay with capabilities and the service route:\n%s", conf)
				}
				for _, exe := range []string{`C:\opt\cni\bin\flannel.exe`, `C:\opt\cni\bin\win-overlay.exe`, `C:\opt\cni\bin\host-local.exe`,
					`C:\k\flanneld.exe`, `C:\k\kube-log-runner.exe`} {
					if _, err := os.Stat(host.DiskPath(exe)); err != nil {
						return fmt.Errorf("the image did not install %s: %v", exe, err)
					}
				}
				kubelet, ok := host.Service("kubelet")
				if !ok || kubelet.Status != "Running" || !strings.HasPrefix(kubelet.BinaryPathName, `C:\k\kube-log-runner.exe --log-file=C:\var\log\kubelet\kubelet.log`) {
					return fmt.Errorf("kubelet service = %+v, want Running under kube-log-runner", kubelet)
				}
				for _, legacy := range []string{"flanneld", "kube-proxy"} {
					if s, ok := host.Service(legacy); ok {
						return fmt.Errorf("a %s Windows service exists (%+v): the agents run as HostProcess pods", legacy, s)
					}
				}
				return nil
			},
		}},
	})
}

// TestAccNode_networkingAdded: a node joined without networking gets a
// flannel windows_node_networking later (the upgrade path of a node of the
// earlier design): the apply joins it again in place, no replacement, and
// its agents run.
func TestAccNode_networkingAdded(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' CNI and flanneld")
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "fladd")
	image := acctest.Name("img-fa")
	node := fmt.Sprintf("fa-%d", acctest.Seq())
	// Without networking the node is a cni = "none" node: it turns Ready
	// once the cluster's CNI configures it (played here), until flannel
	// replaces that CNI in the second step.
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go playClusterCNI(ctx, strings.ToUpper(node))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.NetworkingConfig(ns, "flannel", "") + acctest.NodeConfigWithout(image, []string{node}, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("cni"), knownvalue.StringExact("none")),
				},
			},
			{
				PreConfig: func() { removeClusterCNI(t, strings.ToUpper(node)) },
				Config:    flannelNodeConfig(ns, image, []string{node}, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("windows_node.n0", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("cni"), knownvalue.StringExact("flannel")),
				},
				// The rejoin restarts the kubelet, which adopts the agents
				// still running (their containers outlive it, as on
				// Windows); the agents are awaited here (a watch) rather
				// than checked at once, as the provider's own wait does.
				Check: func(*terraform.State) error {
					flannel, _ := networking.Lookup("flannel")
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					_, err := acctest.Kube(t).WaitForAgentsReady(ctx, node, ns, flannel.Agents())
					return err
				},
			},
		},
	})
}

// TestAccNode_noneNetworking: with cni = "none" the join writes no CNI
// configuration and the node waits for no agent; the node turns Ready once
// the cluster's own CNI has configured it, which the test plays: as soon as
// the host boots it writes a win-bridge configuration as Calico's or
// Antrea's installer would.
func TestAccNode_noneNetworking(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' CNI and flanneld")
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "none")
	image := acctest.Name("img-nn")
	node := fmt.Sprintf("nn-%d", acctest.Seq())
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go playClusterCNI(ctx, strings.ToUpper(node))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.NetworkingConfig(ns, "none", "") + acctest.NodeConfigWithout(image, []string{node}, "  networking_id = windows_node_networking.test.id\n"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("cni"), knownvalue.StringExact("none")),
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("ready"), knownvalue.Bool(true)),
			},
			Check: func(*terraform.State) error {
				host := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
				if host == nil {
					return fmt.Errorf("no simulated host for %s", node)
				}
				if _, err := os.Stat(host.DiskPath(`C:\etc\cni\net.d\10-flannel.conflist`)); err == nil {
					return fmt.Errorf("the join wrote a flannel CNI configuration on a cni = \"none\" node")
				}
				return acctest.CheckNodeReady(t, node)
			},
		}},
	})
}

// clusterCNIConf is where playClusterCNI writes the cluster CNI's network.
const clusterCNIConf = `C:\etc\cni\net.d\10-cluster-cni.conflist`

// removeClusterCNI uninstalls the played cluster CNI's configuration.
func removeClusterCNI(t *testing.T, computer string) {
	t.Helper()
	h := acctest.Sandbox.Hosts.ByName(computer)
	if h == nil {
		t.Fatalf("no simulated host %s", computer)
	}
	if err := os.Remove(h.DiskPath(clusterCNIConf)); err != nil {
		t.Fatal(err)
	}
}

// playClusterCNI waits for the host to boot and writes the CNI
// configuration a cluster CNI's Windows installer writes.
func playClusterCNI(ctx context.Context, computer string) {
	conf := []byte(`{"cniVersion":"0.3.0","name":"cluster-cni","plugins":[{"type":"win-bridge","capabilities":{"portMappings":true,"dns":true}}]}`)
	for ctx.Err() == nil {
		if h := acctest.Sandbox.Hosts.ByName(computer); h != nil {
			if err := h.WriteFile(clusterCNIConf, conf); err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
