package kubeletsim

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/registry"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/siteproxy"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestPullsTakeContainerdsProxy: at a proxy-only site a pull reaches the
// registry only through the proxy containerd's own service environment
// names, through a CONNECT tunnel the site proxy carries.
func TestPullsTakeContainerdsProxy(t *testing.T) {
	p, err := siteproxy.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	const image = "registry.k8s.io/e2e-test-images/agnhost:2.53"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		running bool
		want    string // "" = the pull reaches the registry
	}{
		{"no proxy in containerd's environment", map[string]string{}, true, "dial tcp registry.k8s.io:443: i/o timeout"},
		{"the registry in NO_PROXY", map[string]string{"HTTPS_PROXY": p.URL, "NO_PROXY": ".k8s.io"}, true, "dial tcp registry.k8s.io:443: i/o timeout"},
		{"another proxy", map[string]string{"HTTPS_PROXY": "http://127.0.0.1:1"}, true, "proxyconnect tcp"},
		{"containerd stopped", map[string]string{"HTTPS_PROXY": p.URL}, false, "containerd is not running"},
		{"through the site proxy", map[string]string{"HTTPS_PROXY": p.URL}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &Kubelet{cfg: Config{
				Egress:     func() *winsim.Egress { return p.Egress() },
				RuntimeEnv: func() (map[string]string, bool) { return tc.env, tc.running },
			}}
			before := len(p.Requests())
			err := k.reachRegistry(context.Background(), image)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("pull: %v", err)
			case tc.want == "" && !p.Carried("CONNECT registry.k8s.io:443"):
				t.Fatalf("the site proxy carried no CONNECT: %v", p.Requests())
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "failed to pull and unpack image")):
				t.Fatalf("pull: %v, want containerd's error with %q", err, tc.want)
			case tc.want != "" && len(p.Requests()) != before:
				t.Fatalf("a failed pull went through the site proxy: %v", p.Requests()[before:])
			}
		})
	}
	// Without an egress restriction, nothing is asked of the network.
	k := &Kubelet{cfg: Config{Egress: func() *winsim.Egress { return nil }}}
	if err := k.reachRegistry(context.Background(), image); err != nil {
		t.Errorf("pull at a site with direct access: %v", err)
	}
}

// TestMirrorFallbackTakesContainerdsProxy: a pull through hosts.toml whose
// mirror lacks the image falls back to the image's own registry (containerd's
// hosts order: the mirrors, then the upstream host), and at a proxy-only
// site that fallback reaches the registry only through containerd's proxy,
// as a pull without mirrors does; what the mirror serves is reached
// directly, proxy or not. A fallback that cannot connect leaves the
// mirror's 404 as the pull's error (containerd reports the most telling of
// its hosts' failures: winsim.PullThroughHosts).
func TestMirrorFallbackTakesContainerdsProxy(t *testing.T) {
	p, err := siteproxy.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	m, err := registry.Start("puller", "right")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	if _, err := m.Push(ctx, "pause", "3.10.2", "10.0.20348.1"); err != nil {
		t.Fatal(err)
	}
	hostsDir := `C:\Program Files\containerd\certs.d`
	fs := memFS{}
	_ = fs.WriteFile(hostsDir+`\registry.k8s.io\hosts.toml`, []byte("[host.'http://"+m.Addr+"']\n  capabilities = ['pull', 'resolve']\n"))
	s := registrySettings{ConfigPath: hostsDir, Auth: map[string][2]string{m.Addr: {"puller", "right"}}}
	agnhost := agnhostRepository + "@" + servedImages[agnhostRepository]["2.53"] // not in the mirror
	for _, tc := range []struct {
		name, image string
		env         map[string]string
		want        string // "" = pulled
	}{
		{"mirror, no proxy", "registry.k8s.io/pause:3.10.2", map[string]string{}, ""},
		{"fallback, no proxy", agnhost, map[string]string{}, "agnhost@" + servedImages[agnhostRepository]["2.53"] + ": not found"},
		{"fallback, another proxy", agnhost, map[string]string{"HTTPS_PROXY": "http://127.0.0.1:1"}, ": not found"},
		{"fallback through the site proxy", agnhost, map[string]string{"HTTPS_PROXY": p.URL}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &Kubelet{cfg: Config{
				Egress:     func() *winsim.Egress { return p.Egress() },
				RuntimeEnv: func() (map[string]string, bool) { return tc.env, true },
			}}
			before := len(p.Requests())
			err := pullThroughHosts(ctx, fs, s, t.Name(), tc.image, k.reachUpstream)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("pull: %v", err)
			case tc.want == "" && tc.image == agnhost && !slices.Contains(p.Requests()[before:], "CONNECT registry.k8s.io:443"):
				t.Fatalf("the fallback did not go through the site proxy: %v", p.Requests()[before:])
			case tc.want == "" && tc.image != agnhost && len(p.Requests()) != before:
				t.Fatalf("a pull from the mirror went through the site proxy: %v", p.Requests()[before:])
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("pull: %v, want it to fail with %q", err, tc.want)
			case tc.want != "" && len(p.Requests()) != before:
				t.Fatalf("a failed fallback went through the site proxy: %v", p.Requests()[before:])
			}
		})
	}
}
