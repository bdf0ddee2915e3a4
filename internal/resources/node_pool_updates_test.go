package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
)

// patchedPoolConfig is a pool of two members made from an image with the
// given updates, built beside the previous one (name_prefix,
// create_before_destroy), as the Windows updates guide sets it up.
func patchedPoolConfig(image, prefix string, updates ...artifacts.Update) string {
	img := acctest.GoldenImageConfig(image, map[string]string{
		"name": "", "name_prefix": fmt.Sprintf("%q", image+"-"), "windows_updates": windowsUpdatesHCL(updates...),
	})
	img = strings.Replace(img, "resource \"windows_golden_image\" \"test\" {\n",
		"resource \"windows_golden_image\" \"test\" {\n  lifecycle {\n    create_before_destroy = true\n  }\n", 1)
	c := nodePoolConfig(image, prefix, 2, "windows_golden_image.test.template_path", "", "  max_surge = 1\n  max_unavailable = 0\n")
	return strings.Replace(c, acctest.GoldenImageConfig(image, nil), img, 1)
}

// updateStepTimes reads, from the scripts.log of the guest that ran the
// step windows-update-<kb>, how long each windows-update step took until the
// next script ran (the restart it asked for included).
func updateStepTimes(t *testing.T, kb string) map[string]time.Duration {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(acctest.Sandbox.Hosts.Dir, "*", "scripts.log"))
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, l := range logs {
		if c, err := os.ReadFile(l); err == nil && strings.Contains(string(c), "step=windows-update-"+kb) {
			b = c
		}
	}
	if b == nil {
		t.Fatalf("no guest ran windows-update-%s", kb)
	}
	re := regexp.MustCompile(`(?m)^=== (\S+) .*?(?: step=(\S+))?$`)
	type entry struct {
		at   time.Time
		step string
	}
	var es []entry
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, entry{at, m[2]})
	}
	out := map[string]time.Duration{}
	for i := 0; i+1 < len(es); i++ {
		if strings.HasPrefix(es[i].step, "windows-update-") {
			out[es[i].step] = es[i+1].at.Sub(es[i].at)
		}
	}
	return out
}

// TestAccNodePool_rollToPatchedImage is the monthly patch loop: a pool of
// two members on an image with the month's SSU and LCU; next month's LCU
// added to windows_updates builds a new image beside the old one, the pool
// rolls onto it one member at a time, and every Node reports the new
// revision; the old template goes once no member uses it.
func TestAccNodePool_rollToPatchedImage(t *testing.T) {
	acctest.RequireSandbox(t, "the artifact server's update packages, and vcsim's call hook to count the roll's calls")
	image := acctest.Name("patch")
	prefix := fmt.Sprintf("u%d", acctest.Seq()%100000)
	u := acctest.Sandbox.Artifacts.Updates
	var first []poolMember
	var firstTemplate string
	// vSphere calls of the step: all of them, and those after the new
	// template exists (MarkAsTemplate): the roll, and the old template's
	// deletion.
	var calls, rollCalls atomic.Int64
	var templated atomic.Bool
	var start time.Time
	// API requests of the provider's ServiceAccount (counted by the API
	// server), and guest commands (scripts over the transport, programs
	// started through vCenter's guest operations) by computer name.
	var apiRequests func() int
	var apiBefore, apiAtTemplate atomic.Int64
	var guestMu sync.Mutex
	guestCommands := map[string]int{}
	kernels := func(ms []poolMember, want string) error {
		for _, m := range ms {
			n, err := acctest.Kube(t).FindNode(context.Background(), m.name)
			if err != nil {
				return err
			}
			if got := n.Status.NodeInfo.KernelVersion; got != want {
				return fmt.Errorf("Node %s kernelVersion %q, want %s", m.name, got, want)
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkPoolDestroyed(t, prefix),
		Steps: []resource.TestStep{
			{
				Config: patchedPoolConfig(image, prefix, u.SSU2022, u.LCU2022),
				Check: func(s *terraform.State) (err error) {
					if first, err = checkPool(t, s, prefix, 2); err != nil {
						return err
					}
					firstTemplate = s.RootModule().Resources[acctest.GoldenImageAddress].Primary.Attributes["template_path"]
					return kernels(first, fmt.Sprintf("%s.%d", u.LCU2022.Build, u.LCU2022.UBR))
				},
			},
			{
				PreConfig: func() {
					start = time.Now()
					apiRequests = acctest.CountProviderRequests(t)
					apiBefore.Store(int64(apiRequests()))
					remove := acctest.Sandbox.VSphere.OnCall(func(method, _ string) {
						calls.Add(1)
						if templated.Load() {
							rollCalls.Add(1)
						}
						if method == "MarkAsTemplate" {
							templated.Store(true)
							apiAtTemplate.Store(int64(apiRequests()))
						}
					})
					t.Cleanup(remove)
					t.Cleanup(acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
						if ev.Script != nil || ev.Program != nil {
							guestMu.Lock()
							guestCommands[strings.ToUpper(ev.ComputerName)]++
							guestMu.Unlock()
						}
					}))
				},
				Config: patchedPoolConfig(image, prefix, u.SSU2022, u.LCU2022, u.LCU2022Next),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("installed_updates"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(u.SSU2022.KB), knownvalue.StringExact(u.LCU2022.KB), knownvalue.StringExact(u.LCU2022Next.KB)})),
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build_full"),
						knownvalue.StringExact(fmt.Sprintf("%s.%d", u.LCU2022Next.Build, u.LCU2022Next.UBR))),
				},
				Check: func(s *terraform.State) error {
					// Counted before this check's own vSphere calls.
					rollVSphere := rollCalls.Load()
					t.Logf("new image with 3 updates and a roll of 2 members: %s, %d vSphere calls, %d of them after the new template existed (the roll: %.1f per member)",
						time.Since(start).Round(time.Second), calls.Load(), rollVSphere, float64(rollVSphere)/2)
					rolled, err := checkPool(t, s, prefix, 2)
					if err != nil {
						return err
					}
					for _, m := range rolled {
						if slices.Contains(memberNames(first), m.name) {
							return fmt.Errorf("member %s was not replaced by the roll", m.name)
						}
					}
					if err := checkGone(t, first); err != nil {
						return err
					}
					if err := kernels(rolled, fmt.Sprintf("%s.%d", u.LCU2022Next.Build, u.LCU2022Next.UBR)); err != nil {
						return err
					}
					tmpl := s.RootModule().Resources[acctest.GoldenImageAddress].Primary.Attributes["template_path"]
					if tmpl == firstTemplate {
						return fmt.Errorf("the image's template is still %s", tmpl)
					}
					if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), firstTemplate); err == nil {
						return fmt.Errorf("the old template %s is still there", firstTemplate)
					}
					for step, d := range updateStepTimes(t, u.LCU2022Next.KB) {
						t.Logf("%s: %s (until the next step: the restart included where the package asks for one)", step, d.Round(time.Millisecond))
					}
					// The roll's calls per member: vSphere (after the new
					// template existed), the provider's API requests (after
					// the new template existed; the image's own plan-time
					// checks before it), guest commands on each new member.
					after := apiRequests()
					roll := after - int(apiAtTemplate.Load())
					if apiAtTemplate.Load() == 0 || roll <= 0 {
						return fmt.Errorf("the API server counted %d requests of the provider in the roll (%d in the step)", roll, after-int(apiBefore.Load()))
					}
					guestMu.Lock()
					defer guestMu.Unlock()
					var perMember []string
					for _, m := range rolled {
						n := guestCommands[acctest.ComputerNameOf(m.name)]
						if n == 0 {
							return fmt.Errorf("no guest command ran on the new member %s (%s)", m.name, acctest.ComputerNameOf(m.name))
						}
						perMember = append(perMember, fmt.Sprintf("%s: %d", m.name, n))
					}
					t.Logf("the roll of %d members: %.1f vSphere calls, %.1f API requests of the provider per member (%d and %d in all; %d API requests in the step); guest commands per new member: %s",
						len(rolled), float64(rollVSphere)/float64(len(rolled)), float64(roll)/float64(len(rolled)), rollVSphere, roll,
						after-int(apiBefore.Load()), strings.Join(perMember, ", "))
					return nil
				},
			},
		},
	})
}
