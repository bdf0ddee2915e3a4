package calicoacc_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

const networkingAddress = "windows_node_networking.test"

// TestAccCalico_ipipOnlyRefused: a plan of windows_node_networking with
// cni = "calico" against a cluster whose only IP pool is IP-in-IP is
// refused, naming ipipMode and what to set.
func TestAccCalico_ipipOnlyRefused(t *testing.T) {
	acctest.RequireSandbox(t, "a cluster running Calico whose IP pool is changed behind Terraform's back")
	ns := acctest.Namespace(t, "calipip")
	dyn, err := dynamic.NewForConfig(acctest.Sandbox.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	setPool := func(spec string) {
		if _, err := dyn.Resource(linuxnode.CalicoGVR("ippools")).Patch(context.Background(), linuxnode.CalicoPoolName, types.MergePatchType,
			[]byte(`{"spec": `+spec+`}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { setPool(`{"vxlanMode": "Always", "ipipMode": "Never"}`) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig:   func() { setPool(`{"vxlanMode": "Never", "ipipMode": "Always"}`) },
			Config:      acctest.NetworkingConfig(ns, "calico", ""),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)cannot carry Windows nodes.*ipipMode Always.*set ipipMode: Never and\s+vxlanMode: Always`),
		}},
	})
}

// TestAccCalico_nodeJoins: the quickstart's shape with cni = "calico": the
// golden image with Calico's Windows programs, windows_node_networking
// installing calico-node-windows and kube-proxy, and a node that joins,
// whose agents run and whose network probe passes (DNS on the Linux node's
// CoreDNS pod through Felix's route, a Service, its NodePort).
func TestAccCalico_nodeJoins(t *testing.T) {
	acctest.RequireSandbox(t, "a cluster running Calico")
	ns := acctest.Namespace(t, "calnet")
	node := acctest.NodeName("wcal")
	config := acctest.NetworkingConfig(ns, "calico", "  allow_destroy_with_nodes = true\n") +
		acctest.NodeConfigWithout(acctest.Name("calimg"), []string{node}, "  networking_id = windows_node_networking.test.id\n")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("calico").AtMapKey("vni"), knownvalue.Int64Exact(4096)),
				statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("calico").AtMapKey("port"), knownvalue.Int64Exact(4789)),
			},
			Check: func(*terraform.State) error {
				if err := acctest.CheckNodeReady(t, node); err != nil {
					return err
				}
				mode, _ := networking.Lookup("calico")
				if err := acctest.CheckAgentsReady(t, mode, ns, node); err != nil {
					return err
				}
				// The node's block, claimed in Calico's datastore.
				dyn, err := dynamic.NewForConfig(acctest.Sandbox.ControlPlane.Config)
				if err != nil {
					return err
				}
				affs, err := dyn.Resource(linuxnode.CalicoGVR("blockaffinities")).List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return err
				}
				var block string
				for _, a := range affs.Items {
					if spec, _ := a.Object["spec"].(map[string]any); spec["node"] == node && spec["state"] == "confirmed" {
						block, _ = spec["cidr"].(string)
					}
				}
				if block == "" {
					return fmt.Errorf("no confirmed BlockAffinity of %s among %d", node, len(affs.Items))
				}
				// The host's Calico network over that block, with Felix's
				// route to the Linux node's block (the probe's DNS pod is
				// there: the create counted only once the probe passed).
				h := acctest.Sandbox.Hosts.ByName(acctest.ComputerNameOf(node))
				if h == nil {
					return fmt.Errorf("no simulated host for %s", node)
				}
				for _, n := range winsim.HNSNetworks(h) {
					if n.Name != "Calico" {
						continue
					}
					if n.Type != "Overlay" || n.AddressPrefix != block || n.VNI != 4096 {
						return fmt.Errorf("HNS network %+v, want Overlay over %s with VNI 4096", n, block)
					}
					for _, p := range n.Policies {
						if p.Type == "RemoteSubnetRoute" && p.DestinationPrefix == linuxnode.CalicoBlock {
							return nil
						}
					}
					return fmt.Errorf("HNS network Calico has no route to %s: %+v", linuxnode.CalicoBlock, n.Policies)
				}
				return fmt.Errorf("no HNS network Calico on %s: %+v", node, winsim.HNSNetworks(h))
			},
		}},
	})
}

// TestAccCalico_quickstart: examples/quickstart with cni = "calico" joins
// its two nodes, seed 000's IIS workload is reached through its Service
// from a Linux pod and a Windows pod, destroy leaves nothing
// (acctest.Quickstart).
func TestAccCalico_quickstart(t *testing.T) { acctest.Quickstart(t, "calico") }
