package kubeletsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/distribution/reference"
	"golang.org/x/net/http/httpproxy"
)

// reachRegistry is the network half of a pull at a site whose registries
// answer only through its proxy (winsim.Faults.Egress): containerd resolves
// the image at https://<registry>/v2/ with Go's net/http, which takes its
// proxy from the process environment (ProxyFromEnvironment: HTTPS_PROXY,
// NO_PROXY), and containerd on Windows has only the environment its service
// was started with (kubernetes-sigs/sig-windows-tools#339,
// containerd/containerd#8846). So: no proxy in that environment, or the
// registry in its NO_PROXY, is a direct connection the site drops, and the
// pull fails as containerd's does; with one, containerd opens a CONNECT
// tunnel through it (a real request to the sandbox's proxy, which must
// answer 200). What the registry then serves is the sandbox's image table
// (images.go).
func (k *Kubelet) reachRegistry(ctx context.Context, image string) error {
	if _, ok := mirrorPulled.Load(k.cfg.Host.Disk + "\x00" + image); ok {
		// Pulled through a registry mirror of containerd's hosts.toml
		// (registry_pull.go), a host inside the site, reached directly.
		return nil
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil // pullImage refused it
	}
	if err := k.reachUpstream(ctx, image); err != nil {
		return fmt.Errorf("rpc error: code = Unknown desc = failed to pull and unpack image %q: failed to resolve reference %q: "+
			"failed to do request: Head %q: %w", image, image, "https://"+upstreamHost(named)+"/v2/"+reference.Path(named)+"/manifests/"+tagOf(named), err)
	}
	return nil
}

// upstreamHost is the host containerd contacts for the image's registry.
func upstreamHost(named reference.Named) string {
	if registry := reference.Domain(named); registry != "docker.io" {
		return registry
	}
	return "registry-1.docker.io" // containerd's default host for docker.io
}

// reachUpstream is the connection to the image's own registry, as the
// proxy and the site let containerd make it: nil, or the dial's failure as
// Go's net/http words it. A pull through hosts.toml that falls back to the
// upstream registry (registry_pull.go) is held to it the same way.
func (k *Kubelet) reachUpstream(ctx context.Context, image string) error {
	if k.cfg.Egress == nil {
		return nil
	}
	e := k.cfg.Egress()
	if e == nil {
		return nil
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil // pullImage refused it
	}
	registry := upstreamHost(named)
	target := &url.URL{Scheme: "https", Host: registry, Path: "/v2/"}
	if !e.IsOutside(target) {
		return nil
	}
	env, running := map[string]string{}, false
	if k.cfg.RuntimeEnv != nil {
		env, running = k.cfg.RuntimeEnv()
	}
	if !running {
		return errors.New("containerd is not running")
	}
	cfg := httpproxy.Config{HTTPProxy: env["HTTP_PROXY"], HTTPSProxy: env["HTTPS_PROXY"], NoProxy: env["NO_PROXY"]}
	proxy, err := cfg.ProxyFunc()(target)
	if err != nil {
		return fmt.Errorf("proxyconnect tcp: %w", err)
	}
	if proxy == nil {
		return fmt.Errorf("dial tcp %s:443: i/o timeout", registry)
	}
	if !strings.EqualFold(proxy.Host, e.Proxy) {
		return fmt.Errorf("proxyconnect tcp: dial tcp %s: i/o timeout", proxy.Host)
	}
	return connect(ctx, proxy.Host, registry+":443")
}

// connect opens a CONNECT tunnel to target through the proxy at addr and
// closes it: the pull's connection to the registry.
func connect(ctx context.Context, addr, target string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("proxyconnect tcp: %w", err)
	}
	defer func() { _ = conn.Close() }() // the tunnel's use ends here
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if err := req.Write(conn); err != nil {
		return fmt.Errorf("proxyconnect tcp: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return fmt.Errorf("proxyconnect tcp: %w", err)
	}
	_ = resp.Body.Close() // a CONNECT response has no body to read
	if resp.StatusCode != http.StatusOK {
		return errors.New("proxyconnect tcp: " + resp.Status)
	}
	return nil
}

func tagOf(named reference.Named) string {
	if d, ok := named.(reference.Digested); ok {
		return d.Digest().String()
	}
	if t, ok := named.(reference.Tagged); ok {
		return t.Tag()
	}
	return "latest"
}
