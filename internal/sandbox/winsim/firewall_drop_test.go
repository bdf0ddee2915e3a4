package winsim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// dialEnv asks the test binary, run again as a helper process, to dial an
// address and print how it went instead of running the tests
// (dialFromAnotherProcess).
const dialEnv = "WINSIM_TEST_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		fmt.Println(dialOnce(addr))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dialOnce dials addr with dropDialTimeout and says how it went:
// "connected", "refused", "timeout <seconds>" or "error <text>".
func dialOnce(addr string) string {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, dropDialTimeout)
	var ne net.Error
	switch {
	case err == nil:
		_ = c.Close()
		return "connected"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout " + strconv.FormatFloat(time.Since(start).Seconds(), 'f', 2, 64)
	}
	return "error " + err.Error()
}

// TestFirewallDropsConnections: a port no firewall rule admits leaves a
// connection attempt unanswered until the client's own dial timeout, for
// a client in another process too (the provider runs as Terraform's
// plugin), again and again, while a port a rule admits serves; a host
// that is down refuses on every port.
func TestFirewallDropsConnections(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dropped ports are modelled on Linux only (firewall_drop.go)")
	}
	outside := winsim.Firewall{Profile: "Public", ClientsOutsideSubnet: true}
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Firewall = &outside
		// The stock rules (WinRM HTTP: Domain/Private from anywhere,
		// Public from the local subnet only) and the test's own way in.
		rules := append(winsim.StockFirewallRules(), winsim.FirewallRule{Name: "https", DisplayName: "https", Direction: "Inbound",
			Action: "Allow", Protocol: "TCP", LocalPort: []string{"5986", "22"}, Enabled: "True", Profile: "Any", RemoteAddress: []string{"Any"}})
		b, err := json.Marshal(rules)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.Dir, "firewall.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	http := net.JoinHostPort("127.0.0.1", strconv.Itoa(f.Host.Ports().WinRM))
	for i := range 2 {
		out := dialFromAnotherProcess(t, http)
		secs, ok := strings.CutPrefix(out, "timeout ")
		waited, err := strconv.ParseFloat(secs, 64)
		if !ok || err != nil || waited < dropDialTimeout.Seconds() {
			t.Fatalf("dial %d of WinRM HTTP from outside the subnet, from another process: %q, want a timeout after %v (source: %s, -RemoteAddress LocalSubnet)",
				i, out, dropDialTimeout, newNetFirewallRule)
		}
	}
	if admitted(t, http) {
		t.Fatal("WinRM HTTP from outside the subnet accepted a connection")
	}
	// Admitted by a rule: served.
	if !admitted(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(f.Host.Ports().SSH))) {
		t.Fatal("SSH, admitted by a rule, did not accept")
	}
	// Down: every port refuses.
	if err := f.Host.Stop(); err != nil {
		t.Fatal(err)
	}
	if out := dialFromAnotherProcess(t, http); out != "refused" {
		t.Fatalf("dial of a stopped host: %q, want refused", out)
	}
}

// dialFromAnotherProcess dials addr from a process of its own (the test
// binary again, TestMain), as Terraform's plugin process dials a guest.
func dialFromAnotherProcess(t *testing.T, addr string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), dialEnv+"="+addr)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
