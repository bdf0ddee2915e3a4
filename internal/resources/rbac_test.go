package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccRBAC_installOnceNeedsAdmin applies windows_runtime_class with the
// everyday identity (the default provider configuration: KUBECONFIG, the
// ServiceAccount bound by examples/rbac), not the administrator's its docs
// name: the API server refuses the create, and the diagnostic names the
// verb, the resource and the fix (a provider configuration of an
// administrator, by alias), not a role to bind. The rest of the suite
// applies it with the admin alias, which proves that works.
func TestAccRBAC_installOnceNeedsAdmin(t *testing.T) {
	acctest.PreCheck(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  name            = %q
  windows_version = "2022"
}`, acctest.Name("win-rbac")),
			ExpectError: regexp.MustCompile(`(?s)cannot\s+create\s+resource\s+"runtimeclasses".*` +
				`installed\s+once\s+per\s+cluster.*alias\s+=\s+"admin".*provider\s+=\s+windows\.admin`),
		}},
	})
}
