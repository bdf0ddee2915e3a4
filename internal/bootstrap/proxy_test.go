package bootstrap

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateProxyURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://proxy.example.com:3128":      "",
		"https://proxy.example.com:3128":     "use an http:// URL",
		"http://user:pw@proxy.example.com:1": "carries credentials",
		"http://proxy.example.com":           "needs a host and a port",
		"http://proxy.example.com:3128/x":    "no path",
	} {
		err := ValidateProxyURL("proxy.https", raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "proxy.https")):
			t.Errorf("%s: got %v, want an error naming proxy.https and %q", raw, err, want)
		}
	}
	if err := ValidateNoProxyEntry("10.0.0.0/33"); err == nil {
		t.Error("10.0.0.0/33 accepted as a no_proxy CIDR")
	}
	if err := ValidateNoProxyEntry("a.example.com,b.example.com"); err == nil {
		t.Error("two entries in one accepted")
	}
}

func TestCompleteNoProxy(t *testing.T) {
	facts := NoProxyFacts{ServiceCIDR: "10.96.0.0/12", ClusterCIDR: "10.244.0.0/16", APIServer: "https://api.corp.example.com:6443", NodeSubnet: "192.168.10.0/24"}
	all, missing := CompleteNoProxy([]string{"10.0.0.0/8", ".corp.example.com"}, facts)
	// 10.0.0.0/8 holds both cluster networks and .corp.example.com the API
	// server: only the node's subnet is missing (and the local names).
	if want := []string{"10.0.0.0/8", ".corp.example.com", "localhost", "127.0.0.1", "192.168.10.0/24"}; !slices.Equal(all, want) {
		t.Errorf("all = %v, want %v", all, want)
	}
	if !slices.Equal(missing, []string{"192.168.10.0/24"}) {
		t.Errorf("missing = %v, want the node's subnet only", missing)
	}
	// A narrower CIDR does not cover a wider network.
	if _, missing := CompleteNoProxy([]string{"10.96.0.0/16"}, facts); !slices.Contains(missing, "10.96.0.0/12") {
		t.Errorf("10.96.0.0/16 counted as covering 10.96.0.0/12: missing = %v", missing)
	}
	// An IP API server inside a listed CIDR is covered.
	facts.APIServer = "https://192.168.10.5:6443"
	if _, missing := CompleteNoProxy([]string{"192.168.0.0/16", "10.96.0.0/12", "10.244.0.0/16"}, facts); len(missing) != 0 {
		t.Errorf("missing = %v, want none", missing)
	}
}

func TestProxyForAndEnvironment(t *testing.T) {
	p := Proxy{HTTP: "http://p:3128", HTTPS: "http://p:3129", NoProxy: []string{"mirror.corp", "10.0.0.0/8"}}
	for u, want := range map[string]string{
		"https://dl.k8s.io/release/x": "http://p:3129",
		"http://dl.k8s.io/x":          "http://p:3128",
		"https://mirror.corp/x":       "",
		"https://10.1.2.3/x":          "",
	} {
		if got := p.For(u); got != want {
			t.Errorf("For(%s) = %q, want %q", u, got, want)
		}
	}
	if got, want := p.Environment(), []string{"HTTP_PROXY=http://p:3128", "HTTPS_PROXY=http://p:3129", "NO_PROXY=mirror.corp,10.0.0.0/8"}; !slices.Equal(got, want) {
		t.Errorf("Environment() = %v, want %v", got, want)
	}
	server, bypass := Proxy{HTTP: "http://p:3128", HTTPS: "http://p:3128", NoProxy: []string{".corp", "10.0.0.0/8", "h.example"}}.WinHTTP()
	if server != "http=p:3128;https=p:3128" || bypass != "<local>;*.corp;h.example" {
		t.Errorf("WinHTTP() = %q, %q", server, bypass)
	}
}

// TestJoinWithoutProxyKeepsTheImages: a node without proxy keeps what its
// image set (containerd's service environment, WinHTTP's proxy: the image's
// proxy is the site's); its join neither writes nor clears them, and gives
// the kubelet no proxy. With proxy, the join replaces containerd's.
func TestJoinWithoutProxyKeepsTheImages(t *testing.T) {
	steps, err := JoinSteps(testJoinConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		for _, touch := range []string{"containerd-proxy", "netsh", "reg.exe delete", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
			if s.Name == touch || strings.Contains(s.Script, touch) {
				t.Errorf("a join without proxy: step %s touches %q", s.Name, touch)
			}
		}
	}
	cfg := testJoinConfig()
	cfg.Proxy = Proxy{HTTPS: "http://proxy.corp.example:3128", NoProxy: []string{"10.96.0.0/12"}}
	steps, err = JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, s := range steps {
		if strings.Contains(s.Script, "HTTPS_PROXY=http://proxy.corp.example:3128") {
			set[s.Name] = true
		}
	}
	if !set["containerd-proxy"] || !set["kubelet-service"] {
		t.Errorf("a join with proxy writes HTTPS_PROXY in the steps %v, want containerd-proxy and kubelet-service", set)
	}
}
