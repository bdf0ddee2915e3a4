package winsim_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// console runs a script at the guest's console; stderr's CLIXML decoded.
func console(t *testing.T, h *winsim.Host, script string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, stderr, code := h.Console(ctx, script)
	return out, decodeCLIXML(stderr), code
}

// servedCert is the SHA-256 of the certificate the HTTPS listener presents
// now, or "" when nothing listens.
func servedCert(t *testing.T, h *winsim.Host) string {
	t.Helper()
	port := h.Ports().WinRMHTTPS
	if port == 0 {
		return ""
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(h.IP(), strconv.Itoa(port)),
		&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads what is presented, it trusts nothing
	if err != nil {
		return ""
	}
	defer func() { _ = conn.Close() }()
	sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:])
}

const makeListener = `$ErrorActionPreference = 'Stop'
$c = New-SelfSignedCertificate -DnsName $env:COMPUTERNAME, '127.0.0.1' -CertStoreLocation 'Cert:\LocalMachine\My' -KeyExportPolicy NonExportable
New-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Hostname=$env:COMPUTERNAME; CertificateThumbprint=$c.Thumbprint} | Out-Null
[Convert]::ToBase64String($c.RawData)
`

// TestHTTPSListenerCreatedOnStockHost: a stock disk (no HTTPS listener, the
// firewall filtering a Public network) gets a certificate made on it and an
// HTTPS listener bound to it; the listener serves once 5986 is opened, with
// exactly the certificate the cmdlet returned; Set-WSManInstance to another
// certificate serves that one to the next connection. What WinRM refuses is
// refused.
func TestHTTPSListenerCreatedOnStockHost(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		if err := winsim.Install(c.Dir, winsim.StockInstallation()); err != nil {
			t.Fatal(err)
		}
		c.Firewall = &winsim.Firewall{Profile: "Public"}
	})
	h := f.Host
	if got := servedCert(t, h); got != "" {
		t.Fatalf("a stock host serves HTTPS (certificate %s)", got)
	}
	out, stderr, code := console(t, h, makeListener)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	sum := sha256.Sum256(der)
	made := hex.EncodeToString(sum[:])
	if got := servedCert(t, h); got != "" {
		t.Fatalf("the listener serves before the firewall admits 5986 (certificate %s)", got)
	}
	if _, stderr, code := console(t, h, `New-NetFirewallRule -Name 'WinRM-HTTPS' -DisplayName 'WinRM HTTPS' -Direction Inbound -Protocol TCP -LocalPort 5986 -Action Allow -Profile Any | Out-Null`); code != 0 {
		t.Fatalf("firewall rule: exit %d: %s", code, stderr)
	}
	if got := servedCert(t, h); got != made {
		t.Fatalf("the listener serves %q, the cmdlet made %q", got, made)
	}

	for _, c := range []struct{ name, script, want string }{
		{"existing listener", makeListener, "cannot create the resource because it already exists"},
		{"unknown thumbprint", `Set-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{CertificateThumbprint='00112233445566778899AABBCCDDEEFF00112233'}`,
			"cannot find the certificate"},
		{"hostname not the CN", `$c = New-SelfSignedCertificate -DnsName 'other' -CertStoreLocation 'Cert:\LocalMachine\My'
Set-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Hostname=$env:COMPUTERNAME; CertificateThumbprint=$c.Thumbprint}`,
			"The certificate CN and the hostname that were provided do not match"},
		{"another store", `New-SelfSignedCertificate -DnsName 'x' -CertStoreLocation 'Cert:\CurrentUser\My'`, "not model"},
		{"another listener setting", `Set-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Port='443'}`, "not model"},
	} {
		_, stderr, code := console(t, h, "$ErrorActionPreference = 'Stop'\n"+c.script)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure with %q", c.name, code, stderr, c.want)
		}
	}
	if got := servedCert(t, h); got != made {
		t.Fatalf("after the refused changes the listener serves %q, want %q", got, made)
	}

	_, stderr, code = console(t, h, `$ErrorActionPreference = 'Stop'
$c = New-SelfSignedCertificate -DnsName $env:COMPUTERNAME -CertStoreLocation 'Cert:\LocalMachine\My'
Set-WSManInstance -ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{CertificateThumbprint=$c.Thumbprint} | Out-Null`)
	if code != 0 {
		t.Fatalf("Set-WSManInstance: exit %d: %s", code, stderr)
	}
	if got := servedCert(t, h); got == made || got == "" {
		t.Fatalf("after Set-WSManInstance the listener serves %q (before: %q)", got, made)
	}
	out, _, _ = console(t, h, `Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | ForEach-Object { $_.Transport + ' ' + $_.Hostname }`)
	if !strings.Contains(out, "HTTP ") || !strings.Contains(out, "HTTPS WIN-TEST") {
		t.Fatalf("Get-WSManInstance listed %q", out)
	}
}
