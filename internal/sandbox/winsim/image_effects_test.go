package winsim

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestImageEffects(t *testing.T) {
	var zipBuf, tgzBuf bytes.Buffer
	zw := zip.NewWriter(&zipBuf)
	w, _ := zw.Create("win-overlay.exe")
	_, _ = w.Write([]byte("win-overlay v1.6.2"))
	_ = zw.Close()
	gz := gzip.NewWriter(&tgzBuf)
	tw := tar.NewWriter(gz)
	body := []byte("containerd v1.7.24")
	_ = tw.WriteHeader(&tar.Header{Name: "bin/containerd.exe", Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(body)
	_ = tw.Close()
	_ = gz.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/kubelet.exe":
			_, _ = w.Write([]byte("kubelet v1.36.3"))
		case "/cni.zip":
			_, _ = w.Write(zipBuf.Bytes())
		case "/containerd.tar.gz":
			_, _ = w.Write(tgzBuf.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	h := startTestHost(t, nil)
	// Invoke-WebRequest -OutFile needs the directory, as on Windows.
	_ = h.fs.MkdirAll(`C:\k`)

	out, errOut, code := run(t, h, encoded("Invoke-WebRequest -UseBasicParsing -Uri '"+srv.URL+"/kubelet.exe' -OutFile 'C:\\k\\kubelet.exe'\nGet-Content -Path 'C:\\k\\kubelet.exe' -Raw"))
	if code != 0 || !strings.Contains(out, "kubelet v1.36.3") {
		t.Fatalf("download: out %q err %q code %d", out, errOut, code)
	}
	_, errOut, code = run(t, h, encoded("Invoke-WebRequest -UseBasicParsing -Uri '"+srv.URL+"/missing.exe' -OutFile 'C:\\k\\x.exe'"))
	if code == 0 || !strings.Contains(errOut, "(404) Not Found") {
		t.Errorf("a missing artifact: err %q code %d", errOut, code)
	}
	_, errOut, code = run(t, h, encoded("Invoke-WebRequest -Uri 'http://127.0.0.1:1/x' -OutFile 'C:\\k\\x.exe'"))
	if code == 0 || !strings.Contains(errOut, "Unable to connect to the remote server") {
		t.Errorf("an unreachable server: err %q code %d", errOut, code)
	}

	script := "Invoke-WebRequest -Uri '" + srv.URL + "/cni.zip' -OutFile 'C:\\k\\cni.zip'\n" +
		"Expand-Archive -Path 'C:\\k\\cni.zip' -DestinationPath 'C:\\opt\\cni\\bin' -Force\n" +
		"Invoke-WebRequest -Uri '" + srv.URL + "/containerd.tar.gz' -OutFile 'C:\\k\\c.tar.gz'\n" +
		"$target = 'C:\\k\\c.tar.gz'\n" +
		"New-Item -ItemType Directory -Force -Path 'C:\\Program Files\\containerd' | Out-Null\n" +
		"tar.exe -xzf $target -C 'C:\\Program Files\\containerd'\n"
	if out, errOut, code := run(t, h, encoded(script)); code != 0 {
		t.Fatalf("archives: out %q err %q code %d", out, errOut, code)
	}
	for path, want := range map[string]string{`C:\opt\cni\bin\win-overlay.exe`: "win-overlay v1.6.2", `C:\Program Files\containerd\bin\containerd.exe`: "containerd v1.7.24"} {
		if got, err := h.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
}

func TestWindowsFeatureNeedsReboot(t *testing.T) {
	h := startTestHost(t, nil)
	check := "if ((Get-WindowsFeature -Name 'Containers').Installed) { 'installed' } else { 'absent' }"
	if out, _, _ := run(t, h, encoded(check)); strings.TrimSpace(out) != "absent" {
		t.Fatalf("before install: %q", out)
	}
	install := "if ((Install-WindowsFeature -Name 'Containers').RestartNeeded -eq 'Yes') { Write-Output 'REBOOT' }"
	if out, _, _ := run(t, h, encoded(install)); strings.TrimSpace(out) != "REBOOT" {
		t.Fatalf("install: %q", out)
	}
	if out, _, _ := run(t, h, encoded(check)); strings.TrimSpace(out) != "absent" {
		t.Fatalf("pending install counted as installed before the reboot: %q", out)
	}
	h.Reboot() // returns once the host is back up
	if out, _, _ := run(t, h, encoded(check)); strings.TrimSpace(out) != "installed" {
		t.Fatalf("after the reboot: %q", out)
	}
	if out, _, _ := run(t, h, encoded(install)); strings.TrimSpace(out) != "" {
		t.Errorf("a second install asked for another reboot: %q", out)
	}
}
