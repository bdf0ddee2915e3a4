package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const (
	dismDoc   = "https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-operating-system-package-servicing-command-line-options"
	wusaDoc   = "https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standalone-windows-update-installer"
	kb949545  = "KB949545: wusa returns 0x240006 WU_S_ALREADY_INSTALLED and 0x80240017 WU_E_NOT_APPLICABLE"
	ssuDoc    = "https://learn.microsoft.com/en-us/windows/deployment/update/servicing-stack-updates (SSU before LCU); CBS_E_NEW_SERVICING_STACK_REQUIRED"
	kb2773898 = "KB2773898: wusa.exe returns 0x5 ERROR_ACCESS_DENIED when deploying .msu files through WinRM and Windows Remote Shell"
)

// wusaInTask is a script that runs wusa.exe with args in a scheduled task as
// SYSTEM (the way around KB2773898), waits for the task to end and prints
// its LastTaskResult: wusa's exit code.
func wusaInTask(args string) string {
	return `$s = New-Object -ComObject 'Schedule.Service'
$s.Connect()
$f = $s.GetFolder('\')
$d = $s.NewTask(0)
$a = $d.Actions.Create(0)
$a.Path = 'wusa.exe'
$a.Arguments = '` + args + `'
$d.Principal.UserId = 'SYSTEM'
$d.Principal.LogonType = 5
$d.Principal.RunLevel = 1
$t = $f.RegisterTaskDefinition('wusa-test', $d, 6, 'SYSTEM', $null, 5)
$t.Run($null) | Out-Null
while ($f.GetTask('wusa-test').State -eq 4) { Start-Sleep -Milliseconds 50 }
$f.GetTask('wusa-test').LastTaskResult
$f.DeleteTask('wusa-test', 0)`
}

// TestServicing installs update packages with DISM and wusa through an
// outside WinRM client, in order on one Windows Server 2022 host (build
// 20348, UBR 2340), and restarts it where an install needs it: each answer
// (exit code, output, CBS log, the pending-restart registry keys, the UBR)
// must be Windows' or a refusal as not modelled.
func TestServicing(t *testing.T) {
	booted := make(chan struct{}, 8)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.OnStateChange = func(_ *winsim.Host, up bool) {
			if up {
				booted <- struct{}{}
			}
		}
	})
	<-booted // the first boot
	ssu := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	lcu := updatepkg.Package{KB: "KB5070011", Kind: updatepkg.LCU, Build: "20348", UBR: 4405, Requires: "KB5070010", Restart: true}
	next := updatepkg.Package{KB: "KB5072011", Kind: updatepkg.LCU, Build: "20348", UBR: 4466, Requires: "KB5070010", Restart: true}
	old := updatepkg.Package{KB: "KB5069011", Kind: updatepkg.LCU, Build: "20348", UBR: 4300, Requires: "KB5070010", Restart: true}
	lcu2019 := updatepkg.Package{KB: "KB5070012", Kind: updatepkg.LCU, Build: "17763", UBR: 8100, Restart: true}
	for path, content := range map[string][]byte{
		`C:\u\ssu.cab`: ssu.Encode(), `C:\u\lcu.cab`: lcu.Encode(), `C:\u\lcu.msu`: lcu.Encode(), `C:\u\next.msu`: next.Encode(),
		`C:\u\lcu2019.cab`: lcu2019.Encode(), `C:\u\corrupt.msu`: lcu.Corrupt(), `C:\u\corrupt.cab`: lcu.Corrupt(),
		`C:\u\notes.msu`: []byte("not a package"), `C:\u\old.cab`: old.Encode(),
	} {
		if err := f.Host.WriteFile(path, content); err != nil {
			t.Fatal(err)
		}
	}
	ubr := "(Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion').UBR"
	pending := func() bool {
		_, ok := f.Host.RegistryValue(winsim.CBSRebootPendingKey, "Package_for_KB5070011~31bf3856ad364e35~amd64~~20348.4405")
		return ok
	}
	for _, tc := range []struct {
		name, script   string
		stdout, stderr string // fragments ("" checks nothing)
		source         string
		after          func(t *testing.T)
	}{
		{"lcu-before-ssu-dism", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu.cab' /quiet /norestart\n$LASTEXITCODE",
			"Error: 0x800f0823\r\n\r\nThe package needs a newer version of the servicing stack.", "", ssuDoc, nil},
		// KB2773898: wusa from the WinRM session itself installs nothing.
		{"wusa-over-winrm-refused", "wusa.exe 'C:\\u\\lcu.msu' /quiet /norestart | Out-Null\n$LASTEXITCODE", "5\r\n", "", kb2773898, func(t *testing.T) {
			if got := f.Host.InstalledUpdates(); len(got) != 0 {
				t.Errorf("wusa over WinRM installed %v, want nothing (KB2773898)", got)
			}
		}},
		{"dism-msu-online-2022-not-modelled", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu.msu' /quiet /norestart\n$LASTEXITCODE", "1",
			"does not model DISM /Online /Add-Package of a .msu on build 10.0.20348", dismDoc + " (.msu online only from Windows 11 21H2, build 22000)", nil},
		{"lcu-before-ssu-wusa", wusaInTask(`"C:\u\lcu.msu" /quiet /norestart`), "-2145124329", "", kb949545, nil},
		{"other-build-not-applicable", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu2019.cab' /quiet /norestart\n$LASTEXITCODE",
			"The specified package is not applicable to this image.\r\n\r\nThe DISM log file can be found at C:\\Windows\\Logs\\DISM\\dism.log\r\n-2146498530", "", dismDoc + " (0x800F081E CBS_E_NOT_APPLICABLE)", nil},
		{"corrupt-wusa", wusaInTask(`"C:\u\corrupt.msu" /quiet /norestart`), "-2146869232", "", "TRUST_E_BAD_DIGEST 0x80096010", nil},
		{"corrupt-dism", "dism.exe /online /add-package '/packagepath:C:\\u\\corrupt.cab' /quiet /norestart\n$LASTEXITCODE",
			"Error: 0x80096010", "", "TRUST_E_BAD_DIGEST 0x80096010", nil},
		{"not-a-package", wusaInTask(`"C:\u\notes.msu" /quiet /norestart`), "-2147024894", "", "0x80070002", nil},
		{"missing-file", "dism.exe /online /add-package '/packagepath:C:\\u\\nope.cab' /quiet /norestart\n$LASTEXITCODE",
			"Error: 2\r\n\r\nThe system cannot find the file specified.", "", dismDoc, nil},
		{"cbs-log-names-the-failures", "(Get-Content -Path 'C:\\Windows\\Logs\\CBS\\CBS.log' | Select-Object -Last 3) -join '|'",
			"0x80070002 - ERROR_FILE_NOT_FOUND", "", "%WINDIR%\\Logs\\CBS\\CBS.log", nil},
		{"ssu-no-restart", "dism.exe /online /add-package '/packagepath:C:\\u\\ssu.cab' /norestart\n$LASTEXITCODE",
			"Image Version: 10.0.20348.2340\r\n\r\nProcessing 1 of 1 - Adding package Package_for_KB5070010", "", dismDoc, nil},
		{"lcu-needs-restart", wusaInTask(`"C:\u\lcu.msu" /quiet /norestart`) + "\n" + ubr, "3010\r\n2340", "", wusaDoc + " (3010 ERROR_SUCCESS_REBOOT_REQUIRED)",
			func(t *testing.T) {
				if !pending() {
					t.Error("no Component Based Servicing\\RebootPending entry for the staged LCU")
				}
				if !f.Host.RegistryKeyExists(winsim.WURebootRequiredKey) {
					t.Error("no WindowsUpdate\\Auto Update\\RebootRequired key after wusa staged the LCU")
				}
			}},
		{"already-installed-pending", wusaInTask(`"C:\u\lcu.msu" /quiet /norestart`), "2359302", "", kb949545, nil},
		{"restart", "Restart-Computer -Force", "", "", "", func(t *testing.T) { <-booted }},
		{"ubr-after-restart", ubr, "4405", "", "the CurrentVersion UBR the LCU brings", func(t *testing.T) {
			if pending() || f.Host.RegistryKeyExists(winsim.WURebootRequiredKey) {
				t.Error("the pending-restart keys are still there after the restart")
			}
			if got := f.Host.UBR(); got != 4405 {
				t.Errorf("Host.UBR() = %d, want 4405", got)
			}
		}},
		{"already-installed-wusa", wusaInTask(`"C:\u\lcu.msu" /quiet /norestart`), "2359302", "", kb949545, nil},
		{"already-installed-dism", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu.cab' /quiet /norestart\n$LASTEXITCODE", "0", "", dismDoc, nil},
		{"wusa-restarts-itself", wusaInTask(`"C:\u\next.msu" /quiet`), "1641", "", wusaDoc + " (/quiet without /norestart restarts; 1641 ERROR_SUCCESS_REBOOT_INITIATED)",
			func(t *testing.T) { <-booted }},
		{"ubr-after-wusa-restart", ubr, "4466", "", "the CurrentVersion UBR the LCU brings", nil},
		{"older-lcu-not-applicable", "dism.exe /online /add-package '/packagepath:C:\\u\\old.cab' /quiet /norestart\n$LASTEXITCODE", "-2146498530", "", dismDoc + " (an LCU older than the installed one: CBS_E_NOT_APPLICABLE)", nil},
		{"offline-not-modelled", "dism.exe /image:C:\\mount /add-package '/packagepath:C:\\u\\ssu.cab'\n$LASTEXITCODE", "1", "does not model the DISM argument /image:C:\\mount", dismDoc + " (/Image is real; not modelled)", nil},
		{"dism-restart-not-modelled", "dism.exe /online /add-package '/packagepath:C:\\u\\ssu.cab' /quiet\n$LASTEXITCODE", "1", "does not model DISM without /NoRestart", dismDoc, nil},
		{"wusa-interactive-not-modelled", "wusa.exe 'C:\\u\\lcu.msu' | Out-Null\n$LASTEXITCODE", "1", "does not model wusa without /quiet", wusaDoc, nil},
		{"wua-other-progid-not-modelled", "$s = New-Object -ComObject 'WScript.Shell'\n'not reached'", "", "does not model the COM class WScript.Shell", "real ProgID; not modelled: the script stops", nil},
		{"wusa-uninstall-not-modelled", "wusa.exe /uninstall /kb:5070011 /quiet | Out-Null\n$LASTEXITCODE", "1", "does not model the wusa argument /uninstall", wusaDoc, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// A client per case: a restart ends the NTLM session.
			stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("stdout %q stderr %q\nwant stdout containing %q, stderr containing %q (source: %s)", stdout, stderr, tc.stdout, tc.stderr, tc.source)
			}
			if tc.after != nil {
				tc.after(t)
			}
		})
	}
	if got := f.Host.InstalledUpdates(); got["KB5070010"] != winsim.PackageInstalled || got["KB5070011"] != winsim.PackageInstalled ||
		got["KB5072011"] != winsim.PackageInstalled || got["KB5070012"] != "" {
		t.Errorf("installed updates %v, want KB5070010, KB5070011 and KB5072011 installed, KB5070012 not", got)
	}
}

// TestServicingDISMMSUOnline: on build 26100 (Server 2025) DISM /Online
// takes a .msu (the DISM page: online from Windows 11 21H2, build 22000,
// on), with DISM's exit codes: 3010 for an LCU that needs a restart, 0 for
// the same package again; wusa over WinRM is refused there too (KB2773898).
func TestServicingDISMMSUOnline(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.WindowsBuild, c.UBR = "10.0.26100", 1742
	})
	lcu := updatepkg.Package{KB: "KB5070021", Kind: updatepkg.LCU, Build: "26100", UBR: 4061, Restart: true}
	if err := f.Host.WriteFile(`C:\u\lcu.msu`, lcu.Encode()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, script, stdout, source string }{
		{"wusa-over-winrm-refused", "wusa.exe 'C:\\u\\lcu.msu' /quiet /norestart | Out-Null\n$LASTEXITCODE", "5\r\n", kb2773898},
		{"dism-msu-online", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu.msu' /quiet /norestart\n$LASTEXITCODE", "3010\r\n", dismDoc + " (3010 with /NoRestart)"},
		{"dism-msu-again", "dism.exe /online /add-package '/packagepath:C:\\u\\lcu.msu' /quiet /norestart\n$LASTEXITCODE", "0\r\n", dismDoc + " (an installed package: 0)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		stdout, _, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, tc.script)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if stdout != tc.stdout {
			t.Errorf("%s: stdout %q, want %q (source: %s)", tc.name, stdout, tc.stdout, tc.source)
		}
	}
	if got := f.Host.InstalledUpdates()["KB5070021"]; got != winsim.PackageInstallPending {
		t.Errorf("KB5070021 is %q after DISM, want %q", got, winsim.PackageInstallPending)
	}
}

// TestServicingCheckpoint: a Windows Server 2025 target LCU carries only the
// differentials since its checkpoint cumulative update, which a host below
// the checkpoint's revision needs first. Microsoft documents the order
// (checkpointDoc), not Windows' answer to another, so DISM and wusa refuse
// the target alone as not modelled; after the checkpoint (staged, before
// the restart, as installing both from one folder does), and on a host
// already past the checkpoint, the target installs.
func TestServicingCheckpoint(t *testing.T) {
	const checkpointDoc = "https://learn.microsoft.com/en-us/windows/deployment/update/catalog-checkpoint-cumulative-updates"
	checkpoint := updatepkg.Package{KB: "KB5070017", Kind: updatepkg.LCU, Build: "26100", UBR: 1742, Restart: true}
	target := updatepkg.Package{KB: "KB5070013", Kind: updatepkg.LCU, Build: "26100", UBR: 7171, Restart: true, Checkpoint: "KB5070017", CheckpointUBR: 1742}
	host := func(ubr int) *winsimtest.Fixture {
		f := winsimtest.StartHost(t, func(c *winsim.HostConfig) { c.WindowsBuild, c.UBR = "10.0.26100", ubr })
		for path, content := range map[string][]byte{`C:\u\checkpoint.msu`: checkpoint.Encode(), `C:\u\target.msu`: target.Encode()} {
			if err := f.Host.WriteFile(path, content); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
	dism := func(file string) string {
		return "dism.exe /online /add-package '/packagepath:C:\\u\\" + file + "' /quiet /norestart\n$LASTEXITCODE"
	}
	notModelled := "does not model installing KB5070013 without the checkpoint cumulative update KB5070017"
	below, past := host(1000), host(1742)
	for _, tc := range []struct {
		name           string
		f              *winsimtest.Fixture
		script         string
		stdout, stderr string
	}{
		{"dism-target-alone-not-modelled", below, dism("target.msu"), "1\r\n", notModelled},
		{"wusa-target-alone-not-modelled", below, wusaInTask(`"C:\u\target.msu" /quiet /norestart`), "1\r\n", ""},
		{"dism-checkpoint", below, dism("checkpoint.msu"), "3010\r\n", ""},
		{"dism-target-after-checkpoint", below, dism("target.msu"), "3010\r\n", ""},
		{"dism-target-past-checkpoint", past, dism("target.msu"), "3010\r\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stdout, stderr, _, err := clientAs(t, tc.f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if !strings.HasPrefix(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("stdout %q stderr %q\nwant stdout starting %q, stderr containing %q (source: %s)", stdout, stderr, tc.stdout, tc.stderr, checkpointDoc)
			}
		})
	}
	if got := below.Host.InstalledUpdates(); got["KB5070017"] != winsim.PackageInstallPending || got["KB5070013"] != winsim.PackageInstallPending {
		t.Errorf("installed updates %v, want the checkpoint and the target staged", got)
	}
	if log, err := below.Host.ReadFile(`C:\Windows\Logs\CBS\CBS.log`); err != nil || !strings.Contains(string(log), "without the checkpoint cumulative update KB5070017 (revision 1742) it builds on: not modelled") {
		t.Errorf("CBS.log does not name the refusal (err %v)", err)
	}
}
