package winsim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
)

func startTestHost(t *testing.T, edit func(*HostConfig)) *Host {
	t.Helper()
	cfg := HostConfig{ComputerName: "WIN-UNIT", AdminPassword: "pw", Dir: t.TempDir(), UBR: 1234,
		Ports: &Ports{WinRM: PortDisabled, WinRMHTTPS: PortDisabled, SSH: PortDisabled}, RebootDelay: 100 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	h, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	return h
}

func encoded(script string) string {
	u := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return "powershell.exe -NoProfile -EncodedCommand " + base64.StdEncoding.EncodeToString(b)
}

func run(t *testing.T, h *Host, line string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = h.execute(context.Background(), execRequest{Transport: "test", User: "Administrator", CommandLine: line, Stdout: &o, Stderr: &e})
	return o.String(), e.String(), code
}

func TestEffects(t *testing.T) {
	h := startTestHost(t, nil)
	payload := []byte("kubelet binary \x00\x01\x02")
	sum := sha256.Sum256(payload)
	for _, tc := range []struct {
		name, script, stdout string
		code                 int
	}{
		{"set-get", "New-Item -ItemType Directory -Force -Path 'C:\\k' | Out-Null\nSet-Content -Path 'C:\\k\\a.txt' -Value 'hello'\nGet-Content -Path 'c:\\K\\A.TXT'", "hello", 0},
		{"add-content", "Add-Content -Path 'C:\\k\\a.txt' -Value 'more'\n(Get-Content 'C:\\k\\a.txt' -Raw)", "hello\r\nmore", 0},
		{"write-all-bytes", "[IO.File]::WriteAllBytes('C:\\k\\bin\\x.exe', [Convert]::FromBase64String('" + base64.StdEncoding.EncodeToString(payload) + "'))\n(Get-FileHash -Algorithm SHA256 -LiteralPath 'C:\\k\\bin\\x.exe').Hash", strings.ToUpper(hex.EncodeToString(sum[:])), 0},
		{"hash-pipeline", "Get-FileHash -Algorithm SHA256 'C:\\k\\bin\\x.exe' | Select-Object -ExpandProperty Hash", strings.ToUpper(hex.EncodeToString(sum[:])), 0},
		{"test-path", "Test-Path -LiteralPath 'C:\\k\\bin\\x.exe'\nTest-Path 'C:\\nope'\nTest-Path 'C:\\k' -PathType Leaf", "True\r\nFalse\r\nFalse", 0},
		{"new-item-dir", "New-Item -ItemType Directory -Force -Path 'C:\\etc\\kubernetes\\pki' | Out-Null\nTest-Path 'C:\\etc\\kubernetes\\pki' -PathType Container", "True", 0},
		{"move-remove", "Move-Item -LiteralPath 'C:\\k\\a.txt' -Destination 'C:\\k\\b.txt' -Force\nTest-Path 'C:\\k\\a.txt'\nRemove-Item -LiteralPath 'C:\\k\\b.txt' -Force\nTest-Path 'C:\\k\\b.txt'", "False\r\nFalse", 0},
		{"remove-missing-silent", "Remove-Item 'C:\\missing' -ErrorAction SilentlyContinue\nexit 0", "", 0},
		{"last-failed-exit-1", "Remove-Item 'C:\\missing' -ErrorAction SilentlyContinue", "", 1},
		{"env", "$env:COMPUTERNAME\nhostname\n[Environment]::MachineName", "WIN-UNIT\r\nWIN-UNIT\r\nWIN-UNIT", 0},
		{"build", "[Environment]::OSVersion.Version.ToString()\n(Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion').CurrentBuild\nGet-ItemPropertyValue -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion' -Name UBR", "10.0.20348.0\r\n20348\r\n1234", 0},
		{"if-else", "$h = 'ABC'\nif ($h -ne 'abc') { Write-Output 'differs' } else { Write-Output 'same' }\nif (-not (Test-Path 'C:\\nope')) { 'absent' }", "same\r\nabsent", 0},
		{"exit", "Write-Output 'a'\nexit 42\nWrite-Output 'b'", "a", 42},
		{"throw", "throw 'bad config'", "", 1},
		{"stop-preference", "$ErrorActionPreference = 'Stop'\nGet-Content 'C:\\nope'\nWrite-Output 'not reached'", "", 1},
		{"try-catch", "try { Get-Content 'C:\\nope' -ErrorAction Stop } catch { Write-Output 'caught' }", "caught", 0},
		{"double-quoted", "$d = 'C:\\x'\nWrite-Output \"dir is $d\\y and $env:COMPUTERNAME\"", "dir is C:\\x\\y and WIN-UNIT", 0},
		{"concat", "New-Service -Name 'svc' -BinaryPathName 'C:\\x.exe' | Out-Null\nWrite-Output ('svc' + ' ' + (Get-Service -Name 'svc').Status)\n$n = 2 + 3\n$n", "svc Stopped\r\n5", 0},
		{"unknown-expression-fails", "('a' 'b')", "", 1},
		// A command the host does not model fails as an unknown command does
		// on Windows (CommandNotFoundException), never "recorded, succeeds".
		{"unknown-fails", "Enable-WindowsOptionalFeatur -Online -FeatureName Containers", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, h, encoded(tc.script))
			if strings.TrimRight(out, "\r\n") != tc.stdout || code != tc.code {
				t.Fatalf("stdout %q code %d (stderr %q), want %q code %d", out, code, errOut, tc.stdout, tc.code)
			}
		})
	}
}

func TestServicesAndHook(t *testing.T) {
	var starts atomic.Int32
	h := startTestHost(t, func(c *HostConfig) {
		c.Programs = map[string]Program{"kubelet": func(ctx context.Context, p *Process) int {
			starts.Add(1)
			p.ServiceRunning()
			<-ctx.Done()
			return 0
		}}
		c.ServiceStartTimeout = 200 * time.Millisecond
	})
	if err := h.WriteFile(`C:\k\kubelet.exe`, []byte(simulatedExecutableMagic+"\r\nkubelet v1.36.3\r\n")); err != nil {
		t.Fatal(err)
	}
	script := "New-Service -Name 'kubelet' -BinaryPathName 'C:\\k\\kubelet.exe --v=2' -StartupType Automatic | Out-Null\n" +
		"Start-Service 'kubelet'\n(Get-Service -Name 'kubelet').Status"
	if out, errOut, code := run(t, h, encoded(script)); strings.TrimSpace(out) != "Running" || code != 0 {
		t.Fatalf("stdout %q stderr %q code %d", out, errOut, code)
	}
	svc, _ := h.Service("KUBELET")
	if svc.BinaryPathName != `C:\k\kubelet.exe --v=2` || starts.Load() != 1 {
		t.Fatalf("service %+v, hook calls %d", svc, starts.Load())
	}
	if _, errOut, code := run(t, h, encoded("New-Service -Name 'broken' -BinaryPathName 'x.exe'\nStart-Service 'broken'")); code != 1 || !strings.Contains(errOut, "cannot be started") {
		t.Fatalf("missing binary: code %d stderr %q", code, errOut)
	}
	// CLIXML for -EncodedCommand errors, plain text for -File.
	if _, errOut, _ := run(t, h, encoded("Get-Service -Name 'nope'")); !strings.HasPrefix(errOut, "#< CLIXML") {
		t.Fatalf("stderr %q, want CLIXML", errOut)
	}
	if err := h.WriteFile(`C:\s.ps1`, []byte("Get-Service -Name 'nope'\n")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, h, `powershell -File "C:\s.ps1"`); strings.Contains(errOut, "CLIXML") || code != 0 {
		t.Fatalf("-File: stderr %q code %d", errOut, code)
	}
	// Reboot: services stop, Automatic ones start again.
	h.Reboot()
	if svc, _ := h.Service("kubelet"); svc.Status != StatusRunning || starts.Load() != 2 {
		t.Fatalf("after reboot %+v, hook calls %d", svc, starts.Load())
	}
}

func TestCmdLines(t *testing.T) {
	h := startTestHost(t, nil)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	b64 := base64.StdEncoding.EncodeToString(data)
	for i := 0; i < len(b64); i += 4000 {
		end := min(i+4000, len(b64))
		if _, _, code := run(t, h, `echo `+b64[i:end]+` >> "%TEMP%\winrmcp-1.tmp"`); code != 0 {
			t.Fatal("echo append failed")
		}
	}
	// The chunks reach the temp file; winrmcp's real restore script runs in
	// TestTerraformStyleUploadAndRun (thirdparty_test.go).
	if got, _ := h.ReadFile(`%TEMP%\winrmcp-1.tmp`); len(got) < len(b64) {
		t.Fatalf("echo chunks: %d bytes, want at least %d", len(got), len(b64))
	}
	if err := h.WriteFile(`C:\Temp\terraform_1.cmd`, []byte("echo hello from cmd\r\n@echo off\r\necho quiet\r\nexit /b 3\r\n")); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, h, "C:/Temp/terraform_1.cmd")
	if code != 3 || !strings.Contains(out, ">echo hello from cmd\r\nhello from cmd\r\n") || !strings.HasSuffix(out, "quiet\r\n") {
		t.Fatalf("batch: code %d out %q", code, out)
	}
}

func TestStepFaults(t *testing.T) {
	h := startTestHost(t, func(c *HostConfig) {
		c.Faults.Steps = []StepFault{{Step: "flaky", ExitCode: 9, Stderr: "transient", Times: 1}}
	})
	script := "# step: flaky\nWrite-Output 'ok'"
	if _, errOut, code := run(t, h, encoded(script)); code != 9 || errOut != "transient" {
		t.Fatalf("first run: code %d stderr %q", code, errOut)
	}
	if out, _, code := run(t, h, encoded(script)); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Fatalf("second run: code %d out %q", code, out)
	}
	recs := h.Scripts()
	if len(recs) != 2 || recs[0].Step != "flaky" || recs[0].ExitCode != 9 {
		t.Fatalf("records %+v", recs)
	}
	log, _ := os.ReadFile(h.Dir() + "/scripts.log")
	if !strings.Contains(string(log), "step=flaky") || !strings.Contains(string(log), "Write-Output 'ok'") {
		t.Fatalf("scripts.log:\n%s", log)
	}
}

// A FailAt fault writes the error record the engine writes for a throw at
// that place, and a long line shows in Windows PowerShell 5.1's 69-character
// window around the error.
func TestStepFaultFailAt(t *testing.T) {
	script := "# step: real\n$x = 1\nWrite-Output 'a'; throw 'boom'\n"
	h := startTestHost(t, nil)
	_, want, code := run(t, h, encoded(script))
	if code != 1 || !strings.Contains(want, "throw 'boom'") {
		t.Fatalf("the engine's throw: code %d, stderr %q", code, want)
	}
	faulted := strings.Replace(script, "real", "faulted", 1)
	h.SetFaults(Faults{Steps: []StepFault{{Step: "faulted", Stderr: "boom", FailAt: regexp.MustCompile(`(throw 'boom')`)}}})
	if _, got, code := run(t, h, encoded(faulted)); code != 1 || got != want {
		t.Fatalf("FailAt: code %d, stderr\n%q\nwant\n%q", code, got, want)
	}

	long := "# step: long\n[IO.File]::WriteAllBytes('C:\\k\\x', [Convert]::FromBase64String('" + strings.Repeat("QUJD", 40) + "SECRETSECRET" + strings.Repeat("REVG", 40) + "'))\n"
	h.SetFaults(Faults{Steps: []StepFault{{Step: "long", Stderr: "boom", FailAt: regexp.MustCompile(`SECRETSECRET`)}}})
	// Run as a file: the error goes to stderr as text, naming the file.
	if err := h.WriteFile(`C:\Windows\Temp\long.ps1`, []byte(long)); err != nil {
		t.Fatal(err)
	}
	_, got, _ := run(t, h, `powershell.exe -NoProfile -File "C:\Windows\Temp\long.ps1"`)
	line := strings.Split(long, "\n")[1]
	at := strings.Index(line, "SECRETSECRET")
	wantEcho := "+ ... " + line[at-49:at+20] + " ...\r\n+ " + strings.Repeat(" ", 53) + strings.Repeat("~", 12) + "\r\n"
	if !strings.Contains(got, fmt.Sprintf("At C:\\Windows\\Temp\\long.ps1:2 char:%d\r\n", at+1)) || !strings.Contains(got, wantEcho) {
		t.Fatalf("the long line's echo:\n%s\nwant\n%s", got, wantEcho)
	}
}

func TestShutdownCommands(t *testing.T) {
	for line, want := range map[string]bool{
		`Stop-Computer -Force`: true,
		`& 'C:\Windows\System32\Sysprep\sysprep.exe' /generalize /oobe /shutdown /quiet /unattend:C:\Windows\Temp\unattend.xml`:                     true,
		`C:\Windows\System32\Sysprep\sysprep.exe /generalize /oobe /shutdown`:                                                                       true,
		`Start-Process -FilePath 'C:\Windows\System32\Sysprep\Sysprep.exe' -ArgumentList '/generalize /oobe /shutdown /quiet' -Wait`:                true,
		`Start-Process -FilePath "$env:SystemRoot\System32\Sysprep\sysprep.exe" -ArgumentList '/generalize','/oobe','/shutdown' -NoNewWindow -Wait`: true,
		`shutdown.exe /s /t 0`: true,
		`& 'C:\Windows\System32\Sysprep\sysprep.exe' /generalize /oobe /reboot`: false,
		`shutdown /r /t 0`:                 false,
		`Write-Output 'sysprep /shutdown'`: false,
	} {
		var shut atomic.Bool
		done := make(chan struct{})
		h := startTestHost(t, func(c *HostConfig) {
			c.OnShutdown = func(*Host) { shut.Store(true); close(done) }
		})
		// sysprep refuses a missing answer file.
		_ = h.WriteFile(`C:\Windows\Temp\unattend.xml`, []byte(minimalUnattend))
		_, stderr, code := run(t, h, encoded(line))
		if code != 0 {
			t.Errorf("%s: exit %d, stderr %q", line, code, stderr)
		}
		if want {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("%s: the host did not shut down", line)
				continue
			}
			if h.Up() {
				t.Errorf("%s: the host is still up after shutting down", line)
			}
		} else {
			time.Sleep(2 * restartComputerGrace)
			if shut.Load() {
				t.Errorf("%s: shut the host down", line)
			}
		}
	}
	// cmd.exe command lines too: start /wait, since cmd.exe waits for
	// sysprep.exe, a GUI-subsystem program, only in a batch file.
	done := make(chan struct{})
	h := startTestHost(t, func(c *HostConfig) { c.OnShutdown = func(*Host) { close(done) } })
	_ = h.WriteFile(`C:\unattend.xml`, []byte(minimalUnattend))
	if _, _, code := run(t, h, `start /wait C:\Windows\System32\Sysprep\sysprep.exe /generalize /oobe /shutdown /unattend:C:\unattend.xml`); code != 0 {
		t.Errorf("cmd sysprep: exit %d", code)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("cmd sysprep /shutdown did not shut the host down")
	}
}

// OnScript hands the hook each script's record as the script ends, the
// record Scripts lists, with its step and exit code.
func TestOnScript(t *testing.T) {
	var mu sync.Mutex
	var seen []ScriptRecord
	h := startTestHost(t, func(c *HostConfig) {
		c.OnScript = func(_ *Host, r ScriptRecord) { mu.Lock(); seen = append(seen, r); mu.Unlock() }
	})
	run(t, h, encoded("# step: first\nWrite-Output 'one'"))
	run(t, h, encoded("# step: second\nexit 3"))
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0].Step != "first" || seen[0].ExitCode != 0 || seen[1].Step != "second" || seen[1].ExitCode != 3 {
		t.Fatalf("OnScript saw %+v", seen)
	}
	if logged := h.Scripts(); len(logged) != 2 || logged[1].Text != seen[1].Text {
		t.Errorf("Scripts lists %+v, OnScript saw %+v", logged, seen)
	}
}

// minimalUnattend is an answer file the simulated sysprep accepts.
const minimalUnattend = `<unattend xmlns="urn:schemas-microsoft-com:unattend"><settings pass="oobeSystem"/></unattend>`

// TestSysprepRefusesAnUnusableAnswerFile: sysprep takes an answer file Setup
// can use (the unattend namespace, the seven configuration passes, an
// AdministratorPassword only in auditSystem or oobeSystem) and refuses
// another without shutting down.
func TestSysprepRefusesAnUnusableAnswerFile(t *testing.T) {
	var shut atomic.Bool
	h := startTestHost(t, func(c *HostConfig) { c.OnShutdown = func(*Host) { shut.Store(true) } })
	for body, want := range map[string]string{
		`<unattend/>`: "not unattend in urn:schemas-microsoft-com:unattend",
		`<unattend xmlns="urn:schemas-microsoft-com:unattend"><settings pass="firstBoot"/></unattend>`:                                                                                        `"firstBoot", which is no configuration pass`,
		`<unattend xmlns="urn:schemas-microsoft-com:unattend"><settings pass="specialize"><component><UserAccounts><AdministratorPassword/></UserAccounts></component></settings></unattend>`: "AdministratorPassword in the specialize pass",
		`<unattend xmlns="urn:schemas-microsoft-com:unattend"><settings`:                                                                                                                      "not well-formed XML",
	} {
		_ = h.WriteFile(`C:\Windows\Temp\bad.xml`, []byte(body))
		_, stderr, code := run(t, h, encoded(`& 'C:\Windows\System32\Sysprep\sysprep.exe' /generalize /oobe /shutdown /quiet /unattend:C:\Windows\Temp\bad.xml | Out-Null; exit $LASTEXITCODE`))
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want a refusal naming %q", body, code, stderr, want)
		}
	}
	time.Sleep(2 * restartComputerGrace)
	if shut.Load() {
		t.Error("a refused sysprep shut the host down")
	}
}
