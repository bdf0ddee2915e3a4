package kubeletsim

import (
	"context"
	"strings"
	"testing"

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
