// Package artifacts serves the downloads a golden image build makes, the way
// an air-gapped site's local HTTP server does, with the upstream names and
// archive layouts:
//   - kubelet.exe, kube-proxy.exe and kube-log-runner.exe in the Kubernetes
//     release layout (<base>/<version>/bin/windows/amd64/<binary>);
//   - containerd-<v>-windows-amd64.tar.gz with bin/ at its root (containerd
//     Makefile: bin/containerd.exe, ctr.exe, containerd-stress.exe and
//     Makefile.windows' containerd-shim-runhcs-v1.exe);
//   - cni-plugins-windows-amd64-<tag>.tgz of containernetworking/plugins,
//     made with `tar cpfzv` inside bin/ (./host-local.exe, ./win-bridge.exe,
//     ./win-overlay.exe, ./README.md, ./LICENSE: no flannel);
//   - cni-plugin-flannel-windows-amd64-<tag>.tgz of flannel-io/cni-plugin
//     (scripts/package.sh: flannel-amd64.exe at its root);
//   - flanneld.exe, flannel-io/flannel's release asset;
//   - Windows update packages (.cab, .msu) under /updates (updates.go).
//
// The "binaries" are small files whose text names the program and its
// version ("kubelet v1.36.3"): the simulated Windows host reads versions from
// them as a real host runs the real ones. Their SHA-256 sums are real, so the
// image's checksum verification is exercised for real too.
package artifacts

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
)

// Versions of the simulated artifacts.
const (
	KubernetesVersion       = "v1.36.3"
	ContainerdVersion       = "2.2.7"
	Containerd17Version     = "1.7.24" // outside the support matrix: for the plan warning
	HCSShimVersion          = "v0.13.0"
	CNIVersion              = "v1.9.1"
	FlannelVersion          = "v0.28.9"
	FlannelCNIPluginVersion = "v1.9.1-flannel1"
)

// Artifact is one file the server offers.
type Artifact struct {
	URL    string
	SHA256 string
}

// Server is a running artifact server.
type Server struct {
	// BaseURL is the artifacts_base_url of kubelet and kube-proxy.
	BaseURL          string
	Kubelet          Artifact
	KubeProxy        Artifact
	KubeLogRunner    Artifact
	Containerd       Artifact
	Containerd17     Artifact
	CNIPlugins       Artifact
	Flanneld         Artifact
	FlannelCNIPlugin Artifact
	// Network are the networking modes' downloads, by mode and then by
	// the name windows_golden_image's network_artifacts.<mode> keys them
	// by (each mode's file registers them: artifacts_flannel.go).
	Network map[string]map[string]Artifact
	// Updates are Windows update packages (updates.go).
	Updates Updates

	files map[string][]byte // by URL path
	srv   *http.Server
	ln    net.Listener
	root  string
}

// Start serves the artifacts on a free 127.0.0.1 port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("artifacts: listening: %w", err)
	}
	s := &Server{ln: ln, root: "http://" + ln.Addr().String(), files: map[string][]byte{}}
	s.BaseURL = s.root + "/release"
	k8s := "/release/" + KubernetesVersion + "/bin/windows/amd64/"
	s.Kubelet = s.add(k8s+"kubelet.exe", binary("kubelet", KubernetesVersion))
	s.KubeProxy = s.add(k8s+"kube-proxy.exe", binary("kube-proxy", KubernetesVersion))
	s.KubeLogRunner = s.add(k8s+"kube-log-runner.exe", binary("kube-log-runner", KubernetesVersion))
	for _, v := range []string{ContainerdVersion, Containerd17Version} {
		containerd, err := tarGz(map[string][]byte{
			"bin/containerd.exe":                binary("containerd", "v"+v),
			"bin/ctr.exe":                       binary("ctr", "v"+v),
			"bin/containerd-stress.exe":         binary("containerd-stress", "v"+v),
			"bin/containerd-shim-runhcs-v1.exe": binary("containerd-shim-runhcs-v1", HCSShimVersion),
		})
		if err != nil {
			return nil, err
		}
		a := s.add("/containerd/containerd/releases/download/v"+v+"/containerd-"+v+"-windows-amd64.tar.gz", containerd)
		if v == ContainerdVersion {
			s.Containerd = a
		} else {
			s.Containerd17 = a
		}
	}
	cni, err := tarGz(map[string][]byte{
		"./host-local.exe":  binary("host-local", CNIVersion),
		"./win-bridge.exe":  binary("win-bridge", CNIVersion),
		"./win-overlay.exe": binary("win-overlay", CNIVersion),
		"./README.md":       []byte("# plugins\n"),
		"./LICENSE":         []byte("Apache License 2.0\n"),
	})
	if err != nil {
		return nil, err
	}
	s.CNIPlugins = s.add("/containernetworking/plugins/releases/download/"+CNIVersion+"/cni-plugins-windows-amd64-"+CNIVersion+".tgz", cni)
	s.Network = map[string]map[string]Artifact{}
	for _, mode := range sortedModes() {
		arts, err := modeArtifacts[mode](s)
		if err != nil {
			return nil, fmt.Errorf("artifacts: mode %s: %w", mode, err)
		}
		s.Network[mode] = arts
	}

	s.addUpdates()
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// AddKubernetes serves kubelet, kube-proxy and kube-log-runner of another
// Kubernetes version in the release layout (tests: an image whose kubelet
// the cluster does not accept).
func (s *Server) AddKubernetes(version string) (kubelet, kubeProxy, kubeLogRunner Artifact) {
	dir := "/release/" + version + "/bin/windows/amd64/"
	return s.add(dir+"kubelet.exe", binary("kubelet", version)), s.add(dir+"kube-proxy.exe", binary("kube-proxy", version)),
		s.add(dir+"kube-log-runner.exe", binary("kube-log-runner", version))
}

// Add serves extra content at path (tests: a file with a wrong checksum).
func (s *Server) Add(path string, content []byte) Artifact { return s.add(path, content) }

func (s *Server) add(path string, content []byte) Artifact {
	s.files[path] = content
	sum := sha256.Sum256(content)
	return Artifact{URL: s.root + path, SHA256: hex.EncodeToString(sum[:])}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(body)
}

// Paths lists what the server offers, for messages.
func (s *Server) Paths() []string {
	var out []string
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// binary is the content of a simulated executable.
func binary(name, version string) []byte {
	return []byte(fmt.Sprintf("MZ simulated Windows executable\r\n%s %s\r\n%s\r\n", name, version, strings.Repeat("#", 64)))
}

func tarGz(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ZipFiles builds a .zip (tests of the image's zip handling).
func ZipFiles(files map[string][]byte) ([]byte, error) { return zipFiles(files) }

func zipFiles(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
