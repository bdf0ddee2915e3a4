package winsim

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Egress is a site's network seen from a guest: the hosts outside (the
// download server, the registries) answer only through the site's HTTP
// proxy, as at a site whose firewall lets only the proxy out. A direct
// connection to one of them fails as a dropped connection does on Windows
// ("Unable to connect to the remote server"); a proxy other than the site's
// is unreachable the same way. Everything else (the cluster, vCenter, a
// mirror inside the site) is reached directly.
type Egress struct {
	// Proxy is the site's proxy, host:port.
	Proxy string
	// Outside are the host:port addresses reachable only through Proxy.
	Outside []string
}

// IsOutside reports whether the URL's host:port is reachable only through
// the proxy (false without an Egress).
func (e *Egress) IsOutside(u *url.URL) bool {
	if e == nil {
		return false
	}
	hp := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		hp = net.JoinHostPort(u.Hostname(), port)
	}
	for _, o := range e.Outside {
		if strings.EqualFold(o, hp) {
			return true
		}
	}
	return false
}

// EgressClient is the HTTP client a guest's download of target uses with
// proxy ("" for none), or the refusal a guest at this site meets: a direct
// connection to an outside host, or a proxy that is not the site's.
func (h *Host) EgressClient(target *url.URL, proxy string) (*http.Client, error) {
	e := h.Faults().Egress
	if proxy == "" {
		if e.IsOutside(target) {
			return nil, fmt.Errorf("winsim: %s is outside this site, which reaches it only through the proxy %s: the direct connection is dropped", target.Host, e.Proxy)
		}
		return http.DefaultClient, nil
	}
	pu, err := url.Parse(proxy)
	if err != nil || pu.Host == "" {
		return nil, fmt.Errorf("winsim: the proxy %q is not a URL", proxy)
	}
	if e != nil && !strings.EqualFold(pu.Host, e.Proxy) {
		return nil, fmt.Errorf("winsim: the proxy %s is not this site's (%s): the connection is dropped", pu.Host, e.Proxy)
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}, nil
}
