package bootstrap

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// Proxy is a site's HTTP proxy for what the guests fetch: the image build's
// downloads (Invoke-WebRequest -Proxy), containerd's and the kubelet's
// service environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY: Go's
// net/http.ProxyFromEnvironment, which both read; containerd on Windows
// reads only its own process environment, kubernetes-sigs/sig-windows-tools#339,
// containerd/containerd#8846), and WinHTTP for Windows Update
// (netsh winhttp set proxy).
type Proxy struct {
	HTTP, HTTPS string
	// NoProxy is the complete list the guest gets (CompleteNoProxy), in
	// NO_PROXY's comma-separated form once joined.
	NoProxy []string
}

// IsSet reports whether there is a proxy at all.
func (p Proxy) IsSet() bool { return p.HTTP != "" || p.HTTPS != "" }

// ValidateProxyURL checks one of proxy.http and proxy.https: an http URL
// of a host and port (the proxy itself is reached in clear, as
// HTTP_PROXY's value usually is), without credentials, which would land in
// the services' registry values and in WinHTTP's settings in clear.
func ValidateProxyURL(attr, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s %q is not a URL: %w", attr, raw, err)
	case u.Scheme != "http":
		return fmt.Errorf("%s %q: use an http:// URL of the proxy (http://proxy.example.com:3128); the proxy is spoken to in clear, HTTPS to the sites goes through it in a CONNECT tunnel", attr, raw)
	case u.User != nil:
		return fmt.Errorf("%s %q carries credentials: they would be written in clear into the services' environment and WinHTTP's settings; use a proxy that admits the guests by address", attr, raw)
	case u.Hostname() == "" || u.Port() == "":
		return fmt.Errorf("%s %q needs a host and a port (http://proxy.example.com:3128)", attr, raw)
	case u.Path != "" && u.Path != "/", u.RawQuery != "":
		return fmt.Errorf("%s %q: a proxy URL has no path or query", attr, raw)
	}
	return nil
}

// ValidateNoProxyEntry checks one no_proxy entry: a host name, a domain
// (".example.com" or "example.com" match its subdomains), an IP address or
// a CIDR, optionally with a port, as Go's NO_PROXY reads them
// (golang.org/x/net/http/httpproxy).
func ValidateNoProxyEntry(e string) error {
	if e == "" || strings.ContainsAny(e, " ,;") {
		return fmt.Errorf("no_proxy entry %q: give one host, domain, IP address or CIDR per entry", e)
	}
	if strings.Contains(e, "/") {
		if _, _, err := net.ParseCIDR(e); err != nil {
			return fmt.Errorf("no_proxy entry %q is not a CIDR: %w", e, err)
		}
	}
	return nil
}

// For is the proxy a download of rawURL goes through, "" when it goes
// direct (no proxy for its scheme, or NO_PROXY names its host), decided by
// the rules Go's ProxyFromEnvironment applies, so the image build's
// downloads and containerd agree on what bypasses the proxy.
func (p Proxy) For(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	cfg := httpproxy.Config{HTTPProxy: p.HTTP, HTTPSProxy: p.HTTPS, NoProxy: strings.Join(p.NoProxy, ",")}
	pu, err := cfg.ProxyFunc()(u)
	if err != nil || pu == nil {
		return ""
	}
	return pu.String()
}

// Environment is the services' Environment value (REG_MULTI_SZ, one
// NAME=value a string): what the service control manager adds to the
// environment of the service's process.
func (p Proxy) Environment() []string {
	var env []string
	if p.HTTP != "" {
		env = append(env, "HTTP_PROXY="+p.HTTP)
	}
	if p.HTTPS != "" {
		env = append(env, "HTTPS_PROXY="+p.HTTPS)
	}
	if len(p.NoProxy) > 0 {
		env = append(env, "NO_PROXY="+strings.Join(p.NoProxy, ","))
	}
	return env
}

// WinHTTP is netsh winhttp set proxy's proxy-server and bypass-list:
// "http=<host:port>;https=<host:port>" and the entries WinHTTP understands
// (host names, "*.domain" wildcards, IP addresses, "<local>"), separated by
// semicolons. WinHTTP's bypass list has no CIDRs
// (https://learn.microsoft.com/en-us/windows/win32/winhttp/netsh-exe-commands#set-proxy),
// so those entries are left out: Windows Update reaches no cluster address.
func (p Proxy) WinHTTP() (server, bypass string) {
	var servers []string
	for _, s := range []struct{ scheme, u string }{{"http", p.HTTP}, {"https", p.HTTPS}} {
		if u, err := url.Parse(s.u); err == nil && s.u != "" {
			servers = append(servers, s.scheme+"="+u.Host)
		}
	}
	list := []string{"<local>"}
	for _, e := range p.NoProxy {
		switch {
		case strings.Contains(e, "/"):
			continue
		case strings.HasPrefix(e, "."):
			list = append(list, "*"+e)
		default:
			list = append(list, e)
		}
	}
	return strings.Join(servers, ";"), strings.Join(list, ";")
}

// NoProxyFacts are the addresses a node reaches without a proxy, whatever
// the user lists: the cluster's Service and pod networks, the API server
// and the node's own subnet (OpenShift's cluster Proxy object adds the same
// to its status.noProxy: the service network, the cluster network, the
// machine network and the API server's names, which WMCO hands its Windows
// nodes' services).
type NoProxyFacts struct {
	ServiceCIDR, ClusterCIDR string
	// APIServer is the API server's URL; its host is what is bypassed.
	APIServer string
	// NodeSubnet is the node's subnet (a CIDR), or its address alone when
	// the prefix is unknown.
	NodeSubnet string
}

// localNoProxy is always bypassed: the node itself.
var localNoProxy = []string{"localhost", "127.0.0.1"}

// Required is what NO_PROXY must hold for these facts, in a stable order.
func (f NoProxyFacts) Required() []string {
	out := slices.Clone(localNoProxy)
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(f.ServiceCIDR)
	add(f.ClusterCIDR)
	if u, err := url.Parse(f.APIServer); err == nil {
		add(u.Hostname())
	}
	add(f.NodeSubnet)
	return out
}

// CompleteNoProxy is the user's list followed by every required entry it
// does not cover yet, and the required entries it missed (for the plan's
// warning; localhost and 127.0.0.1 are added without one).
func CompleteNoProxy(user []string, f NoProxyFacts) (all, missing []string) {
	all = slices.Clone(user)
	for _, r := range f.Required() {
		if covered(user, r) {
			continue
		}
		all = append(all, r)
		if !slices.Contains(localNoProxy, r) {
			missing = append(missing, r)
		}
	}
	return all, missing
}

// covered reports whether a NO_PROXY list already bypasses want (a host,
// an IP address or a CIDR) by Go's rules: the entry itself, a CIDR holding
// the address or the whole network, or a domain the host is under.
func covered(list []string, want string) bool {
	if slices.Contains(list, want) {
		return true
	}
	wantIP := net.ParseIP(want)
	_, wantNet, netErr := net.ParseCIDR(want)
	for _, e := range list {
		if _, n, err := net.ParseCIDR(e); err == nil {
			switch {
			case wantIP != nil && n.Contains(wantIP):
				return true
			case netErr == nil && n.Contains(wantNet.IP) && prefixLen(n) <= prefixLen(wantNet):
				return true
			}
			continue
		}
		if wantIP != nil || netErr == nil {
			continue
		}
		d := strings.TrimPrefix(e, ".")
		if d != "" && (want == d || strings.HasSuffix(want, "."+d)) {
			return true
		}
	}
	return false
}

func prefixLen(n *net.IPNet) int { ones, _ := n.Mask.Size(); return ones }

// ErrProxyUnset is what a download without a proxy reports when it fails
// (the build's message names proxy.https as the fix).
var ErrProxyUnset = errors.New("no proxy set")

// WinHTTPProxyStep sets WinHTTP's proxy, which Windows Update's agent uses
// for its own downloads (netsh winhttp set proxy:
// https://learn.microsoft.com/en-us/windows/win32/winhttp/netsh-exe-commands#set-proxy,
// and "Windows Update uses WinHTTP": https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect).
func WinHTTPProxyStep(p Proxy) (Step, error) {
	server, bypass := p.WinHTTP()
	script, err := render("winhttp-proxy", "winhttp-proxy", map[string]any{"Server": server, "Bypass": bypass})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "winhttp-proxy", Script: script}, nil
}
