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
	ncpSource   = "PowerShell/PowerShell NativeCommandProcessor.cs: a Windows application at the end of a pipe runs in the background and sets no $LASTEXITCODE"
	issue26455  = "PowerShell/PowerShell#26455: piping a GUI application makes the call synchronous and populates $LASTEXITCODE; > does not"
	startDoc    = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/start-process?view=powershell-5.1 (-Wait, -PassThru)"
	cmdStartDoc = "start /?: cmd.exe does not wait for a GUI application except in a command script; start /wait waits"
)

// TestGUIProgramWaitRules runs wusa.exe, a GUI-subsystem program, over
// WinRM, where it exits with 5 at once (KB2773898): that exit code shows
// whether the caller waited for it.
func TestGUIProgramWaitRules(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	pkg := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	if err := f.Host.WriteFile(`C:\u\ssu.msu`, pkg.Encode()); err != nil {
		t.Fatal(err)
	}
	if err := f.Host.WriteFile(`C:\u\wusa.cmd`, []byte("@echo off\r\nwusa.exe C:\\u\\ssu.msu /quiet /norestart\r\n")); err != nil {
		t.Fatal(err)
	}
	const wusa = `wusa.exe C:\u\ssu.msu /quiet /norestart`
	for _, tc := range []struct {
		name, script, stdout, stderr, source string
	}{
		{"call-operator-returns-at-once", "cmd.exe /c exit 7\n& " + wusa + "\n'code=' + $LASTEXITCODE + ' ok=' + $?", "code=7 ok=True", "", ncpSource},
		{"bare-name-returns-at-once", "cmd.exe /c exit 7\n" + wusa + "\n'code=' + $LASTEXITCODE", "code=7", "", ncpSource},
		{"assignment-returns-at-once", "cmd.exe /c exit 7\n$out = & " + wusa + "\n'code=' + $LASTEXITCODE", "code=7", "", ncpSource},
		{"pipe-to-out-null-waits", "cmd.exe /c exit 7\n" + wusa + " | Out-Null\n'code=' + $LASTEXITCODE + ' ok=' + $?", "code=5 ok=False", "", issue26455},
		{"start-process-wait-passthru", "$p = Start-Process -FilePath wusa.exe -ArgumentList 'C:\\u\\ssu.msu','/quiet','/norestart' -Wait -PassThru\n'code=' + $p.ExitCode + ' exited=' + $p.HasExited", "code=5 exited=True", "", startDoc},
		{"start-process-passthru-without-wait-refused", "Start-Process -FilePath wusa.exe -ArgumentList 'C:\\u\\ssu.msu' -PassThru", "", "-PassThru without -Wait", startDoc},
		{"redirection-refused", "& " + wusa + " > C:\\u\\out.txt\n'code=' + $LASTEXITCODE", "code=1", "does not model a redirection of a GUI program", issue26455},
		{"cmd-start-wait-waits", "cmd.exe /c \"start /wait " + wusa + "\" | Out-Null\n'code=' + $LASTEXITCODE", "code=5", "", cmdStartDoc},
		{"cmd-start-title-wait-waits", "cmd.exe /c 'start \"\" /wait " + wusa + "' | Out-Null\n'code=' + $LASTEXITCODE", "code=5", "", cmdStartDoc},
		{"cmd-start-without-wait-refused", "cmd.exe /c \"start " + wusa + "\" | Out-Null\n'code=' + $LASTEXITCODE", "code=1", "start without /wait", cmdStartDoc},
		{"cmd-line-gui-refused", "cmd.exe /c \"" + wusa + "\" | Out-Null\n'code=' + $LASTEXITCODE", "code=1", "outside a batch file", cmdStartDoc},
		{"batch-file-waits", "& C:\\u\\wusa.cmd | Out-Null\n'code=' + $LASTEXITCODE", "code=5", "", cmdStartDoc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("stdout %q stderr %q\nwant stdout containing %q, stderr containing %q (source: %s)", stdout, stderr, tc.stdout, tc.stderr, tc.source)
			}
		})
	}
	if got := f.Host.InstalledUpdates(); len(got) != 0 {
		t.Errorf("installed %v over WinRM, want nothing (KB2773898)", got)
	}
}

// TestGUIProgramFinishesAfterItsCaller runs `& wusa.exe` where wusa
// installs (a scheduled task as SYSTEM): the script's next statements see
// no exit code and nothing installed; the update lands once wusa, left
// running in the background, finishes. Get-HotFix then lists it.
func TestGUIProgramFinishesAfterItsCaller(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	pkg := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	script := "& wusa.exe C:\\u\\ssu.msu /quiet /norestart\r\n" +
		"Set-Content -LiteralPath C:\\u\\code.txt -Value ('[' + $LASTEXITCODE + ']')\r\n" +
		"Set-Content -LiteralPath C:\\u\\seen.txt -Value @(Get-HotFix -Id KB5070010 -ErrorAction SilentlyContinue).Count\r\n"
	for path, content := range map[string][]byte{`C:\u\ssu.msu`: pkg.Encode(), `C:\u\run.ps1`: []byte(script)} {
		if err := f.Host.WriteFile(path, content); err != nil {
			t.Fatal(err)
		}
	}
	task := `$s = New-Object -ComObject 'Schedule.Service'
$s.Connect()
$f = $s.GetFolder('\')
$d = $s.NewTask(0)
$a = $d.Actions.Create(0)
$a.Path = 'powershell.exe'
$a.Arguments = '-NoProfile -NonInteractive -File C:\u\run.ps1'
$d.Principal.UserId = 'SYSTEM'
$d.Principal.LogonType = 5
$d.Principal.RunLevel = 1
$t = $f.RegisterTaskDefinition('gui-test', $d, 6, 'SYSTEM', $null, 5)
$t.Run($null) | Out-Null
while ($f.GetTask('gui-test').State -eq 4) { Start-Sleep -Milliseconds 50 }
$f.DeleteTask('gui-test', 0)
Get-Content -LiteralPath C:\u\code.txt
Get-Content -LiteralPath C:\u\seen.txt`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[]\r\n0\r\n"; stdout != want {
		t.Fatalf("the task's script saw %q (stderr %q), want %q: no $LASTEXITCODE and nothing installed right after `& wusa.exe` (source: %s)", stdout, decodeCLIXML(stderr), want, ncpSource)
	}
	if err := f.Host.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.Host.InstalledUpdates()["KB5070010"]; got != winsim.PackageInstalled {
		t.Fatalf("KB5070010 is %q once wusa finished in the background, want %q", got, winsim.PackageInstalled)
	}
	stdout, stderr, _, err = clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx,
		"(Get-HotFix -Id KB5070010).HotFixID\nGet-HotFix -Id KB5999999")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "KB5070010\r\n" || !strings.Contains(decodeCLIXML(stderr), "Cannot find the requested hotfix on the 'localhost' computer") {
		t.Fatalf("Get-HotFix: stdout %q stderr %q, want KB5070010 and ObjectNotFound for KB5999999", stdout, decodeCLIXML(stderr))
	}
}

// TestUpdateNeverInstalledFault: under Faults.UpdatesNeverInstalled DISM
// exits 0 for the package and Get-HotFix does not find it.
func TestUpdateNeverInstalledFault(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	pkg := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	if err := f.Host.WriteFile(`C:\u\ssu.cab`, pkg.Encode()); err != nil {
		t.Fatal(err)
	}
	f.Host.SetFaults(winsim.Faults{UpdatesNeverInstalled: []string{"KB5070010"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx,
		"dism.exe /Online /Add-Package /PackagePath:C:\\u\\ssu.cab /Quiet /NoRestart\n'code=' + $LASTEXITCODE\n'found=' + @(Get-HotFix -Id KB5070010 -ErrorAction SilentlyContinue).Count")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "code=0") || !strings.Contains(stdout, "found=0") {
		t.Fatalf("stdout %q stderr %q, want code=0 and found=0", stdout, decodeCLIXML(stderr))
	}
}
