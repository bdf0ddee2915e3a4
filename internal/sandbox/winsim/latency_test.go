package winsim_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestLatencyModelTimesAnUpdate: with the latency model on, a cumulative
// update's install takes UpdateInstall (15 real minutes at the median) and
// the restart that completes it UpdateRestart (3 minutes), scaled; an SSU
// takes no modelled time.
func TestLatencyModelTimesAnUpdate(t *testing.T) {
	m := latency.New(300, latency.Median) // install 3 s, restart 0.6 s
	booted := make(chan time.Time, 8)
	down := make(chan time.Time, 8)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Latency = m
		c.OnStateChange = func(_ *winsim.Host, up bool) {
			if up {
				booted <- time.Now()
			} else {
				down <- time.Now()
			}
		}
	})
	<-booted
	ssu := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	lcu := updatepkg.Package{KB: "KB5070011", Kind: updatepkg.LCU, Build: "20348", UBR: 4405, Requires: "KB5070010", Restart: true}
	for path, content := range map[string][]byte{`C:\u\ssu.cab`: ssu.Encode(), `C:\u\lcu.cab`: lcu.Encode()} {
		if err := f.Host.WriteFile(path, content); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run := func(script string) (string, time.Duration) {
		t.Helper()
		begin := time.Now()
		stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, script)
		if err != nil {
			t.Fatal(err)
		}
		if s := decodeCLIXML(stderr); s != "" {
			t.Fatalf("stderr %q", s)
		}
		return stdout, time.Since(begin)
	}
	if _, took := run("dism.exe /online /add-package '/packagepath:C:\\u\\ssu.cab' /quiet /norestart"); took > m.Of(latency.UpdateInstall) {
		t.Errorf("the SSU took %s: it plays no install time", took)
	}
	out, took := run("dism.exe /online /add-package '/packagepath:C:\\u\\lcu.cab' /quiet /norestart\n$LASTEXITCODE")
	if !strings.Contains(out, "3010") || took < m.Of(latency.UpdateInstall) {
		t.Errorf("the LCU: %q in %s; want 3010 after at least %s", out, took, m.Of(latency.UpdateInstall))
	}
	run("Restart-Computer -Force")
	wentDown, cameUp := <-down, <-booted
	if d := cameUp.Sub(wentDown); d < m.Of(latency.UpdateRestart) {
		t.Errorf("the restart completing the update took %s, want at least %s", d, m.Of(latency.UpdateRestart))
	}
	if got := f.Host.UBR(); got != 4405 {
		t.Errorf("UBR %d after the restart, want 4405", got)
	}
}

// TestLatencyModelTimesADownload: Invoke-WebRequest takes the bytes' time
// at the site's link speed (DownloadLink, 50 MB/s at the median), and a
// -TimeoutSec shorter than it fails the download as Windows PowerShell does.
func TestLatencyModelTimesADownload(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 10e6) // 200 ms at 50 MB/s
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)
	m := latency.New(1, latency.Median)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) { c.Latency = m })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	begin := time.Now()
	stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx,
		"Invoke-WebRequest -UseBasicParsing -Uri '"+srv.URL+"/kubelet.exe' -OutFile 'C:\\kubelet.exe'\nTest-Path -Path 'C:\\kubelet.exe'")
	if err != nil {
		t.Fatal(err)
	}
	if took, want := time.Since(begin), m.Move(latency.DownloadLink, int64(len(body))); !strings.Contains(stdout, "True") || took < want {
		t.Errorf("download: %q %q in %s; want the file after at least %s", stdout, decodeCLIXML(stderr), took, want)
	}
}
