package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/winsim/winsimtest"
)

// newClient builds a masterzen/winrm client the way Terraform's communicator does.
func newClient(t *testing.T, f *winsimtest.Fixture, https, ntlm bool, password string) *winrm.Client {
	t.Helper()
	port := f.Host.Ports().WinRM
	if https {
		port = f.Host.Ports().WinRMHTTPS
	}
	ep := &winrm.Endpoint{Host: "127.0.0.1", Port: port, HTTPS: https, CACert: f.CA.CertPEM, Timeout: 20 * time.Second}
	params := *winrm.DefaultParameters
	params.Timeout = "PT5S"
	if ntlm {
		params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	}
	c, err := winrm.NewClientWithParameters(ep, "Administrator", password, &params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWinRMClientLibrary(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	for _, tc := range []struct {
		name        string
		https, ntlm bool
	}{{"http-basic", false, false}, {"http-ntlm", false, true}, {"https-basic", true, false}, {"https-ntlm", true, true}} {
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
