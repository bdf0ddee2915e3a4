package artifacts

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
)

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// members lists a .tar.gz's entries with the program line of each
// simulated executable.
func members(t *testing.T, archive []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		line := ""
		if lines := strings.Split(string(b), "\r\n"); len(lines) > 1 && lines[0] == "MZ simulated Windows executable" {
			line = lines[1]
		}
		out[h.Name] = line
	}
}

// TestUpstreamLayouts: the archives have the names and layouts of the
// upstream releases, and their executables name themselves as the
// simulated hosts expect.
func TestUpstreamLayouts(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		a      Artifact
		suffix string
		want   map[string]string
	}{
		{s.Containerd, "/containerd-2.2.7-windows-amd64.tar.gz", map[string]string{
			"bin/containerd.exe": "containerd v2.2.7", "bin/ctr.exe": "ctr v2.2.7", "bin/containerd-stress.exe": "containerd-stress v2.2.7",
			"bin/containerd-shim-runhcs-v1.exe": "containerd-shim-runhcs-v1 v0.13.0"}},
		{s.CNIPlugins, "/cni-plugins-windows-amd64-v1.9.1.tgz", map[string]string{
			"./host-local.exe": "host-local v1.9.1", "./win-bridge.exe": "win-bridge v1.9.1", "./win-overlay.exe": "win-overlay v1.9.1",
			"./README.md": "", "./LICENSE": ""}},
		{s.FlannelCNIPlugin, "/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz", map[string]string{
			"flannel-amd64.exe": "flannel v1.9.1-flannel1"}},
	} {
		if !strings.HasSuffix(tc.a.URL, tc.suffix) {
			t.Errorf("URL %s does not end in %s", tc.a.URL, tc.suffix)
		}
		got := members(t, get(t, tc.a.URL))
		var names []string
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(got) != len(tc.want) {
			t.Errorf("%s holds %v, want %v", tc.suffix, names, tc.want)
		}
		for n, program := range tc.want {
			if got[n] != program {
				t.Errorf("%s: %s is %q, want %q", tc.suffix, n, got[n], program)
			}
		}
	}
	// Calico's Windows archive: CalicoWindows/ with the CNI plugins in cni/.
	if !strings.HasSuffix(s.Network["calico"]["windows_archive"].URL, "/projectcalico/calico/releases/download/v3.32.1/calico-windows-v3.32.1.zip") {
		t.Errorf("Calico's archive at %s", s.Network["calico"]["windows_archive"].URL)
	}
	body := get(t, s.Network["calico"]["windows_archive"].URL)
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	wantZip := map[string]string{"CalicoWindows/calico-node.exe": "calico-node v3.32.1", "CalicoWindows/cni/calico.exe": "calico v3.32.1",
		"CalicoWindows/cni/calico-ipam.exe": "calico-ipam v3.32.1", "CalicoWindows/README.txt": ""}
	for _, f := range zr.File {
		want, ok := wantZip[f.Name]
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		_ = rc.Close()
		if !ok || (want != "" && !strings.Contains(string(b), "\r\n"+want+"\r\n")) {
			t.Errorf("calico-windows zip: %s (want %q)", f.Name, want)
		}
		delete(wantZip, f.Name)
	}
	if len(wantZip) != 0 {
		t.Errorf("calico-windows zip lacks %v", wantZip)
	}
	for a, want := range map[Artifact]string{s.Kubelet: "kubelet v1.36.3", s.KubeLogRunner: "kube-log-runner v1.36.3", s.Flanneld: "flanneld v0.28.9"} {
		if b := get(t, a.URL); !strings.Contains(string(b), "\r\n"+want+"\r\n") {
			t.Errorf("%s does not name itself %q", a.URL, want)
		}
	}
}
