package winsim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
)

// A native program that fails fails its step: the golden image's
// install-containerd step downloads an archive whose checksum matches but
// which tar.exe cannot read; Windows PowerShell 5.1 would carry on past
// tar.exe's exit code under 'Stop', so the step must check $LASTEXITCODE
// itself (the provider's templates do; the simulator's tar.exe fails as
// bsdtar does on a file that is not an archive).
func TestFailingNativeProgramFailsItsStep(t *testing.T) {
	garbage := []byte("this is not a gzip archive\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(garbage) }))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(garbage)
	url := srv.URL + "/containerd-2.2.7-windows-amd64.tar.gz"
	steps, err := bootstrap.ImageSteps(bootstrap.ImageConfig{
		KubernetesVersion: "v1.36.3",
		Containerd: bootstrap.Artifact{Name: "containerd", URL: url, SHA256: hex.EncodeToString(sum[:]),
			Path: bootstrap.DownloadPath(url), ExtractTo: bootstrap.ContainerdDir},
		Kubelet:       bootstrap.Artifact{Name: "kubelet", URL: srv.URL + "/kubelet.exe", SHA256: strings.Repeat("ab", 32), Path: bootstrap.KubeletExe},
		KubeProxy:     bootstrap.Artifact{Name: "kube-proxy", URL: srv.URL + "/kube-proxy.exe", SHA256: strings.Repeat("ab", 32), Path: bootstrap.KubeProxyExe},
		KubeLogRunner: bootstrap.Artifact{Name: "kube-log-runner", URL: srv.URL + "/kube-log-runner.exe", SHA256: strings.Repeat("ab", 32), Path: bootstrap.KubeLogRunnerExe},
		CNIPlugins:    bootstrap.Artifact{Name: "cni-plugins", URL: srv.URL + "/cni.tgz", SHA256: strings.Repeat("ab", 32), Path: bootstrap.DownloadPath(srv.URL + "/cni.tgz"), ExtractTo: bootstrap.CNIBinDir},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := startTestHost(t, nil)
	ran := 0
	for _, s := range steps {
		if s.Name != "prepare" && s.Name != "install-containerd" {
			continue
		}
		ran++
		_, stderr, code := run(t, h, encoded(s.Script))
		if s.Name == "prepare" {
			if code != 0 {
				t.Fatalf("prepare: exit %d: %s", code, stderr)
			}
			continue
		}
		if code == 0 {
			t.Fatalf("install-containerd succeeded although tar.exe could not read the archive")
		}
		if !strings.Contains(stderr, "tar") || !strings.Contains(stderr, "exit code") {
			t.Errorf("the step's error does not name tar.exe and its exit code: %s", stderr)
		}
	}
	if ran != 2 {
		t.Fatalf("ran %d of the 2 steps", ran)
	}
}
