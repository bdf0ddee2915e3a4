package winsim_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestFirewallScopeBySource dials a port whose only rule names remote
// addresses, from a source inside them and from one outside: Windows
// Defender Firewall matches each connection's remote address against the
// rule (New-NetFirewallRule -RemoteAddress) and drops the others unanswered,
// so the outside client's connect times out while the inside one's is
// accepted (firewall_scope.go).
func TestFirewallScopeBySource(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the simulator filters sources with a Linux socket filter")
	}
	cases := []struct {
		name            string
		fw              winsim.Firewall
		scope           []string
		inside, outside string // source addresses
	}{
		// The management network of the sandbox is its own processes' address.
		{"clients-admitted", winsim.Firewall{Profile: "Public"}, []string{"127.0.0.1"}, "127.0.0.1", "127.9.9.9"},
		{"subnet-admits-a-foreign-source", winsim.Firewall{Profile: "Public"}, []string{"127.9.9.0/24"}, "127.9.9.9", "127.0.0.1"},
		{"range-and-address", winsim.Firewall{Profile: "Public"}, []string{"127.8.0.1-127.8.0.9", "127.0.0.1"}, "127.8.0.5", "127.8.0.10"},
		// The sandbox's clients seen at a runner's address outside the scope.
		{"clients-seen-elsewhere", winsim.Firewall{Profile: "Public", ClientAddress: "10.9.9.9"}, []string{"127.0.0.1", "127.9.9.9"}, "127.9.9.9", "127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// source: https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule (-RemoteAddress)
			fw := tc.fw
			f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
				c.Firewall = &fw
				b, err := json.Marshal([]winsim.FirewallRule{{Name: "ssh-scoped", DisplayName: "ssh", Direction: "Inbound", Action: "Allow",
					Protocol: "TCP", LocalPort: []string{"22"}, Enabled: "True", Profile: "Any", RemoteAddress: tc.scope}})
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(c.Dir, "firewall.json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			})
			ssh := net.JoinHostPort(f.Host.IP(), strconv.Itoa(f.Host.Ports().SSH))
			if !admittedFrom(t, tc.inside, ssh) {
				t.Errorf("a connection from %s, inside -RemoteAddress %v, was dropped", tc.inside, tc.scope)
			}
			if admittedFrom(t, tc.outside, ssh) {
				t.Errorf("a connection from %s, outside -RemoteAddress %v, was admitted", tc.outside, tc.scope)
			}
		})
	}
}

// admittedFrom dials addr from a source address: true when accepted, false
// when the attempt goes unanswered until the dial's timeout.
func admittedFrom(t *testing.T, source, addr string) bool {
	t.Helper()
	d := net.Dialer{Timeout: dropDialTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	start := time.Now()
	c, err := d.Dial("tcp", addr)
	if err == nil {
		_ = c.Close()
		return true
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("dial %s from %s: %v, want accepted or dropped (a timeout)", addr, source, err)
	}
	if waited := time.Since(start); waited < dropDialTimeout {
		t.Fatalf("dial %s from %s gave up after %v, before its timeout", addr, source, waited)
	}
	return false
}
