package resources_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

const (
	templatePath = "windows_golden_image.test.template_path"
	templateID   = "windows_golden_image.test.template_id"
	nodeAddr     = "windows_node.n0"
)

// timeZoneNodeConfig is an image in Tokyo's zone and one node from it in
// Western Europe's, its template given as template (an expression); extra
// adds resources (a second image).
func timeZoneNodeConfig(image, node, template, extra string) string {
	config := acctest.NodeConfig(image, []string{node}, "  time_zone = \"W. Europe Standard Time\"\n") + extra
	config = strings.Replace(config, "resource \"windows_golden_image\" \"test\" {\n",
		"resource \"windows_golden_image\" \"test\" {\n  time_zone = \"Tokyo Standard Time\"\n", 1)
	return strings.Replace(config, "template          = "+templatePath, "template          = "+template, 1)
}

// TestAccNode_timeZoneAndTemplateForm: the image and the node each set the
// zone they are given, read back from the simulated guests' registry; a
// node's template given as template_id instead of template_path (the same
// VM) and back changes in place, and the VM stays; another template replaces
// the node; an IANA name is refused at plan with the Windows ID to use.
func TestAccNode_timeZoneAndTemplateForm(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "reads the simulated guests' time zone")
	image, image2, node := acctest.Name("tzimg"), acctest.Name("tzimg2"), acctest.NodeName("tz")
	var vmID string
	sameVM := func(s *terraform.State) error {
		if got := s.RootModule().Resources[nodeAddr].Primary.ID; got != vmID {
			return fmt.Errorf("node VM %s, want %s: the change of form replaced it", got, vmID)
		}
		return nil
	}
	stateTemplate := func(attr string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			want := s.RootModule().Resources[acctest.GoldenImageAddress].Primary.Attributes[attr]
			if got := s.RootModule().Resources[nodeAddr].Primary.Attributes["template"]; got != want || want == "" {
				return fmt.Errorf("node template %q, want the image's %s %q", got, attr, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				// Refused at plan, before anything is created (the destroy
				// after the last step uses the last configuration).
				Config: strings.Replace(timeZoneNodeConfig(image, node, templatePath, ""),
					`time_zone = "W. Europe Standard Time"`, `time_zone = "Europe/London"`, 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)time_zone: "Europe/London" is not a Windows time zone ID\.\s+Did you\s+mean\s+"GMT\s+Standard\s+Time"`),
			},
			{
				Config: timeZoneNodeConfig(image, node, templatePath, ""),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(acctest.GoldenImageAddress, "time_zone", "Tokyo Standard Time"),
					resource.TestCheckResourceAttr(nodeAddr, "time_zone", "W. Europe Standard Time"),
					func(s *terraform.State) error {
						vmID = s.RootModule().Resources[nodeAddr].Primary.ID
						// The template's disk: its build VM set the zone before sysprep.
						zone, err := winsim.DiskTimeZone(hostDir(acctest.ComputerNameOf(image)))
						if err != nil || zone != "Tokyo Standard Time" {
							return fmt.Errorf("the template's zone is %q (err %v), want Tokyo Standard Time", zone, err)
						}
						// The node: cloned with the template's zone, then set by its join.
						h := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
						if h == nil {
							return fmt.Errorf("no running host for %s", node)
						}
						if zone := h.TimeZone(); zone != "W. Europe Standard Time" {
							return fmt.Errorf("the node's zone is %q, want W. Europe Standard Time", zone)
						}
						return nil
					}),
			},
			{
				Config: timeZoneNodeConfig(image, node, templateID, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(sameVM, stateTemplate("template_id")),
			},
			{
				Config: timeZoneNodeConfig(image, node, templatePath, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(sameVM, stateTemplate("template_path")),
			},
			{
				// Another template: a new node.
				Config: timeZoneNodeConfig(image, node, "windows_golden_image.v2.template_id", secondImage(image2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeAddr, plancheck.ResourceActionReplace),
				}},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources[nodeAddr].Primary.ID; got == vmID {
						return fmt.Errorf("node VM %s unchanged after a change of template", got)
					}
					return nil
				},
			},
		},
	})
}

// TestAccNodePool_templateForm: a pool whose template changes form (the
// same VM) changes in place with its members kept; another template rolls
// them.
func TestAccNodePool_templateForm(t *testing.T) {
	acctest.PreCheck(t)
	image, image2 := acctest.Name("pfimg"), acctest.Name("pfimg2")
	prefix := fmt.Sprintf("f%d", acctest.Seq()%100000)
	var first []poolMember
	kept := func(s *terraform.State) error {
		ms, err := checkPool(t, s, prefix, 1)
		if err != nil {
			return err
		}
		if !slices.Equal(memberIDs(ms), memberIDs(first)) {
			return fmt.Errorf("members %v, want %v kept: the change of form rolled them", memberIDs(ms), memberIDs(first))
		}
		return nil
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(poolAddr, plancheck.ResourceActionUpdate)}}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkPoolDestroyed(t, prefix),
		Steps: []resource.TestStep{
			{
				Config: nodePoolConfig(image, prefix, 1, templatePath, "", ""),
				Check: func(s *terraform.State) (err error) {
					first, err = checkPool(t, s, prefix, 1)
					return err
				},
			},
			{Config: nodePoolConfig(image, prefix, 1, templateID, "", ""), ConfigPlanChecks: update, Check: kept},
			{Config: nodePoolConfig(image, prefix, 1, templatePath, "", ""), ConfigPlanChecks: update, Check: kept},
			{
				Config:           nodePoolConfig(image, prefix, 1, "windows_golden_image.v2.template_id", secondImage(image2), "  max_surge = 1\n  max_unavailable = 0\n"),
				ConfigPlanChecks: update,
				Check: func(s *terraform.State) error {
					ms, err := checkPool(t, s, prefix, 1)
					if err != nil {
						return err
					}
					if slices.Equal(memberIDs(ms), memberIDs(first)) {
						return fmt.Errorf("members %v kept after a change of template", memberIDs(ms))
					}
					return nil
				},
			},
		},
	})
}

func memberIDs(ms []poolMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.id)
	}
	slices.Sort(out)
	return out
}
