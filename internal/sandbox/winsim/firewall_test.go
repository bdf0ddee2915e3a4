package winsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const newNetFirewallRule = "https://learn.microsoft.com/en-us/powershell/module/netsecurity/new-netfirewallrule"

// TestFirewallRejects creates a rule for the SSH port with
// New-NetFirewallRule on a host whose inbound filtering is on
// (HostConfig.Firewall), restarts it (rules are read at boot) and dials
// the port: -Profile and -RemoteAddress decide whether the clients are
// admitted, as Windows Defender Firewall decides.
func TestFirewallRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fw     winsim.Firewall
		args   string // New-NetFirewallRule's -Profile/-RemoteAddress
		admit  bool
		source string
	}{
		{"domain-only-not-on-public", winsim.Firewall{Profile: "Public"}, "-Profile Domain", false, newNetFirewallRule + " (-Profile: active only when the profile is)"},
		{"domain-only-on-domain", winsim.Firewall{Profile: "Domain"}, "-Profile Domain", true, newNetFirewallRule},
		{"comma-string-includes-public", winsim.Firewall{Profile: "Public"}, "-Profile 'Domain,Public'", true, newNetFirewallRule + " (Separate multiple entries with a comma)"},
		{"array-without-public", winsim.Firewall{Profile: "Public"}, "-Profile 'Domain','Private'", false, newNetFirewallRule},
		{"default-profile-any", winsim.Firewall{Profile: "Public"}, "", true, newNetFirewallRule + " (-Profile default Any)"},
		{"localsubnet-outside", winsim.Firewall{Profile: "Public", ClientsOutsideSubnet: true}, "-RemoteAddress LocalSubnet", false, newNetFirewallRule + " (-RemoteAddress LocalSubnet)"},
		{"localsubnet-inside", winsim.Firewall{Profile: "Public"}, "-RemoteAddress LocalSubnet", true, newNetFirewallRule},
		{"cidr-holds-client", winsim.Firewall{Profile: "Public", ClientAddress: "10.1.2.7"}, "-RemoteAddress 10.1.2.0/24", true, newNetFirewallRule + " (IPv4 Subnet by network bit count)"},
		{"cidr-misses-client", winsim.Firewall{Profile: "Public", ClientAddress: "10.9.9.9"}, "-RemoteAddress 10.1.2.0/24", false, newNetFirewallRule},
		{"mask-holds-client", winsim.Firewall{Profile: "Public", ClientAddress: "10.1.2.7"}, "-RemoteAddress 10.1.2.0/255.255.255.0", true, newNetFirewallRule + " (IPv4 Subnet by network mask)"},
		{"range-holds-client", winsim.Firewall{Profile: "Public", ClientAddress: "10.1.2.7"}, "-RemoteAddress 10.1.2.3-10.1.2.9", true, "https://learn.microsoft.com/en-us/windows/win32/api/netfw/nf-netfw-inetfwrule-put_remoteaddresses (range start-end)"},
		{"list-holds-client", winsim.Firewall{Profile: "Public", ClientAddress: "10.1.2.7"}, "-RemoteAddress '192.168.0.1','10.1.2.7'", true, newNetFirewallRule + " (String[])"},
		{"address-unknown-client", winsim.Firewall{Profile: "Public"}, "-RemoteAddress 10.1.2.7", false, "(simulator: with no ClientAddress no address rule admits)"},
		{"address-and-profile-both-needed", winsim.Firewall{Profile: "Public", ClientAddress: "10.1.2.7"}, "-RemoteAddress 10.1.2.7 -Profile Private", false, newNetFirewallRule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// source: tc.source
			fw := tc.fw
			f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
				c.Firewall = &fw
				// The test's own way in: WinRM HTTPS from anywhere.
				b, err := json.Marshal([]winsim.FirewallRule{{Name: "https", DisplayName: "https", Direction: "Inbound", Action: "Allow",
					Protocol: "TCP", LocalPort: []string{"5986"}, Enabled: "True", Profile: "Any", RemoteAddress: []string{"Any"}}})
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(c.Dir, "firewall.json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			})
			ssh := net.JoinHostPort("127.0.0.1", strconv.Itoa(f.Host.Ports().SSH))
			if admitted(t, ssh) {
				t.Fatalf("SSH admitted before any rule for it (source: %s)", tc.source)
			}
			client := adminClient(t, f)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			script := "New-NetFirewallRule -DisplayName 'sshd' -Name 'sshd-test' -Protocol TCP -LocalPort 22 " + tc.args + " | Out-Null"
			if stdout, stderr, code, err := client.RunPSWithContext(ctx, script); err != nil || code != 0 {
				t.Fatalf("%s: exit %d %v\n%s%s", script, code, err, stdout, decodeCLIXML(stderr))
			}
			f.Host.Reboot()
			if err := f.Host.WaitUp(ctx); err != nil {
				t.Fatal(err)
			}
			if got := admitted(t, ssh); got != tc.admit {
				t.Errorf("rule %q on profile %s (client %q, outside subnet %v): admitted %v, want %v (source: %s)",
					tc.args, fw.Profile, fw.ClientAddress, fw.ClientsOutsideSubnet, got, tc.admit, tc.source)
			}
		})
	}
}

// dropDialTimeout is how long a test's dial waits for a port the firewall
// drops: on loopback an admitted port answers within microseconds.
const dropDialTimeout = time.Second

// admitted dials a port: true when it accepts, false when the connection
// attempt goes unanswered until the dial's timeout, as Windows' firewall
// drops it (a refusal fails the test: the firewall does not answer).
func admitted(t *testing.T, addr string) bool {
	t.Helper()
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, dropDialTimeout)
	if err == nil {
		_ = c.Close()
		return true
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("dial %s: %v, want accepted or dropped (a timeout)", addr, err)
	}
	if waited := time.Since(start); waited < dropDialTimeout {
		t.Fatalf("dial %s gave up after %v, before its timeout of %v", addr, waited, dropDialTimeout)
	}
	return false
}

func adminClient(t *testing.T, f *winsimtest.Fixture) *winrm.Client {
	t.Helper()
	endpoint := winrm.NewEndpoint("127.0.0.1", f.Host.Ports().WinRMHTTPS, true, false, f.CA.CertPEM, nil, nil, 30*time.Second)
	params := *winrm.DefaultParameters
	params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	client, err := winrm.NewClientWithParameters(endpoint, "Administrator", f.Password, &params)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
