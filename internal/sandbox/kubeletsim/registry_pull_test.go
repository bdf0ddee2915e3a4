package kubeletsim

import (
	"context"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/registry"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestPullThroughHosts: containerd's pull through hosts.toml against a real
// registry behind basic auth. The mirror serves the image with the
// credential of registry.configs; a wrong or missing credential is its 401,
// which stays the error after the upstream fallback fails its lookup (the
// sandbox has no internet); a registry with no hosts.toml goes upstream;
// what hosts.toml may hold and the simulation does not model is refused.
func TestPullThroughHosts(t *testing.T) {
	m, err := registry.Start("puller", "right")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	ctx := context.Background()
	if _, err := m.Push(ctx, "pause", "3.10.2", "10.0.20348.1"); err != nil {
		t.Fatal(err)
	}
	conf := `C:\Program Files\containerd\config.toml`
	hostsDir := `C:\Program Files\containerd\certs.d`
	write := func(auth string) memFS {
		fs := memFS{}
		_ = fs.WriteFile(conf, []byte("version = 3\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'registry.k8s.io/pause:3.10.2'\n"+
			"[plugins.'io.containerd.cri.v1.images'.registry]\n  config_path = '"+hostsDir+"'\n"+auth))
		_ = fs.WriteFile(hostsDir+`\registry.k8s.io\hosts.toml`, []byte("[host.'http://"+m.Addr+"']\n  capabilities = ['pull', 'resolve']\n"))
		return fs
	}
	authFor := func(pw string) string {
		return "[plugins.'io.containerd.cri.v1.images'.registry.configs.'" + m.Addr + "'.auth]\n  username = 'puller'\n  password = '" + pw + "'\n"
	}
	pull := func(t *testing.T, fs memFS, disk, image string) error {
		s, err := containerdRegistrySettings(fs, []string{"--config", conf})
		if err != nil {
			t.Fatal(err)
		}
		if s.ConfigPath != hostsDir || s.SandboxImage != "registry.k8s.io/pause:3.10.2" {
			t.Fatalf("settings = %+v", s)
		}
		return pullThroughHosts(ctx, fs, s, disk, image, nil)
	}
	if err := pull(t, write(authFor("right")), t.Name()+"ok", "registry.k8s.io/pause:3.10.2"); err != nil {
		t.Errorf("pull with the right credential: %v", err)
	}
	served := false
	for _, p := range m.Pulls() {
		if p.Status == 200 && p.User == "puller" && p.NS == "registry.k8s.io" && p.Path == "/v2/pause/manifests/3.10.2" {
			served = true
		}
	}
	if !served {
		t.Errorf("the mirror's log has no authenticated pull of pause with ns=registry.k8s.io: %+v", m.Pulls())
	}
	for name, auth := range map[string]string{"wrong": authFor("wrong"), "missing": ""} {
		err := pull(t, write(auth), t.Name()+name, "registry.k8s.io/pause:3.10.2")
		if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
			t.Errorf("%s credential: %v, want the mirror's 401", name, err)
		}
	}
	err = pull(t, write(authFor("right")), t.Name()+"missing-tag", "registry.k8s.io/pause:9.9")
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a tag the mirror lacks: %v, want not found", err)
	}
	err = pull(t, write(authFor("right")), t.Name()+"upstream", "docker.io/library/busybox:1")
	if err == nil || !strings.Contains(err.Error(), "busybox:1: not found") {
		t.Errorf("an image neither the mirror nor images.go's upstream has: %v, want not found", err)
	}
	// The mirror lacks agnhost by its upstream digest: containerd falls
	// back to registry.k8s.io, which serves it (images.go).
	if err := pull(t, write(authFor("right")), t.Name()+"fallback", agnhostRepository+"@"+servedImages[agnhostRepository]["2.53"]); err != nil {
		t.Errorf("agnhost through the upstream fallback: %v", err)
	}
	// ctr has no upstream: a host that is not loopback fails its lookup.
	err = winsim.PullThroughHosts(ctx, write("").ReadFile, hostsDir, func(string) [2]string { return [2]string{} }, nil, "docker.io/library/busybox:1")
	if err == nil || !strings.Contains(err.Error(), "registry-1.docker.io: no such host") {
		t.Errorf("an unmirrored registry without an upstream model: %v, want the failed lookup", err)
	}
	fs := write(authFor("right"))
	_ = fs.WriteFile(hostsDir+`\registry.k8s.io\hosts.toml`, []byte("[host.'http://"+m.Addr+"']\n  skip_verify = true\n"))
	if err := pull(t, fs, t.Name()+"unmodelled", "registry.k8s.io/pause:3.10.2"); err == nil || !strings.Contains(err.Error(), "not modelled") {
		t.Errorf("hosts.toml with skip_verify: %v, want refused as not modelled", err)
	}
}
