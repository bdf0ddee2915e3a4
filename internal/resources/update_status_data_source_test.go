package resources_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccUpdateStatus_behindNextMonthsImage: a node made from this month's
// image (SSU and LCU), measured against next month's image (the same and
// next month's LCU) built beside it, is behind by that LCU, with the
// revision its kubelet reports; against its own image it is current. A
// template this provider did not build is refused, naming the fix.
func TestAccUpdateStatus_behindNextMonthsImage(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages, with their stated KBs and builds")
	image, next, node := acctest.Name("win-month"), acctest.Name("win-next"), fmt.Sprintf("win-%d", acctest.Seq())
	u := acctest.Sandbox.Artifacts.Updates
	config := strings.Replace(acctest.NodeConfig(image, []string{node}, ""), acctest.GoldenImageConfig(image, nil),
		acctest.GoldenImageConfig(image, map[string]string{"windows_updates": windowsUpdatesHCL(u.SSU2022, u.LCU2022)}), 1)
	nextImage := acctest.GoldenImageConfig(next, map[string]string{"windows_updates": windowsUpdatesHCL(u.SSU2022, u.LCU2022, u.LCU2022Next)})
	// The second image without its own copy of the variable.
	nextImage = strings.Replace(nextImage[strings.Index(nextImage, "resource "):],
		`resource "windows_golden_image" "test"`, `resource "windows_golden_image" "next"`, 1)
	config += nextImage + fmt.Sprintf(`
data "windows_update_status" "next" {
  image       = windows_golden_image.next.template_id
  name_prefix = %[1]q
  depends_on  = [windows_node.n0]
}

data "windows_update_status" "current" {
  image       = windows_golden_image.test.template_path
  name_prefix = %[1]q
  depends_on  = [windows_node.n0]
}
`, node)
	month := fmt.Sprintf("%s.%d", u.LCU2022.Build, u.LCU2022.UBR)
	nextMonth := fmt.Sprintf("%s.%d", u.LCU2022Next.Build, u.LCU2022Next.UBR)
	kbs := func(ks ...string) knownvalue.Check {
		checks := []knownvalue.Check{}
		for _, k := range ks {
			checks = append(checks, knownvalue.StringExact(k))
		}
		return knownvalue.ListExact(checks)
	}
	nodeStatus := func(status, build string, updates, missing knownvalue.Check) knownvalue.Check {
		return knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectExact(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(node), "vm_id": knownvalue.StringRegexp(regexp.MustCompile(`^vm-\d+$`)),
			"status": knownvalue.StringExact(status), "windows_build_full": knownvalue.StringExact(build),
			"updates": updates, "missing_updates": missing,
		})})
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.windows_update_status.next", tfjsonpath.New("image_build_full"), knownvalue.StringExact(nextMonth)),
					statecheck.ExpectKnownValue("data.windows_update_status.next", tfjsonpath.New("image_updates"),
						kbs(u.SSU2022.KB, u.LCU2022.KB, u.LCU2022Next.KB)),
					statecheck.ExpectKnownValue("data.windows_update_status.next", tfjsonpath.New("nodes"),
						nodeStatus("behind", month, kbs(u.SSU2022.KB, u.LCU2022.KB), kbs(u.LCU2022Next.KB))),
					statecheck.ExpectKnownValue("data.windows_update_status.next", tfjsonpath.New("behind_nodes"), kbs(node)),
					statecheck.ExpectKnownValue("data.windows_update_status.current", tfjsonpath.New("nodes"),
						nodeStatus("current", month, kbs(u.SSU2022.KB, u.LCU2022.KB), kbs())),
					statecheck.ExpectKnownValue("data.windows_update_status.current", tfjsonpath.New("behind_nodes"), kbs()),
				},
			},
			{
				// The stock base template records neither build nor updates.
				Config: config + fmt.Sprintf(`
data "windows_update_status" "stock" {
  image = %q
}
`, os.Getenv("SANDBOX_TEMPLATE_2022")),
				ExpectError: acctest.Wrapped(`(?s)Not a golden image.*records no Windows build: it was not built by windows_golden_image`),
			},
		},
	})
}
