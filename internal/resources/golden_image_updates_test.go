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
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// windowsUpdatesHCL is a windows_updates value of the mirror's packages.
func windowsUpdatesHCL(updates ...artifacts.Update) string {
	var parts []string
	for _, u := range updates {
		parts = append(parts, fmt.Sprintf("{ kb = %q, url = %q, sha256 = %q }", u.KB, u.URL, u.SHA256))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// TestAccGoldenImage_updates builds a Windows Server 2022 image with the
// month's servicing stack update (.cab, DISM, no restart) and cumulative
// update (.msu, wusa, restart), reads the KBs and the cumulative update's
// revision back, and joins a node on it whose Node reports that revision.
func TestAccGoldenImage_updates(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages, with their stated KBs and builds")
	image, node := acctest.Name("win-patched"), fmt.Sprintf("win-%d", acctest.Seq())
	u := acctest.Sandbox.Artifacts.Updates
	overrides := map[string]string{"windows_updates": windowsUpdatesHCL(u.SSU2022, u.LCU2022)}
	config := strings.Replace(acctest.NodeConfig(image, []string{node}, ""), acctest.GoldenImageConfig(image, nil), acctest.GoldenImageConfig(image, overrides), 1)
	wantFull := fmt.Sprintf("%s.%d", u.LCU2022.Build, u.LCU2022.UBR)
	var start time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t); start = time.Now() },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("installed_updates"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(u.SSU2022.KB), knownvalue.StringExact(u.LCU2022.KB)})),
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build_full"), knownvalue.StringExact(wantFull)),
				statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("manifest"),
					knownvalue.StringRegexp(regexp.MustCompile(`"name":"KB5070011","url":"`+regexp.QuoteMeta(u.LCU2022.URL)+`","sha256":"`+u.LCU2022.SHA256+`","kind":"windows-update"`))),
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("windows_build"), knownvalue.StringExact(u.LCU2022.Build)),
			},
			Check: resource.ComposeTestCheckFunc(acctest.CheckNodesReady(t, node), func(s *terraform.State) error {
				t.Logf("image with 2 updates and a node: %s", time.Since(start).Round(time.Second))
				n, err := acctest.Kube(t).FindNode(context.Background(), node)
				if err != nil {
					return err
				}
				if got := n.Status.NodeInfo.KernelVersion; got != wantFull {
					return fmt.Errorf("the node's kernelVersion is %q, want the patched build %s", got, wantFull)
				}
				// The build restarted once for the LCU (and once for the
				// Containers feature), and left no package on the disk.
				host := filepath.Join(acctest.Sandbox.Hosts.Dir, acctest.ComputerNameOf(image))
				log, err := os.ReadFile(filepath.Join(host, "scripts.log"))
				if err != nil {
					return err
				}
				for _, step := range []string{"windows-update-KB5070010", "windows-update-KB5070011"} {
					if !strings.Contains(string(log), "step: "+step) {
						return fmt.Errorf("scripts.log has no step %s", step)
					}
				}
				for _, f := range []string{"windows10.0-kb5070010-x64.cab", "windows10.0-kb5070011-x64.msu"} {
					if _, err := os.Stat(filepath.Join(host, "fs", "C", "k", "downloads", f)); !os.IsNotExist(err) {
						return fmt.Errorf("the build left the package %s on the template (err %v)", f, err)
					}
				}
				return nil
			}),
		}},
	})
}

// TestAccGoldenImage_updateFailures: an update that fails (a wrong hash,
// not applicable, corrupt, or a cumulative update before its servicing
// stack) fails the build, naming the KB, its exit code and the CBS log; the
// build VM is destroyed, or, with keep_build_vm_on_failure, kept in the state
// (tainted: the next plan replaces it) until the destroy removes it. A list
// that cannot work fails at plan.
func TestAccGoldenImage_updateFailures(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages, corrupted and inapplicable ones among them")
	u := acctest.Sandbox.Artifacts.Updates
	wrongHash := u.LCU2022
	wrongHash.SHA256 = u.LCU2022Next.SHA256
	cases := map[string]struct {
		updates string
		want    string
		keep    bool // also run with keep_build_vm_on_failure
	}{
		"wrong hash": {windowsUpdatesHCL(u.SSU2022, wrongHash),
			`(?s)image step "windows-update-KB5070011".*checksum mismatch for KB5070011`, true},
		"not applicable": {windowsUpdatesHCL(u.LCU2019),
			`(?s)image step "windows-update-KB5070012".*update KB5070012 failed: exit code -2145124329 \(0x80240017\).*CBS_E_NOT_APPLICABLE`, true},
		"corrupt": {windowsUpdatesHCL(u.SSU2022, u.LCU2022Corrupt),
			`(?s)image step "windows-update-KB5070011".*update KB5070011 failed: exit code -2146869232 \(0x80096010\).*TRUST_E_BAD_DIGEST`, true},
		"cumulative before its servicing stack": {windowsUpdatesHCL(u.LCU2022Cab),
			`(?s)image step "windows-update-KB5070011".*exit code -2146498525 \(0x800F0823\).*Error: 0x800f0823.*CBS_E_NEW_SERVICING_STACK_REQUIRED`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vmName := acctest.Name("win-upd")
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.GoldenImageConfig(vmName, map[string]string{"windows_updates": tc.updates}),
					ExpectError: regexp.MustCompile(tc.want),
				}},
				CheckDestroy: func(*terraform.State) error {
					if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), "/DC0/vm/golden/"+vmName); !vsphere.IsNotFound(err) {
						return fmt.Errorf("the build VM %s was left behind (err %v)", vmName, err)
					}
					return nil
				},
			})
		})
		if !tc.keep {
			continue
		}
		t.Run(name+", build VM kept", func(t *testing.T) {
			vmName := acctest.Name("win-updk")
			config := acctest.GoldenImageConfig(vmName, map[string]string{"windows_updates": tc.updates, "keep_build_vm_on_failure": "true"})
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{
					{Config: config, ExpectError: regexp.MustCompile(tc.want + `.*was kept for debugging`)},
					{
						// Kept, and in the state (tainted): the plan replaces it.
						PreConfig: func() {
							if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), "/DC0/vm/golden/"+vmName); err != nil {
								t.Errorf("the failed build VM %s was not kept: %v", vmName, err)
							}
						},
						Config: config, PlanOnly: true, ExpectNonEmptyPlan: true,
					},
				},
				CheckDestroy: func(*terraform.State) error {
					if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), "/DC0/vm/golden/"+vmName); !vsphere.IsNotFound(err) {
						return fmt.Errorf("destroy left the kept build VM %s (err %v)", vmName, err)
					}
					return nil
				},
			})
		})
	}
	// At plan: nothing is cloned.
	for name, tc := range map[string]struct{ updates, want string }{
		"kb":        {`[{ kb = "5070011", url = "http://mirror/x.msu", sha256 = "` + strings.Repeat("a", 64) + `" }]`, `must be a KB id`},
		"scheme":    {`[{ kb = "KB5070011", url = "ftp://mirror/x.msu", sha256 = "` + strings.Repeat("a", 64) + `" }]`, `http:// or https://`},
		"sha256":    {`[{ kb = "KB5070011", url = "http://mirror/x.msu", sha256 = "abc" }]`, `64 hexadecimal digits`},
		"extension": {`[{ kb = "KB5070011", url = "http://mirror/x.exe", sha256 = "` + strings.Repeat("a", 64) + `" }]`, `is not a .cab \(installed with DISM\) or .msu`},
		"twice": {`[{ kb = "KB5070011", url = "http://mirror/x.msu", sha256 = "` + strings.Repeat("a", 64) + `" }, { kb = "KB5070011", url = "http://mirror/y.msu", sha256 = "` + strings.Repeat("b", 64) + `" }]`,
			`KB5070011 is listed twice`},
	} {
		t.Run("plan "+name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.GoldenImageConfig(acctest.Name("win-plan"), map[string]string{"windows_updates": tc.updates}),
					PlanOnly:    true,
					ExpectError: acctest.Wrapped(tc.want),
				}},
			})
		})
	}
}

// TestAccGoldenImage_updateNeverInstalled: the cumulative update's .msu
// goes through wusa.exe, which reports success (exit code 0) but never
// installs it (winsim Faults.UpdatesNeverInstalled, standing for a GUI
// installer whose exit code was never waited for): the read-back of what
// the guest has installed (Get-HotFix) does not list it, and the build
// fails naming the KB. installed_updates is what the guest lists, never a
// copy of windows_updates.
func TestAccGoldenImage_updateNeverInstalled(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages and the simulated host's servicing faults")
	u := acctest.Sandbox.Artifacts.Updates
	vmName := fmt.Sprintf("win-nvr-%d", acctest.Seq())
	computer := strings.ToUpper(vmName) // the build VM's computer name (at most 15 characters)
	if len(computer) > 15 {
		computer = computer[:15]
	}
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(computer) })
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				acctest.Sandbox.Hosts.SetFaults(computer, winsim.Faults{UpdatesNeverInstalled: []string{u.LCU2022.KB}})
			},
			Config: acctest.GoldenImageConfig(vmName, map[string]string{"windows_updates": windowsUpdatesHCL(u.SSU2022, u.LCU2022)}),
			ExpectError: regexp.MustCompile(`(?s)image step "windows-updates-installed".*update ` + u.LCU2022.KB +
				` is not installed: its installer reported success, but Get-HotFix`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), "/DC0/vm/golden/"+vmName); !vsphere.IsNotFound(err) {
				return fmt.Errorf("the build VM %s was left behind (err %v)", vmName, err)
			}
			return nil
		},
	})
}

// TestAccGoldenImage_server2022And2025 builds, in one apply, a Windows
// Server 2022 image with its month's servicing stack update (.cab, DISM, no
// restart) and cumulative update (.msu, wusa, restart), and a Windows Server
// 2025 image (build 10.0.26100) with its checkpoint cumulative update and the
// month's cumulative update (both .msu, both restarting); it reads each
// image's KBs and the higher revision back, and joins a node on each: the
// node's build label and the image's release come from the build
// (winversion), its kernelVersion carries the update's revision, and a
// windows_runtime_class made from each image's windows_build selects its
// node and not the other.
func TestAccGoldenImage_server2022And2025(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages, with their stated KBs and builds")
	image22, image25 := acctest.Name("win2022"), acctest.Name("win2025")
	node22, node25 := fmt.Sprintf("win-%d", acctest.Seq()), fmt.Sprintf("win-%d", acctest.Seq())
	rc22, rc25 := acctest.Name("win-2022"), acctest.Name("win-2025")
	u := acctest.Sandbox.Artifacts.Updates
	// The 2022 image and its node, as NodeConfig writes them.
	config := strings.Replace(acctest.NodeConfig(image22, []string{node22}, ""), acctest.GoldenImageConfig(image22, nil),
		acctest.GoldenImageConfig(image22, map[string]string{"windows_updates": windowsUpdatesHCL(u.SSU2022, u.LCU2022)}), 1)
	// The 2025 image and its node beside them, renamed.
	img25 := acctest.GoldenImageConfig(image25, map[string]string{
		"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2025")),
		"windows_updates": windowsUpdatesHCL(u.Checkpoint2025, u.LCU2025),
	})
	n25 := strings.Replace(acctest.NodeConfigWithout(image25, []string{node25}, "  networking_id = windows_node_networking.test.id\n"),
		acctest.GoldenImageConfig(image25, nil), "", 1)
	img25 = strings.Replace(img25, "variable \"admin_password\" {\n  type      = string\n  sensitive = true\n}\n\n", "", 1) // declared once
	config += strings.Replace(img25, `resource "windows_golden_image" "test"`, `resource "windows_golden_image" "w2025"`, 1) +
		strings.ReplaceAll(strings.Replace(n25, `resource "windows_node" "n0"`, `resource "windows_node" "n2025"`, 1),
			"windows_golden_image.test.", "windows_golden_image.w2025.")
	for name, image := range map[string]string{rc22: "test", rc25: "w2025"} {
		config += fmt.Sprintf("\nresource \"windows_runtime_class\" %q {\n  name          = %q\n  windows_build = windows_golden_image.%s.windows_build\n}\n", name, name, image)
	}
	want := map[string]struct {
		node, class, build, full string
		kbs                      []string
	}{
		acctest.GoldenImageAddress:   {node22, rc22, "10.0.20348", fmt.Sprintf("%s.%d", u.LCU2022.Build, u.LCU2022.UBR), []string{u.SSU2022.KB, u.LCU2022.KB}},
		"windows_golden_image.w2025": {node25, rc25, "10.0.26100", fmt.Sprintf("%s.%d", u.LCU2025.Build, u.LCU2025.UBR), []string{u.Checkpoint2025.KB, u.LCU2025.KB}},
	}
	var checks []statecheck.StateCheck
	for addr, w := range want {
		checks = append(checks,
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("installed_updates"),
				knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(w.kbs[0]), knownvalue.StringExact(w.kbs[1])})),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("windows_build"), knownvalue.StringExact(w.build)),
			statecheck.ExpectKnownValue(addr, tfjsonpath.New("windows_build_full"), knownvalue.StringExact(w.full)))
	}
	checks = append(checks,
		statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_version"), knownvalue.StringExact("2022")),
		statecheck.ExpectKnownValue("windows_golden_image.w2025", tfjsonpath.New("windows_version"), knownvalue.StringExact("2025")),
		statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("windows_build_full"), knownvalue.StringExact(want[acctest.GoldenImageAddress].full)),
		statecheck.ExpectKnownValue("windows_node.n2025", tfjsonpath.New("windows_build_full"), knownvalue.StringExact(want["windows_golden_image.w2025"].full)))
	var start time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t); start = time.Now() },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigStateChecks: checks,
			Check: resource.ComposeTestCheckFunc(acctest.CheckNodesReady(t, node22, node25), func(*terraform.State) error {
				t.Logf("a 2022 and a 2025 image with 2 updates each and a node on each, in one apply: %s", time.Since(start).Round(time.Second))
				for _, w := range want {
					n, err := acctest.Kube(t).FindNode(context.Background(), w.node)
					if err != nil {
						return err
					}
					if got := n.Labels["node.kubernetes.io/windows-build"]; got != w.build {
						return fmt.Errorf("Node %s windows-build label %q, want %s", w.node, got, w.build)
					}
					if got := n.Status.NodeInfo.KernelVersion; got != w.full {
						return fmt.Errorf("Node %s kernelVersion %q, want %s", w.node, got, w.full)
					}
					// Each RuntimeClass made from an image's build selects
					// its node, and not the other.
					for _, other := range want {
						class, err := acctest.Kube(t).FindRuntimeClass(context.Background(), other.class)
						if err != nil {
							return err
						}
						if class.Scheduling == nil {
							return fmt.Errorf("RuntimeClass %s has no scheduling", other.class)
						}
						selects := true
						for k, v := range class.Scheduling.NodeSelector {
							selects = selects && n.Labels[k] == v
						}
						if selects != (other.class == w.class) {
							return fmt.Errorf("RuntimeClass %s (%v) selects Node %s: %v, want %v", other.class, class.Scheduling.NodeSelector, w.node, selects, other.class == w.class)
						}
					}
				}
				for _, kb := range []string{u.SSU2022.KB, u.LCU2022.KB, u.Checkpoint2025.KB, u.LCU2025.KB} {
					for step, d := range updateStepTimes(t, kb) {
						if step == "windows-update-"+kb {
							t.Logf("build time of %s: %s (until the next step: the restart included where the package asks for one)", step, d.Round(time.Millisecond))
						}
					}
				}
				return nil
			}),
		}},
	})
}

// TestAccGoldenImage_supportWarning: a plan of an image from the Windows
// Server 2019 template for Kubernetes v1.36 warns that 2019 is outside
// Kubernetes' supported releases, naming the source; one from 2022 does not.
// resource.Test cannot see warnings (the plan JSON has none): the real CLI's
// output is read.
func TestAccGoldenImage_supportWarning(t *testing.T) {
	acctest.PreCheck(t)
	cli := acctest.NewCLI(t)
	out, _ := planOK(t, cli, acctest.GoldenImageConfig(acctest.Name("win2019"), map[string]string{
		"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2019")),
	}))
	expectOutput(t, out, `Warning: Windows Server 2019 is outside its support`,
		regexp.QuoteMeta(`Windows Server 2019 is not among the releases Kubernetes 1.36 supports for Windows nodes (Windows Server 2022 and 2025; https://kubernetes.io/docs/concepts/windows/intro/#windows-os-version-support)`))
	out, _ = planOK(t, cli, acctest.GoldenImageConfig(acctest.Name("win2022"), nil))
	if strings.Contains(out, "outside its support") {
		t.Errorf("a Windows Server 2022 image for v1.36 warns:\n%s", out)
	}
}
