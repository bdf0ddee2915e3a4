package functions_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// The function runs in the real Terraform CLI; it needs no cluster, so these
// are unit tests (no sandbox).
func TestBuildNumber(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "ltsc2019" { value = provider::windows::build_number("2019") }
output "ltsc2022" { value = provider::windows::build_number("LTSC2022") }
output "ltsc2025" { value = provider::windows::build_number("2025") }`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("ltsc2019", knownvalue.StringExact("10.0.17763")),
				statecheck.ExpectKnownOutputValue("ltsc2022", knownvalue.StringExact("10.0.20348")),
				statecheck.ExpectKnownOutputValue("ltsc2025", knownvalue.StringExact("10.0.26100")),
			},
		}},
	})
}

func TestBuildNumberUnknownVersion(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `output "x" { value = provider::windows::build_number("2016") }`,
			ExpectError: regexp.MustCompile(`(?s)unknown Windows Server version "2016".*2019, 2022, 2025`),
		}},
	})
}
