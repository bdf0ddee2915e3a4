package vmtools_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// bootClone clones a template (by its Templates key), powers it on and
// returns the VM and its address.
func (w *world) bootClone(t *testing.T, version, name string) (*vsphere.VM, string) {
	t.Helper()
	ctx := t.Context()
	tmpl, err := w.c.FindVMByPath(ctx, w.vc.Templates[version])
	if err != nil {
		t.Fatal(err)
	}
	vm := w.cloneFrom(t, tmpl, name, strings.ToUpper(name), "", nodePassword)
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	ip, err := w.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.hosts.WaitFor(ctx, strings.ToUpper(name)); err != nil {
		t.Fatal(err)
	}
	return vm, ip
}

// dropDialTimeout is how long dropped waits for a port the guest's
// firewall drops: on loopback a served port answers within microseconds.
const dropDialTimeout = time.Second

// dropped asserts that a guest's firewall drops connections to a TCP port,
// as Windows does to a port no inbound rule admits (winsim's
// firewall_drop.go): the connection attempt goes unanswered until the
// client's dial timeout, neither accepted nor refused.
func dropped(t *testing.T, ip string, port int, what string) {
	t.Helper()
	start := time.Now()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), dropDialTimeout)
	if err == nil {
		_ = c.Close()
		t.Fatalf("%s (%s:%d) accepted a connection", what, ip, port)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || time.Since(start) < dropDialTimeout {
		t.Fatalf("%s (%s:%d): %v after %v, want no answer until the dial timeout of %v", what, ip, port, err, time.Since(start), dropDialTimeout)
	}
}

// TestStockTemplateClone judges a fresh clone of a base template from
// outside, as a client on the guest's subnet: no HTTPS listener, no SSH
// server; on the HTTP listener Basic and NTLM without message encryption
// are refused, NTLM with message encryption works, both masterzen/winrm's
// (which authenticates before every message) and the provider's (once per
// connection, then sealed messages without an Authorization header, as
// pywinrm).
func TestStockTemplateClone(t *testing.T) {
	w := start(t)
	_, ip := w.bootClone(t, "2022", "win-stock")
	ports := w.hosts.Ports()

	dropped(t, ip, ports.WinRMHTTPS, "WinRM HTTPS (no listener, no rule)")
	dropped(t, ip, ports.SSH, "SSH (no server, no rule)")

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ep := winrm.NewEndpoint(ip, ports.WinRM, false, false, nil, nil, nil, 10*time.Second)
	basic, err := winrm.NewClient(ep, "Administrator", nodePassword)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := basic.RunCmdWithContext(ctx, "hostname"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Basic over HTTP: %v, want a 401 refusal", err)
	}
	params := winrm.DefaultParameters
	params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	clear, err := winrm.NewClientWithParameters(ep, "Administrator", nodePassword, params)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := clear.RunCmdWithContext(ctx, "hostname"); err == nil {
		t.Error("NTLM without message encryption over HTTP was accepted")
	}

	// masterzen/winrm's own message encryption authenticates before every
	// message, on the connection the previous one authenticated: the
	// listener's 401 to its empty POST makes it authenticate again.
	params = winrm.DefaultParameters
	params.TransportDecorator = func() winrm.Transporter {
		enc, err := winrm.NewEncryption("ntlm")
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	sealed, err := winrm.NewClientWithParameters(ep, "Administrator", nodePassword, params)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if out, _, code, err := sealed.RunCmdWithContext(ctx, "hostname"); err != nil || code != 0 || strings.TrimSpace(out) != "WIN-STOCK" {
			t.Errorf("NewEncryption(\"ntlm\") over HTTP: %q, exit %d, %v", out, code, err)
		}
	}

	tr := w.connect(t, ip, nodePassword) // HTTP, NTLM, sealed messages: one handshake per connection, as pywinrm
	if got := run(t, tr, `$env:COMPUTERNAME`); got != "WIN-STOCK" {
		t.Errorf("computer name = %q", got)
	}
	if got := run(t, tr, `(Get-NetFirewallRule -Name 'WINRM-HTTP-In-TCP-PUBLIC').DisplayName`); got != "Windows Remote Management (HTTP-In)" {
		t.Errorf("the stock firewall rule: %q", got)
	}
}

// TestRunnerOutsideSubnet: with the runner outside the guests' subnet the
// stock firewall rule (Public profile, LocalSubnet) does not admit it to
// 5985, so its connections there are dropped, while guest operations
// through vCenter still run scripts.
func TestRunnerOutsideSubnet(t *testing.T) {
	w := start(t)
	w.hosts.SetRunnerOutsideSubnet(true)
	vm, ip := w.bootClone(t, "2022", "win-outside")
	dropped(t, ip, w.hosts.Ports().WinRM, "WinRM HTTP from outside the subnet")

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tr, err := remote.Connect(ctx, w.vmtoolsConfig(vm, nodePassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if got := run(t, tr, `$env:COMPUTERNAME`); got != "WIN-OUTSIDE" {
		t.Errorf("computer name over guest operations = %q", got)
	}
}

// TestPreparedTemplateClonesShareCertificate: the prepared template's HTTPS
// listener serves the one certificate made for the template's name, so
// every clone presents the same certificate (and private key) and none
// verifies for the clone's address or name; the SSH host key is shared too.
func TestPreparedTemplateClonesShareCertificate(t *testing.T) {
	w := start(t)
	_, ip0 := w.bootClone(t, vcsim.PreparedVersion, "win-prep-0")
	_, ip1 := w.bootClone(t, vcsim.PreparedVersion, "win-prep-1")
	port := w.hosts.Ports().WinRMHTTPS
	leaf := func(ip string) *x509.Certificate {
		c, err := tls.Dial("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reading the certificate, not trusting it
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		return c.ConnectionState().PeerCertificates[0]
	}
	c0, c1 := leaf(ip0), leaf(ip1)
	if !bytes.Equal(c0.Raw, c1.Raw) {
		t.Fatal("clones of the prepared template serve different certificates")
	}
	if err := c0.VerifyHostname("WIN2022-PREP"); err != nil {
		t.Errorf("the certificate is not the template's: %v", err)
	}
	for _, name := range []string{ip0, "WIN-PREP-0"} {
		if err := c0.VerifyHostname(name); err == nil {
			t.Errorf("the shared certificate verifies for the clone's %s", name)
		}
	}
	k0, err := w.hosts.ByName("WIN-PREP-0").ReadFile(`C:\ProgramData\ssh\ssh_host_ed25519_key.pub`)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := w.hosts.ByName("WIN-PREP-1").ReadFile(`C:\ProgramData\ssh\ssh_host_ed25519_key.pub`)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k0, k1) {
		t.Error("clones of the prepared template have different SSH host keys")
	}
}
