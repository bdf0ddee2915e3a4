package resources_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccNode_disappears destroys the VM outside Terraform: the refresh
// drops the node from the state and the next apply creates it again (a new
// VM, the same Node name, Ready).
func TestAccNode_disappears(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("gone")
	const addr = "windows_node.n0"
	config := acctest.NodeConfig(image, []string{node}, "")
	var oldID string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					oldID = s.RootModule().Resources[addr].Primary.ID
					c := acctest.VSphere(t)
					if err := c.PowerOff(context.Background(), vsphere.VMRef(oldID)); err != nil {
						return err
					}
					return c.Destroy(context.Background(), vsphere.VMRef(oldID))
				},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					rs := s.RootModule().Resources[addr]
					if rs.Primary.ID == oldID {
						return fmt.Errorf("the VM id %s did not change", oldID)
					}
					if id, err := acctest.VMAt(t, node); err != nil || id != rs.Primary.ID {
						return fmt.Errorf("VM at the node's path: %q (err %v), state %q", id, err, rs.Primary.ID)
					}
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if n.Spec.ProviderID != rs.Primary.Attributes["provider_id"] {
						return fmt.Errorf("providerID %q, want the new VM's %q", n.Spec.ProviderID, rs.Primary.Attributes["provider_id"])
					}
					return acctest.CheckNodeReady(t, node)
				},
			},
		},
	})
}

// TestAccNode_nodeDeleted deletes the Node outside Terraform while the VM
// lives: the plan updates the node (joined false -> true) and the apply
// joins it again, on the same VM.
func TestAccNode_nodeDeleted(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("rejoin")
	const addr = "windows_node.n0"
	config := acctest.NodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "web" }`)
	var vmID string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					vmID = s.RootModule().Resources[addr].Primary.ID
					return acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
				},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("joined"), knownvalue.Bool(true)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("joined"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					rs := s.RootModule().Resources[addr]
					if rs.Primary.ID != vmID {
						return fmt.Errorf("the VM was replaced (%s, was %s)", rs.Primary.ID, vmID)
					}
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if n.Spec.ProviderID != rs.Primary.Attributes["provider_id"] || n.Labels["example.com/pool"] != "web" ||
						!hasTaint(n, "os", "windows", "NoSchedule") {
						return fmt.Errorf("re-joined Node: providerID %q, labels %v, taints %v", n.Spec.ProviderID, n.Labels, n.Spec.Taints)
					}
					return acctest.CheckNodeReady(t, node)
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}
