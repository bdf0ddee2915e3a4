package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccRBAC_missingVerb runs the provider with the documented role minus
// `create` on RuntimeClasses: the create fails with a diagnostic that names
// the verb, the resource and the role to bind (the whole suite runs with
// the full role, which proves it suffices).
func TestAccRBAC_missingVerb(t *testing.T) {
	acctest.PreCheck(t)
	kubeconfig := acctest.KubeconfigWithout(t, "tpw-no-runtimeclass-create", "node.k8s.io", "runtimeclasses", "create")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "windows" {
  kubernetes { config_path = %q }
}

resource "windows_runtime_class" "test" {
  name            = %q
  windows_version = "2022"
}`, kubeconfig, acctest.Name("win-rbac")),
			ExpectError: regexp.MustCompile(`(?s)cannot\s+create\s+resource\s+"runtimeclasses".*` +
				`lacks\s+this\s+permission.*examples/rbac/terraform-provider-windows\.yaml`),
		}},
	})
}
