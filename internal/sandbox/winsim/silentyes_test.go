package winsim

import (
	"html"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNoSilentYes holds each case a held-out suite found answered with a
// silent yes (issue 33) to what Windows PowerShell 5.1 answers, or to a
// refusal as not modelled: each case names the upstream source it follows.
func TestNoSilentYes(t *testing.T) {
	h := startTestHost(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	open := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	shut := strconv.Itoa(closed.Addr().(*net.TCPAddr).Port)
	_ = closed.Close()

	for _, tc := range []struct {
		name, script, stdout, stderr string
		code                         int
	}{
		// New-NetFirewallRule -Protocol: "If a port number is identified
		// by using port1 or port2, then this parameter must be set to TCP
		// or UDP" (learn.microsoft.com): refused, never stored.
		{"firewall-port-with-protocol-any", "New-NetFirewallRule -Name x1 -DisplayName x1 -LocalPort 80 | Out-Null\n'stored'", "", "-LocalPort 80 with -Protocol Any", 1},
		{"firewall-rule-not-stored", "try { Get-NetFirewallRule -Name x1 -ErrorAction Stop | Out-Null; 'found' } catch { 'absent' }", "absent", "", 0},
		// The rule's port filter is one-to-one with it (Get-NetFirewallPortFilter).
		{"firewall-port-filter", "New-NetFirewallRule -Name x2 -DisplayName x2 -Protocol tcp -LocalPort '8080','9000-9010' -Description 'd2' -Group 'g2' | Out-Null\n$f = Get-NetFirewallRule -Name x2 | Get-NetFirewallPortFilter\n$f.Protocol\n$f.LocalPort -join ','\n$f.RemotePort\n$r = Get-NetFirewallRule -Name x2\n$r.Description\n$r.Group", "TCP\r\n8080,9000-9010\r\nAny\r\nd2\r\ng2", "", 0},
		{"firewall-port-filter-any", "New-NetFirewallRule -Name x3 -DisplayName x3 | Out-Null\n$f = Get-NetFirewallPortFilter -AssociatedNetFirewallRule (Get-NetFirewallRule -Name x3)\n$f.Protocol\n$f.LocalPort", "Any\r\nAny", "", 0},
		{"firewall-protocol-icmp-refused", "New-NetFirewallRule -Name x4 -DisplayName x4 -Protocol ICMPv4 | Out-Null", "", "-Protocol ICMPv4", 1},
		{"firewall-port-keyword-refused", "New-NetFirewallRule -Name x5 -DisplayName x5 -Protocol TCP -LocalPort RPC | Out-Null", "", "-LocalPort RPC", 1},
		// FileSystemContentReaderWriter.ReadDelimited, raw: an empty
		// stream adds no block.
		{"get-content-raw-empty", "Set-Content -Path C:\\e.txt -Value '' -NoNewline\n$c = Get-Content C:\\e.txt -Raw\n$null -eq $c\n@(Get-Content C:\\e.txt -Raw).Count", "True\r\n0", "", 0},
		{"get-content-raw-text", "Set-Content -Path C:\\f.txt -Value 'a'\n(Get-Content C:\\f.txt -Raw) -eq \"a`r`n\"", "True", "", 0},
		// A child gets a copy of its parent's environment block.
		{"env-child-cmd", "$env:FOO = 'bar'\ncmd /c echo %FOO%", "bar", "", 0},
		{"env-child-cmd-unset", "cmd /c echo %NOSUCHVAR%", "%NOSUCHVAR%", "", 0},
		{"env-child-powershell", "$env:FOO = 'baz'\npowershell.exe -NoProfile -Command '$env:FOO'", "baz", "", 0},
		{"env-child-batch", "$env:FOO = 'qux'\nSet-Content -Path C:\\b.cmd -Value '@echo %FOO%'\n& C:\\b.cmd", "qux", "", 0},
		// Test-NetConnection: -InformationLevel Quiet is a Boolean; 5.1
		// has no -Quiet.
		{"tnc-quiet-open", "Test-NetConnection -ComputerName 127.0.0.1 -Port " + open + " -InformationLevel Quiet", "True", "", 0},
		{"tnc-quiet-closed", "$r = Test-NetConnection 127.0.0.1 -Port " + shut + " -InformationLevel Quiet\n$r.GetType().FullName\n$r", "System.Boolean\r\nFalse", "", 0},
		{"tnc-detailed", "(Test-NetConnection -ComputerName 127.0.0.1 -Port " + open + ").TcpTestSucceeded", "True", "", 0},
		{"tnc-no-quiet-switch", "Test-NetConnection -ComputerName 127.0.0.1 -Port " + open + " -Quiet", "", "A parameter cannot be found that matches parameter name 'Quiet'", 1},
		{"tnc-icmp-refused", "Test-NetConnection -ComputerName 127.0.0.1", "", "SimulatorNotModelled", 1},
		// HKCU\Environment is not modelled: refused, not the machine's value.
		{"user-env-refused", "[Environment]::GetEnvironmentVariable('PATH', 'User')", "", "HKCU", 1},
		{"machine-env", "[Environment]::GetEnvironmentVariable('SystemRoot', 'Machine')", "C:\\Windows", "", 0},
		// -Description is stored (the service key's Description value).
		{"service-description", "New-Service -Name s1 -BinaryPathName 'C:\\s1.exe' -Description 'first' | Out-Null\n(Get-ItemProperty 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\s1').Description\nSet-Service -Name s1 -Description 'second'\n(Get-ItemProperty 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\s1').Description", "first\r\nsecond", "", 0},
		// Sub-features and management tools are not modelled: refused.
		{"feature-management-tools-refused", "Install-WindowsFeature -Name Containers -IncludeManagementTools", "", "-IncludeManagementTools", 1},
		{"feature-all-sub-refused", "Install-WindowsFeature -Name Containers -IncludeAllSubFeature", "", "-IncludeAllSubFeature", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, h, encoded(tc.script))
			if code != tc.code || strings.TrimRight(stdout, "\r\n") != tc.stdout || !strings.Contains(stderrText(stderr), tc.stderr) {
				t.Errorf("got code %d stdout %q stderr %q; want code %d stdout %q stderr containing %q", code, stdout, stderrText(stderr), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestStartProcessWaitsOnlyWithWait: Start-Process returns at once without
// -Wait while the process runs on, and waits with it; -ArgumentList is one
// command line, joined by spaces, split as CommandLineToArgvW does.
func TestStartProcessWaitsOnlyWithWait(t *testing.T) {
	h := startTestHost(t, nil)
	// A child powershell.exe that waits for a file, then writes another:
	// without -Wait the script goes on (and creates the file it waits for).
	child := `while (-not (Test-Path C:\go.txt)) { Start-Sleep -Milliseconds 20 }; Set-Content -Path C:\done.txt -Value ok`
	script := "Start-Process -FilePath powershell.exe -ArgumentList '-NoProfile','-Command',\"`\"" + child + "`\"\"\n" +
		"Test-Path C:\\done.txt\nSet-Content -Path C:\\go.txt -Value go"
	stdout, stderr, code := run(t, h, encoded(script))
	if code != 0 || strings.TrimSpace(stdout) != "False" {
		t.Fatalf("without -Wait: code %d stdout %q stderr %q; want the script to go on at once (False)", code, stdout, stderrText(stderr))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ok, _ := h.fs.Stat(`C:\done.txt`); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the process started without -Wait never ran to its end")
		}
		time.Sleep(20 * time.Millisecond) // test-side observation of an asynchronous child
	}

	stdout, stderr, code = run(t, h, encoded("Start-Process -FilePath cmd.exe -ArgumentList '/c','echo a b > C:\\w.txt' -Wait\n(Get-Content C:\\w.txt -Raw).Trim()"))
	if code != 0 || strings.TrimSpace(stdout) != "a b" {
		t.Fatalf("with -Wait: code %d stdout %q stderr %q; want the file written before Start-Process returned", code, stdout, stderrText(stderr))
	}
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{[]string{"/c", "echo a b"}, []string{"/c", "echo", "a", "b"}},
		{[]string{`"C:\Program Files\x.txt"`, "-y"}, []string{`C:\Program Files\x.txt`, "-y"}},
		{nil, nil},
	} {
		if got := startProcessArgs(tc.in); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("startProcessArgs(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// stderrText turns powershell.exe's CLIXML error stream back into text.
func stderrText(s string) string {
	if !strings.HasPrefix(s, "#< CLIXML") {
		return s
	}
	var b strings.Builder
	for _, m := range regexp.MustCompile(`(?s)<S S="Error">(.*?)</S>`).FindAllStringSubmatch(s, -1) {
		b.WriteString(html.UnescapeString(strings.NewReplacer("_x000D_", "\r", "_x000A_", "\n", "_x005F_", "_").Replace(m[1])))
	}
	return b.String()
}

// TestCommonParametersWithoutStreamRefused: -Verbose, -Debug and -Confirm
// turn on a stream or a prompt the engine does not have: refused, not
// dropped; their $false forms bind.
func TestCommonParametersWithoutStreamRefused(t *testing.T) {
	h := startTestHost(t, nil)
	for _, tc := range []struct {
		script string
		code   int
		stderr string
	}{
		{"Get-Service -Name WinRM -Verbose | Out-Null", 1, "-Verbose"},
		{"Get-Service -Name WinRM -Debug | Out-Null", 1, "-Debug"},
		{"New-Item -ItemType Directory -Path C:\\c1 -Confirm | Out-Null", 1, "-Confirm"},
		{"New-Item -ItemType Directory -Path C:\\c2 -Confirm:$false | Out-Null\nGet-Service -Name WinRM -Verbose:$false | Out-Null\n'ok'", 0, ""},
	} {
		_, stderr, code := run(t, h, encoded(tc.script))
		if code != tc.code || !strings.Contains(stderrText(stderr), tc.stderr) {
			t.Errorf("%q: code %d stderr %q; want code %d stderr containing %q", tc.script, code, stderrText(stderr), tc.code, tc.stderr)
		}
	}
}
