package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccGoldenImage_onlineUpdates builds a Windows Server 2022 image with
// updates the Windows Update Agent finds on the site's WSUS (the sandbox's
// update service): Security Updates and Updates, KB5070014 excluded, the
// Critical Updates one not asked for. The first round installs the
// servicing stack update (the cumulative update applies only once it is
// installed), the second the month's cumulative update, which restarts the
// guest; the round after the restart finds nothing. The superseded LCU is
// not offered. The KBs, their sizes and the higher UBR are read back.
func TestAccGoldenImage_onlineUpdates(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "the sandbox's update service")
	u := acctest.Sandbox.Artifacts.Updates
	image := acctest.Name("win-online")
	online := fmt.Sprintf(`{
    categories  = ["Security Updates", "Updates"]
    exclude_kbs = [%q]
    wsus_server = %q
  }`, artifacts.NET2022.KB, u.ServiceURL)
	wantFull := fmt.Sprintf("%s.%d", u.LCU2022Next.Build, u.LCU2022Next.UBR)
	size := func(kb string) int64 {
		for _, e := range u.Catalog {
			if e.KB == kb {
				return e.Size
			}
		}
		t.Fatalf("%s is not in the catalog", kb)
		return 0
	}
	var start time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t); start = time.Now() },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.GoldenImageConfig(image, map[string]string{"online_updates": online}),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("installed_updates"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(u.SSU2022.KB), knownvalue.StringExact(u.LCU2022Next.KB)})),
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build_full"), knownvalue.StringExact(wantFull)),
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("manifest"), knownvalue.StringRegexp(regexp.MustCompile(
					fmt.Sprintf(`\{"name":"KB5070010","kind":"windows-update","source":%q,"size":%d,"title":"Servicing Stack Update[^"]*"\},`+
						`\{"name":"KB5072011","kind":"windows-update","source":%q,"size":%d,"title":"Cumulative Update[^"]*"\}\]$`,
						u.ServiceURL, size("KB5070010"), u.ServiceURL, size("KB5072011"))))),
			},
			Check: func(*terraform.State) error {
				t.Logf("image with online updates: %s", time.Since(start).Round(time.Second))
				// The online step ran twice: before the LCU's restart and
				// after it (finding nothing).
				log, err := os.ReadFile(filepath.Join(acctest.Sandbox.Hosts.Dir, acctest.ComputerNameOf(image), "scripts.log"))
				if err != nil {
					return err
				}
				if n := strings.Count(string(log), "step: windows-update-online"); n != 2 {
					return fmt.Errorf("the online step ran %d times, want 2 (before and after the restart)", n)
				}
				return nil
			},
		}},
	})
}

// TestAccGoldenImage_onlineUpdatesUnreachable: without a WSUS the agent
// asks Windows Update, which the sandbox's guests cannot reach; the build
// fails naming the HRESULT and its meaning, and no VM is left behind.
func TestAccGoldenImage_onlineUpdatesUnreachable(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "a guest with no route to Windows Update")
	vmName := acctest.Name("win-wu-down")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.GoldenImageConfig(vmName, map[string]string{"online_updates": `{ categories = ["Security Updates"] }`}),
			ExpectError: regexp.MustCompile(`(?s)image step "windows-update-online".*Windows Update failed: Exception calling "Search".*` +
				`0x8024402C.*WU_E_PT_WINHTTP_NAME_NOT_RESOLVED: the proxy or update server name cannot be resolved`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), "/DC0/vm/golden/"+vmName); !vsphere.IsNotFound(err) {
				return fmt.Errorf("the build VM %s was left behind (err %v)", vmName, err)
			}
			return nil
		},
	})
}

// TestAccGoldenImage_onlineUpdatesPlan: a selection that cannot work fails
// at plan, naming the attribute; nothing is cloned.
func TestAccGoldenImage_onlineUpdatesPlan(t *testing.T) {
	acctest.PreCheck(t)
	for name, tc := range map[string]struct{ online, want string }{
		"unknown category":    {`{ categories = ["Servicing Stack"] }`, `categories\[0\]\s+value must be one of`},
		"no category":         {`{ categories = [] }`, `categories list must contain at least 1 elements`},
		"malformed kb":        {`{ categories = ["Updates"], exclude_kbs = ["5070014"] }`, `must be a KB id`},
		"included excluded":   {`{ categories = ["Updates"], include_kbs = ["KB5070014"], exclude_kbs = ["KB5070014"] }`, `KB5070014 is also in include_kbs`},
		"ftp wsus":            {`{ categories = ["Updates"], wsus_server = "ftp://wsus:8530" }`, `is not an http:// or https:// URL of a WSUS server`},
		"wsus with a path":    {`{ categories = ["Updates"], wsus_server = "http://wsus:8530/ClientWebService" }`, `has a path, query, fragment or user`},
		"categories required": {`{ exclude_kbs = ["KB5070014"] }`, `attribute "categories" is required`},
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.GoldenImageConfig(acctest.Name("win-plan"), map[string]string{"online_updates": tc.online}),
					PlanOnly:    true,
					ExpectError: acctest.Wrapped(tc.want),
				}},
			})
		})
	}
}
