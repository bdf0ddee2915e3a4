package resources_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccPlan_vCenterRefusesLogin: a plan whose vCenter password is wrong
// fails at plan, before anything is approved, on the golden image and on
// the node alike, naming the setting the user set: VSPHERE_PASSWORD from
// the environment, vsphere.password from the provider block. vcsim refuses
// the login with InvalidLogin as vCenter does (internal/sandbox/vcsim,
// TestVCSim's wrong-password case); one login is tried per run.
func TestAccPlan_vCenterRefusesLogin(t *testing.T) {
	acctest.RequireSandbox(t, "a refused login counts towards a real vCenter account's lockout")
	image, node := acctest.Name("img-pw"), acctest.NodeName("pw")
	// The node from a template that exists, so that Terraform plans it
	// beside the image instead of after it.
	config := acctest.NodeConfig(image, []string{node}, "")
	config = strings.Replace(config, "windows_golden_image.test.template_path", fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2022")), 1)
	fromEnv := func(subject string) string {
		return `(?s)Cannot connect to vSphere.*Planning ` + regexp.QuoteMeta(subject) + `: vCenter \S+ rejected the login of \S+ check VSPHERE_USER and VSPHERE_PASSWORD`
	}
	planFails := func(config, want string) {
		t.Helper()
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			Steps:                    []resource.TestStep{{Config: config, PlanOnly: true, ExpectError: acctest.Wrapped(want)}},
		})
	}

	t.Setenv("VSPHERE_PASSWORD", "not-the-password")
	planFails(config, fromEnv("windows_golden_image"))
	planFails(config, fromEnv("Windows node "+node))

	// Set in the provider block, the password is named as the block's.
	provider := "provider \"windows\" {\n  vsphere {\n    password = \"not-the-password\"\n  }\n}\n"
	planFails(provider+config, `(?s)Cannot connect to vSphere.*rejected the login of \S+ check VSPHERE_USER and vsphere\.password`)
}

// TestAccPlan_vCenterFolderMissing: a folder that cannot be created (its
// datacenter does not exist) is an error at plan on the folder attribute;
// a missing folder below an existing VM folder is not (the apply creates
// it, FindFolderByPath); a datastore cluster and a storage policy vCenter
// does not have are errors at plan on their attributes.
func TestAccPlan_vCenterFolderMissing(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("img-folder")
	missing := acctest.GoldenImageConfig(name, map[string]string{"folder": `"/NoSuchDatacenter/vm/templates"`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: missing, PlanOnly: true,
			ExpectError: acctest.Wrapped(`(?s)Folder not found.*folder /NoSuchDatacenter/vm/templates not found, and it cannot be created there`),
		}},
	})
	creatable := acctest.GoldenImageConfig(name, map[string]string{"folder": fmt.Sprintf("%q", acctest.GoldenFolder+"/not-yet/"+strings.ToLower(name))})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps:                    []resource.TestStep{{Config: creatable, PlanOnly: true, ExpectNonEmptyPlan: true}},
	})
	// The image's datastore cluster and storage policy, checked beside its
	// folder (the node's: TestAccNode_site).
	storage := acctest.GoldenImageConfig(name, map[string]string{
		"datastore_id": "null", "datastore_cluster_id": `"group-p999"`, "storage_policy_id": `"0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"`})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: storage, PlanOnly: true,
			ExpectError: acctest.Wrapped(`(?s)(Datastore cluster not found.*Storage policy not found|Storage policy not found.*Datastore cluster not found)`),
		}},
	})
}
