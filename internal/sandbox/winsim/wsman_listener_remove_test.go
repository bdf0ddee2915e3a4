package winsim_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// winrmHTTPOff is what the provider's join runs on a node reached through
// VMware Tools (bootstrap's remote-logins-off.ps1.tmpl; the simulator imports
// nothing of the provider, so the test carries its own copy).
const winrmHTTPOff = `$ErrorActionPreference = 'Stop'
if (Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | Where-Object { $_.Transport -eq 'HTTP' }) {
  Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address = '*'; Transport = 'HTTP'}
}
foreach ($rule in @('WINRM-HTTP-In-TCP', 'WINRM-HTTP-In-TCP-PUBLIC')) {
  if (Get-NetFirewallRule -Name $rule -ErrorAction SilentlyContinue) {
    Set-NetFirewallRule -Name $rule -Enabled False
  }
}
Write-Output 'off'
`

// dial5985 reports how a connection to the WinRM HTTP port ends:
// "accepted", "refused" or "dropped" (no answer until the dial timeout).
func dial5985(t *testing.T, h *winsim.Host, port int) string {
	t.Helper()
	const timeout = 1500 * time.Millisecond
	c, err := net.DialTimeout("tcp", net.JoinHostPort(h.IP(), strconv.Itoa(port)), timeout)
	if err == nil {
		_ = c.Close()
		return "accepted"
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &ne) && ne.Timeout():
		return "dropped"
	}
	return err.Error()
}

// TestWinRMHTTPListenerRemoved: on a stock host whose firewall admits the
// client (a Private network), Remove-WSManInstance closes 5985 at once
// (refused: nothing is registered on the port), disabling the stock rules
// then drops connection attempts (stealth mode), and a reboot brings the
// listener not back. The script runs again without error; what is not
// modelled or not there is refused.
func TestWinRMHTTPListenerRemoved(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		if err := winsim.Install(c.Dir, winsim.StockInstallation()); err != nil {
			t.Fatal(err)
		}
		c.Firewall = &winsim.Firewall{Profile: "Private"}
	})
	h := f.Host
	port := h.Ports().WinRM
	if port == 0 {
		t.Fatal("a stock host serves no WinRM HTTP listener")
	}
	if got := dial5985(t, h, port); got != "accepted" {
		t.Fatalf("before: 5985 %s, want accepted", got)
	}
	if _, stderr, code := console(t, h, `Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTP'}`); code != 0 {
		t.Fatalf("Remove-WSManInstance: exit %d: %s", code, stderr)
	}
	if got := dial5985(t, h, port); got != "refused" {
		t.Fatalf("after the listener's removal, rules enabled: 5985 %s, want refused", got)
	}
	for i := range 2 { // rerunnable
		if out, stderr, code := console(t, h, winrmHTTPOff); code != 0 || strings.TrimSpace(out) != "off" {
			t.Fatalf("run %d: exit %d, out %q: %s", i, code, out, stderr)
		}
	}
	if got := dial5985(t, h, port); got != "dropped" {
		t.Fatalf("rules disabled: 5985 %s, want dropped", got)
	}
	out, _, _ := console(t, h, `(Get-NetFirewallRule -Name 'WINRM-HTTP-In-TCP').Enabled; (Get-NetFirewallRule -Name 'WINRM-HTTP-In-TCP-PUBLIC').Enabled
Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | ForEach-Object { 'listener ' + $_.Transport }`)
	if got := strings.Fields(out); strings.Join(got, " ") != "False False" {
		t.Fatalf("rules and listeners: %q, want both rules False and no listener", out)
	}
	for _, c := range []struct{ name, script, want string }{
		{"no listener", `Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTP'}`,
			"cannot find the resource identified by the resource URI and selectors"},
		{"the HTTPS listener", `Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'}`, "not model"},
		{"another resource", `Remove-WSManInstance -ResourceURI winrm/config/Plugin -SelectorSet @{Name='x'}`, "not model"},
		{"a remote computer", `Remove-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTP'} -ComputerName other`, "not model"},
	} {
		_, stderr, code := console(t, h, "$ErrorActionPreference = 'Stop'\n"+c.script)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure with %q", c.name, code, stderr, c.want)
		}
	}
	// No OpenSSH Server on a stock host: the step's other half leaves it be
	// and succeeds.
	if out, stderr, code := console(t, h, sshPasswordsOff); code != 0 || strings.TrimSpace(out) != "no OpenSSH Server" {
		t.Fatalf("the OpenSSH half without sshd: exit %d, out %q: %s", code, out, stderr)
	}
	h.Reboot()
	if got := dial5985(t, h, port); got != "dropped" {
		t.Fatalf("after a reboot: 5985 %s, want dropped", got)
	}
	if _, stderr, code := console(t, h, `Set-NetFirewallRule -Name 'WINRM-HTTP-In-TCP' -Enabled True`); code != 0 {
		t.Fatalf("re-enabling a rule: exit %d: %s", code, stderr)
	}
	if got := dial5985(t, h, port); got != "refused" {
		t.Fatalf("a rule admits 5985 again, no listener: %s, want refused", got)
	}
}
