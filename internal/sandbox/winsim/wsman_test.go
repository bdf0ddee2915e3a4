package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// newClient builds a masterzen/winrm client the way Terraform's communicator
// does; NTLM over HTTP encrypts its messages (sealingNTLM), as a stock
// host's HTTP listener requires.
func newClient(t *testing.T, f *winsimtest.Fixture, https, ntlm bool, password string) *winrm.Client {
	t.Helper()
	switch {
	case ntlm && !https:
		return newClientWith(t, f, https, password, func() winrm.Transporter {
			return &sealingNTLM{user: "Administrator", password: password}
		})
	case ntlm:
		return newClientWith(t, f, https, password, func() winrm.Transporter { return &winrm.ClientNTLM{} })
	}
	return newClientWith(t, f, https, password, nil) // Basic
}

// newClientWith builds a client with the transport decorate returns (nil:
// the library's Basic transport).
func newClientWith(t *testing.T, f *winsimtest.Fixture, https bool, password string, decorate func() winrm.Transporter) *winrm.Client {
	t.Helper()
	port := f.Host.Ports().WinRM
	if https {
		port = f.Host.Ports().WinRMHTTPS
	}
	ep := &winrm.Endpoint{Host: "127.0.0.1", Port: port, HTTPS: https, CACert: f.CA.CertPEM, Timeout: 20 * time.Second}
	params := *winrm.DefaultParameters
	params.Timeout = "PT5S"
	if decorate != nil {
		params.TransportDecorator = decorate
	}
	c, err := winrm.NewClientWithParameters(ep, "Administrator", password, &params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWinRMClientLibrary runs a script over each way a host can be reached:
// NTLM with message encryption over HTTP, and over HTTPS Basic (allowed here
// as `winrm set winrm/config/service/auth @{Basic="true"}` would) and NTLM.
func TestWinRMClientLibrary(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		svc := winsim.StockWinRM()
		svc.Basic = true
		c.WinRM = &svc
	})
	for _, tc := range []struct {
		name        string
		https, ntlm bool
	}{{"http-ntlm-encrypted", false, true}, {"https-basic", true, false}, {"https-ntlm", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := newClient(t, f, tc.https, tc.ntlm, winsimtest.Password)
			out, errOut, code, err := c.RunPSWithContext(ctx, "Write-Output $env:COMPUTERNAME; exit 3")
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(out) != "WIN-TEST" || code != 3 {
				t.Fatalf("stdout %q stderr %q code %d", out, errOut, code)
			}
			bad := newClient(t, f, tc.https, tc.ntlm, "wrong")
			if _, _, _, err := bad.RunPSWithContext(ctx, "Write-Output x"); err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("wrong password: err = %v, want a 401", err)
			}
		})
	}
}

// A reboot while a command's output is on its way: the client sees the
// response end early and the connection drop, then the host comes back.
func TestRebootMidReply(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Faults.RebootMidReply = &winsim.StepFault{Step: "join", Times: 1}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := newClient(t, f, true, true, winsimtest.Password)
	_, _, _, err := c.RunPSWithContext(ctx, "# step: join\nWrite-Output 'joining the cluster'")
	if err == nil {
		t.Fatal("the command completed through a reboot")
	}
	if !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("error %v, want the connection cut mid-reply", err)
	}
	t.Logf("client error: %v", err)
	for f.Host.Up() && ctx.Err() == nil { // the reboot takes the host down...
		time.Sleep(10 * time.Millisecond)
	}
	if err := f.Host.WaitUp(ctx); err != nil { // ...and brings it back
		t.Fatal(err)
	}
	c = newClient(t, f, true, true, winsimtest.Password)
	out, _, code, err := c.RunPSWithContext(ctx, "# step: join\nWrite-Output 'joined'")
	if err != nil || strings.TrimSpace(out) != "joined" || code != 0 {
		t.Fatalf("after the reboot (Times: 1): %q %d %v", out, code, err)
	}
}
