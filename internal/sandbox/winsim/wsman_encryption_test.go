package winsim_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// A stock host (AllowUnencrypted=false, Basic=false, Negotiate=true) over
// its HTTP listener, with an outside client: NTLM with message encryption
// runs scripts; NTLM in clear text and Basic are refused as Windows refuses
// them.
func TestStockHTTPListener(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("ntlm-encrypted", func(t *testing.T) {
		c := newClient(t, f, false, true, winsimtest.Password)
		out, errOut, code, err := c.RunPSWithContext(ctx, "Write-Output $env:COMPUTERNAME; Write-Error 'to stderr'; exit 5")
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out) != "WIN-TEST" || code != 5 || !strings.Contains(errOut, "to stderr") {
			t.Fatalf("stdout %q stderr %q code %d", out, errOut, code)
		}
		// Many messages on one connection: the sequence numbers stay in step.
		for i := range 3 {
			if out, _, _, err := c.RunPSWithContext(ctx, "Write-Output 'again'"); err != nil || strings.TrimSpace(out) != "again" {
				t.Fatalf("run %d: %q %v", i, out, err)
			}
		}
		bad := newClient(t, f, false, true, "wrong")
		if _, _, _, err := bad.RunPSWithContext(ctx, "Write-Output x"); err == nil {
			t.Fatal("a wrong password ran a script")
		}
	})
	t.Run("ntlm-unencrypted", func(t *testing.T) {
		c := newClientWith(t, f, false, winsimtest.Password, func() winrm.Transporter { return &winrm.ClientNTLM{} })
		_, _, _, err := c.RunPSWithContext(ctx, "Write-Output x")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err = %v, want the 401 Windows answers a clear-text message with", err)
		}
	})
	t.Run("basic", func(t *testing.T) {
		c := newClient(t, f, false, false, winsimtest.Password)
		_, _, _, err := c.RunPSWithContext(ctx, "Write-Output x")
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err = %v, want a 401", err)
		}
		status, header := post(t, f.Host.Ports().WinRM, func(r *http.Request) { r.SetBasicAuth("Administrator", winsimtest.Password) })
		if got := header.Values("WWW-Authenticate"); status != http.StatusUnauthorized || strings.Join(got, ",") != "Negotiate,Kerberos" {
			t.Fatalf("HTTP %d, WWW-Authenticate %q; want 401 offering Negotiate and Kerberos only", status, got)
		}
	})
	if n := len(f.Host.Scripts()); n != 4 {
		t.Errorf("%d scripts ran, want the 4 of the encrypted client", n)
	}
}

// With Basic allowed but AllowUnencrypted still false, Basic over HTTP gets
// a 500; with AllowUnencrypted, clear text is served.
func TestHTTPListenerServiceSettings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	basic := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		svc := winsim.StockWinRM()
		svc.Basic = true
		c.WinRM = &svc
	})
	if status, _ := post(t, basic.Host.Ports().WinRM, func(r *http.Request) { r.SetBasicAuth("Administrator", winsimtest.Password) }); status != http.StatusInternalServerError {
		t.Fatalf("Basic over HTTP with Basic=true: HTTP %d, want 500", status)
	}
	open := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.WinRM = &winsim.WinRMService{AllowUnencrypted: true, Basic: true, Negotiate: true}
	})
	for _, ntlm := range []bool{false, true} {
		c := newClient(t, open, false, false, winsimtest.Password)
		if ntlm {
			c = newClientWith(t, open, false, winsimtest.Password, func() winrm.Transporter { return &winrm.ClientNTLM{} })
		}
		if out, _, _, err := c.RunPSWithContext(ctx, "Write-Output x"); err != nil || strings.TrimSpace(out) != "x" {
			t.Fatalf("AllowUnencrypted, ntlm %v: %q %v", ntlm, out, err)
		}
	}
}

// post sends one SOAP-less POST /wsman over HTTP and returns its answer.
func post(t *testing.T, port int, edit func(*http.Request)) (status int, header http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/wsman", port), strings.NewReader("<s:Envelope/>"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	edit(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header
}
