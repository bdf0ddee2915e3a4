package resources_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
)

// TestAccNode_probeOnRefresh: with probe_on_refresh a refresh probes the
// node's network again: healthy while it works; after the node's load
// balancer for the cluster DNS goes stale (its agents still Running and
// Ready, so only the probe can tell), the refresh reports the node
// unhealthy with the probe's failure among its causes.
func TestAccNode_probeOnRefresh(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' HNS load balancers")
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "pr")
	image := acctest.Name("img-pr")
	node := fmt.Sprintf("pr-%d", acctest.Seq())
	config := flannelNodeConfig(ns, image, []string{node}, "  probe_on_refresh = true\n")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{Config: config},
			{
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr("windows_node.n0", "health.status", "healthy"),
			},
			{
				PreConfig: func() {
					h := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
					if h == nil {
						t.Fatalf("no simulated host for %s", node)
					}
					if _, _, err := kubeletsim.MakeLoadBalancerStale(h, controlplane.DNSServiceIP, 53, "TCP"); err != nil {
						t.Fatal(err)
					}
				},
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("windows_node.n0", "health.status", "unhealthy"),
					resource.TestMatchResourceAttr("windows_node.n0", "health.causes.0", regexp.MustCompile(`^network probe: cluster DNS and ClusterIP Service .* failed`)),
				),
			},
		},
	})
}
