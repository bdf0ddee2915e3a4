package resources_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccGoldenImage_stockTemplates builds an image over vmtools (the
// default transport) from the stock Windows Server 2022 and 2025 base
// templates, whose disks carry the stock services with VMware Tools as the
// VMTools service. At the build's last step before sysprep the guest still
// runs VMware Tools and WinRM, Windows Update and the Windows Modules
// Installer are there as setup left them (Manual: their trigger starts are
// not modelled), every step ran over vmtools, and no step restarted
// VMware Tools under itself (the tools.conf step once did).
func TestAccGoldenImage_stockTemplates(t *testing.T) {
	acctest.PreCheck(t)
	if acctest.Sandbox == nil {
		t.Skip("lab mode: the build guest's services are the simulated host's")
	}
	for _, version := range []string{"2022", "2025"} {
		t.Run(version, func(t *testing.T) {
			name := acctest.Name("win" + version + "-stock")
			computer := acctest.ComputerNameOf(name)
			var mu sync.Mutex
			var at map[string]winsim.Service // at the windows-build step
			var toolsStops int
			var notVMTools []string
			remove := acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
				if !strings.EqualFold(ev.ComputerName, computer) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if ev.Tools != nil && !*ev.Tools && at == nil {
					// A stop while the guest stays up (the reboot for the
					// Containers feature and sysprep's shutdown stop it with
					// the guest).
					if h := acctest.Sandbox.Hosts.ByName(ev.ComputerName); h != nil && h.Up() {
						toolsStops++
					}
				}
				r := ev.Script
				if r == nil || r.Step == "" {
					return
				}
				if r.Transport == "ssh" || strings.HasPrefix(r.Transport, "winrm") {
					// ("process": a powershell.exe a step started itself.)
					notVMTools = append(notVMTools, r.Step+" over "+r.Transport)
				}
				if r.Step != "windows-build" {
					return
				}
				h := acctest.Sandbox.Hosts.ByName(ev.ComputerName)
				if h == nil {
					return
				}
				at = map[string]winsim.Service{}
				for _, n := range []string{"VMTools", "WinRM", "wuauserv", "TrustedInstaller", "EventLog", "mpssvc"} {
					if s, ok := h.Service(n); ok {
						at[n] = s
					}
				}
			})
			t.Cleanup(remove)
			build := map[string]string{"2022": "10.0.20348", "2025": "10.0.26100"}[version]
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
				Steps: []resource.TestStep{{
					Config: acctest.GoldenImageConfig(name, map[string]string{"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_"+version))}),
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_build"), knownvalue.StringExact(build)),
						statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("windows_version"), knownvalue.StringExact(version)),
					},
					Check: func(*terraform.State) error {
						mu.Lock()
						defer mu.Unlock()
						if at == nil {
							return fmt.Errorf("the build of %s ran no windows-build step", computer)
						}
						if len(notVMTools) > 0 {
							return fmt.Errorf("steps not run over vmtools: %v", notVMTools)
						}
						if toolsStops > 0 {
							return fmt.Errorf("VMware Tools stopped %d times in the running guest during the build", toolsStops)
						}
						for n, want := range map[string][2]string{
							"VMTools": {winsim.StatusRunning, winsim.StartupAutomatic}, "WinRM": {winsim.StatusRunning, winsim.StartupAutomatic},
							"EventLog": {winsim.StatusRunning, winsim.StartupAutomatic}, "mpssvc": {winsim.StatusRunning, winsim.StartupAutomatic},
							"wuauserv": {"", winsim.StartupManual}, "TrustedInstaller": {"", winsim.StartupManual},
						} {
							s, ok := at[n]
							switch {
							case !ok:
								return fmt.Errorf("the build guest has no %s service", n)
							case want[0] != "" && s.Status != want[0]:
								return fmt.Errorf("%s is %s at the end of the build, want %s", n, s.Status, want[0])
							case s.StartupType != want[1]:
								return fmt.Errorf("%s starts %s, want %s", n, s.StartupType, want[1])
							}
						}
						if !at["WinRM"].DelayedAutoStart {
							return fmt.Errorf("WinRM is not Automatic (Delayed Start)")
						}
						return nil
					},
				}},
			})
		})
	}
}

// TestAccGoldenImage_vmtoolsRestartMidStep restarts VMware Tools (the
// VMTools service) in the build guest as a step arrives over vmtools:
// VMware Tools forgets the process running the step, so its result is
// lost. A rerunnable step (vmware-tools) is run again and the build
// completes; a step that cannot safely run twice (verify) fails the build
// with an error naming VMware Tools' restart.
func TestAccGoldenImage_vmtoolsRestartMidStep(t *testing.T) {
	acctest.PreCheck(t)
	if acctest.Sandbox == nil {
		t.Skip("lab mode: the sandbox's faults restart VMware Tools")
	}
	for _, tc := range []struct {
		step    string
		wantErr string
	}{
		{step: "vmware-tools"},
		{step: "verify", wantErr: `(?s)image step "verify".*VMware\s+Tools\s+stopped\s+under\s+the\s+running\s+script.*VMTools.*cannot\s+safely\s+run\s+twice`},
	} {
		t.Run(tc.step, func(t *testing.T) {
			name := acctest.Name("win-vmtrs-" + strings.ReplaceAll(tc.step, "-", ""))
			computer := acctest.ComputerNameOf(name)
			acctest.Sandbox.Hosts.SetFaults(computer, winsim.Faults{Steps: []winsim.StepFault{{Step: tc.step, RestartService: "VMTools", Times: 1}}})
			t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(computer) })
			var mu sync.Mutex
			runs := 0
			remove := acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
				if ev.Script != nil && strings.EqualFold(ev.ComputerName, computer) && ev.Script.Step == tc.step {
					mu.Lock()
					runs++
					mu.Unlock()
				}
			})
			t.Cleanup(remove)
			step := resource.TestStep{Config: acctest.GoldenImageConfig(name, nil)}
			if tc.wantErr != "" {
				step.ExpectError = regexp.MustCompile(tc.wantErr)
			} else {
				step.Check = func(*terraform.State) error {
					mu.Lock()
					defer mu.Unlock()
					if runs != 2 {
						return fmt.Errorf("step %s ran %d times, want 2 (cut by the VMware Tools restart, then run again)", tc.step, runs)
					}
					return nil
				}
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
				Steps:                    []resource.TestStep{step},
			})
		})
	}
}
