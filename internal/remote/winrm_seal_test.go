package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// A stock Windows Server host (AllowUnencrypted=false, Basic=false): over
// HTTP, NTLM with message encryption runs scripts and reports their exit
// codes; a wrong password is an auth error that names neither the password
// nor retries; HTTPS with NTLM is unchanged.
func TestStockHostOverHTTP(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	for _, v := range []variant{httpNTLM, httpsNTLM} {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			ctx := testCtx(t)
			res, err := tr.Run(ctx, "Write-Output $env:COMPUTERNAME")
			if err != nil || strings.TrimSpace(res.Stdout) != "WIN-TEST" {
				t.Fatalf("run: %+v, %v", res, err)
			}
			_, err = tr.Run(ctx, "Write-Error 'the join failed'; exit 9")
			var ee *remote.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 9 || !strings.Contains(ee.Stderr, "the join failed") {
				t.Fatalf("exit 9: %v", err)
			}
			// A long script goes up through stdin (WinRM Send) and runs by -File.
			script, want := longScript(20000)
			if res, err := tr.Run(ctx, script); err != nil || strings.TrimSpace(res.Stdout) != want {
				t.Fatalf("long script: %q, %v", res.Stdout, err)
			}

			cfg := v.config(f)
			cfg.Password = "Not-The-Passw0rd"
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err = remote.Connect(cctx, cfg)
			var ce *remote.ConnectError
			if !errors.As(err, &ce) || ce.Step != remote.StepAuth || time.Since(start) > 3*time.Second {
				t.Fatalf("wrong password: %v after %v, want an auth ConnectError at once", err, time.Since(start))
			}
			if strings.Contains(err.Error(), cfg.Password) {
				t.Fatal("the password appears in the error")
			}
		})
	}
}

// Basic over HTTP is refused before any connection: the password would
// travel in clear text, and a stock Windows listener refuses it anyway.
func TestBasicOverHTTPRefused(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	cfg := httpNTLM.config(f)
	cfg.NTLM = false
	_, err := remote.Connect(testCtx(t), cfg)
	if err == nil || !strings.Contains(err.Error(), "clear text") {
		t.Fatalf("err = %v, want Basic over HTTP refused", err)
	}
	if n := len(f.Host.Scripts()); n != 0 {
		t.Fatalf("%d scripts ran", n)
	}
}
