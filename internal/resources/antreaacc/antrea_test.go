package antreaacc_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

const networkingAddress = "windows_node_networking.test"

// setAgentConf writes the cluster's antrea-agent.conf (ConfigMap
// kube-system/antrea-config), as an administrator editing antrea.yml's
// configuration would.
func setAgentConf(t *testing.T, a linuxnode.Antrea) {
	t.Helper()
	k := acctest.Kube(t)
	cm, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Get(context.Background(), linuxnode.AntreaConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["antrea-agent.conf"] = a.AgentConf()
	if _, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAccAntrea_nodeJoins: the quickstart's shape with cni = "antrea" on a
// cluster running Antrea's Linux side. First a plan against the cluster set
// to trafficEncapMode networkPolicyOnly, which Antrea's Windows agent
// refuses to start with, is refused naming the setting. Then, the setting
// put back, the golden image, windows_node_networking installing
// antrea-agent-windows and a node that joins: its antrea-host-setup step
// installs the Hyper-V PowerShell module and sets TESTSIGNING (one
// restart), the DaemonSet's init container installs the image's
// test-signed OVS driver with netcfg, antrea-agent builds the node's
// network, and the network probe passes (DNS on the Linux node's CoreDNS
// pod through Antrea's tunnel route, a Service, its NodePort).
func TestAccAntrea_nodeJoins(t *testing.T) {
	acctest.RequireSandbox(t, "a cluster running Antrea")
	ns := acctest.Namespace(t, "antnet")
	node := acctest.NodeName("want")
	config := acctest.NetworkingConfig(ns, "antrea", "  allow_destroy_with_nodes = true\n") +
		acctest.NodeConfigWithout(acctest.Name("antimg"), []string{node}, "  networking_id = windows_node_networking.test.id\n")
	t.Cleanup(func() { setAgentConf(t, linuxnode.Antrea{}) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig:   func() { setAgentConf(t, linuxnode.Antrea{TrafficEncapMode: "networkPolicyOnly"}) },
			Config:      acctest.NetworkingConfig(ns, "antrea", ""),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)trafficEncapMode: networkPolicyOnly.*unsupported features on\s+Windows`),
		}, {
			PreConfig: func() { setAgentConf(t, linuxnode.Antrea{}) },
			Config:    config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("antrea").AtMapKey("traffic_encap_mode"), knownvalue.StringExact("encap")),
				statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("antrea").AtMapKey("version"), knownvalue.StringExact(linuxnode.AntreaVersion)),
			},
			Check: func(*terraform.State) error {
				return checkAntreaNode(t, ns, node, func(route string) bool { return route == "antrea-tun0" })
			},
		}},
	})
}

// checkAntreaNode: the node is Ready with its antrea agents Running and
// Ready, its host has what antrea-host-setup gives it, the image's OVS
// driver is installed and enabled on the agent's Transparent HNS network
// over the node's pod CIDR, with the bridge, and the route to the Linux
// node's pod CIDR is one route accepts (the tunnel in encap, the Linux
// node's MAC in noEncap).
func checkAntreaNode(t *testing.T, ns, node string, route func(string) bool) error {
	if err := acctest.CheckNodeReady(t, node); err != nil {
		return err
	}
	mode, _ := networking.Lookup("antrea")
	if err := acctest.CheckAgentsReady(t, mode, ns, node); err != nil {
		return err
	}
	n, err := acctest.Kube(t).CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	h := acctest.Sandbox.Hosts.ByName(acctest.ComputerNameOf(node))
	if h == nil {
		return fmt.Errorf("no simulated host for %s", node)
	}
	if !h.TestSigning() || !h.FeatureInstalled("Hyper-V-PowerShell") {
		return fmt.Errorf("host setup: TESTSIGNING %v, Hyper-V-PowerShell %v", h.TestSigning(), h.FeatureInstalled("Hyper-V-PowerShell"))
	}
	ovs := winsim.ReadOVS(h)
	if !ovs.ExtensionInstalled || ovs.ExtensionEnabledOn != networking.AntreaNetworkName || !ovs.HasBridge(networking.AntreaBridge) {
		return fmt.Errorf("Open vSwitch on %s: %+v", node, ovs)
	}
	if got := ovs.Routes[linuxnode.PodCIDR]; !route(got) {
		return fmt.Errorf("route to the Linux node's pod CIDR %s is %q: %+v", linuxnode.PodCIDR, got, ovs.Routes)
	}
	for _, net := range winsim.HNSNetworks(h) {
		if net.Name == networking.AntreaNetworkName {
			if net.Type != "Transparent" || net.AddressPrefix != n.Spec.PodCIDR {
				return fmt.Errorf("HNS network %+v, want Transparent over %s", net, n.Spec.PodCIDR)
			}
			return nil
		}
	}
	return fmt.Errorf("no HNS network %s on %s: %+v", networking.AntreaNetworkName, node, winsim.HNSNetworks(h))
}

// TestAccAntrea_noEncap: with the cluster's Antrea switched to noEncap (the
// Linux agents restarted, so the Linux node reports its MAC), the
// antrea mode follows it: traffic_encap_mode is noEncap, the Windows
// agents' antrea-agent.conf says so, the node's route to the Linux node's
// pod CIDR goes to that node's MAC instead of the tunnel, and the probe
// passes.
func TestAccAntrea_noEncap(t *testing.T) {
	acctest.RequireSandbox(t, "a cluster running Antrea")
	ns := acctest.Namespace(t, "antnoe")
	node := acctest.NodeName("wnoe")
	config := acctest.NetworkingConfig(ns, "antrea", "  allow_destroy_with_nodes = true\n") +
		acctest.NodeConfigWithout(acctest.Name("antnimg"), []string{node}, "  networking_id = windows_node_networking.test.id\n")
	restart := func() {
		if err := acctest.Sandbox.LinuxNode.RestartAntreaAgent(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { setAgentConf(t, linuxnode.Antrea{}); restart() })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { setAgentConf(t, linuxnode.Antrea{TrafficEncapMode: "noEncap"}); restart() },
			Config:    config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("antrea").AtMapKey("traffic_encap_mode"), knownvalue.StringExact("noEncap")),
			},
			Check: func(*terraform.State) error {
				cm, err := acctest.Kube(t).CoreV1().ConfigMaps(ns).Get(context.Background(), "antrea-agent-windows", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !strings.Contains(cm.Data["antrea-agent.conf"], "trafficEncapMode: noEncap\n") {
					return fmt.Errorf("the Windows agents' antrea-agent.conf:\n%s", cm.Data["antrea-agent.conf"])
				}
				return checkAntreaNode(t, ns, node, func(route string) bool { return route != "" && route != "antrea-tun0" })
			},
		}},
	})
}

// TestAccAntrea_quickstart: examples/quickstart with cni = "antrea" joins
// its two nodes, seed 000's IIS workload is reached through its Service
// from a Linux pod and a Windows pod, destroy leaves nothing
// (acctest.Quickstart; antrea's agents run the antrea-windows image, so
// there is no host_process_image to roll).
func TestAccAntrea_quickstart(t *testing.T) { acctest.Quickstart(t, "antrea") }
