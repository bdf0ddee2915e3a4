package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// nodeImportIgnore are the inputs an import cannot read back: secrets,
// the connection, the template the VM was cloned from (vCenter does not
// record it), placement the VM does not say it was given, the labels this
// resource owned (a Node's labels do not say who set them), timeouts.
var nodeImportIgnore = []string{
	"admin_password_wo", "admin_password_wo_version", "template", "network_id", "datastore_id",
	"transport", "transport.%", "transport.port", "transport.ca_certificate",
	"labels", "labels.%", "labels.example.com/pool", "timeouts",
}

// TestAccNode_import imports a node by its VM's inventory path and by its
// instance UUID; the imported state matches the created one except for the
// inputs above, and a plan after the import updates the node in place (it
// records the template and the owned labels) instead of replacing it.
func TestAccNode_import(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := nodeName("imp")
	const addr = "windows_node.n0"
	config := nodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "web" }`)
	attr := func(name string) resource.ImportStateIdFunc {
		return func(s *terraform.State) (string, error) {
			rs, ok := s.RootModule().Resources[addr]
			if !ok {
				return "", fmt.Errorf("%s not in the state", addr)
			}
			return rs.Primary.Attributes[name], nil
		}
	}
	var uuid string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNodesDestroyed(t),
		Steps: []resource.TestStep{
			{Config: config, Check: func(s *terraform.State) error {
				uuid = s.RootModule().Resources[addr].Primary.Attributes["instance_uuid"]
				return nil
			}},
			{
				Config: config, ResourceName: addr, ImportState: true, ImportStateIdFunc: attr("vm_path"),
				ImportStateVerify: true, ImportStateVerifyIgnore: nodeImportIgnore,
			},
			{
				Config: config, ResourceName: addr, ImportState: true, ImportStateIdFunc: attr("instance_uuid"),
				ImportStateVerify: true, ImportStateVerifyIgnore: nodeImportIgnore,
			},
			{
				// Forget the node without destroying it...
				Config: goldenImageConfig(image, nil) + `
removed {
  from = windows_node.n0
  lifecycle {
    destroy = false
  }
}
`,
			},
			{
				// ...import it into the state for real, then plan: an in-place
				// update, never a replacement of a working node.
				Config: config, ResourceName: addr, ImportState: true, ImportStateIdFunc: func(*terraform.State) (string, error) { return uuid, nil },
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
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
