package remote_test

import (
	"context"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// TestPinnedCertificate: with CertSHA256 the WinRM HTTPS connection accepts
// exactly that certificate, with no CA (the host's is from a throwaway CA
// the client is not given) and whatever name it is issued for; any other
// certificate is refused at once (not retried) with an error naming the
// pinned and the presented fingerprints.
func TestPinnedCertificate(t *testing.T) {
	f := startHost(t, nil)
	block, _ := pem.Decode(f.Host.Config().TLSCertPEM)
	served := remote.CertificateSHA256(block.Bytes)

	cfg := httpsNTLM.config(f)
	cfg.CACertPEM = nil
	cfg.CertSHA256 = strings.ToUpper(served[:2]) + ":" + served[2:] // openssl's form is read too
	tr := connect(t, cfg)
	if r, err := tr.Run(context.Background(), "Write-Output 'pinned'"); err != nil || strings.TrimSpace(r.Stdout) != "pinned" {
		t.Fatalf("over the pinned certificate: %q, %v", r.Stdout, err)
	}
	_ = tr.Close()

	other := strings.Repeat("ab", 32)
	cfg.CertSHA256 = other
	cfg.ConnectTimeout = 20 * time.Second
	start := time.Now()
	_, err := remote.Connect(context.Background(), cfg)
	var pin *remote.CertificatePinError
	var ce *remote.ConnectError
	switch {
	case !errors.As(err, &pin) || !errors.As(err, &ce):
		t.Fatalf("Connect with another pin: %v; want a ConnectError wrapping a CertificatePinError", err)
	case pin.Want != other || pin.Got != served:
		t.Errorf("the error names pinned %s and presented %s; want %s and %s", pin.Want, pin.Got, other, served)
	case ce.Step != remote.StepTLS || ce.Attempts > 1 || time.Since(start) > 5*time.Second:
		t.Errorf("step %s after %d attempts in %s: a pin mismatch must not be retried", ce.Step, ce.Attempts, time.Since(start))
	case !strings.Contains(err.Error(), "pinned"):
		t.Errorf("the message does not say it was pinned: %v", err)
	}

	for _, bad := range []func(*remote.Config){
		func(c *remote.Config) { c.CACertPEM = f.CA.CertPEM },
		func(c *remote.Config) { c.Insecure = true },
		func(c *remote.Config) { c.HTTPS, c.Port = false, f.Host.Ports().WinRM },
	} {
		c := httpsNTLM.config(f)
		c.CACertPEM = nil
		c.CertSHA256 = served
		bad(&c)
		if _, err := remote.Connect(context.Background(), c); err == nil || !strings.Contains(err.Error(), "CertSHA256") {
			t.Errorf("a pin with contradicting settings: %v; want it refused", err)
		}
	}
	if _, err := remote.ParseCertificateSHA256("abc"); err == nil {
		t.Error("a short fingerprint was accepted")
	}
}
