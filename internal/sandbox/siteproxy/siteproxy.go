// Package siteproxy is the sandbox's site proxy: a real HTTP forward proxy
// (github.com/elazarl/goproxy) through which guests at a site that lets only
// the proxy out (winsim.Faults.Egress) reach the download server and the
// registries. It forwards plain HTTP requests to the download server as any
// forward proxy does, and answers a CONNECT to a registry the sandbox
// stands in for (its image table, internal/sandbox/kubeletsim/images.go)
// with 200, the tunnel a pull opens; every request it carries is recorded,
// so a test proves what went through it.
package siteproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Registries are the registries the sandbox's image table stands in for,
// as host:port (containerd's pulls connect to port 443).
var Registries = []string{"registry.k8s.io:443", "mcr.microsoft.com:443", "registry-1.docker.io:443"}

// Proxy is a running site proxy.
type Proxy struct {
	// URL is the proxy's address for HTTP_PROXY and friends: http://127.0.0.1:<port>.
	URL  string
	Addr string // host:port
	srv  *http.Server
	ln   net.Listener

	mu       sync.Mutex
	requests []string
	names    map[string]string // host:port the proxy resolves -> the address it dials
}

// Name makes the proxy (and only the proxy) resolve name, a host:port, to
// addr: a server outside the site that the guests know by a name their own
// DNS does not answer, as a split-horizon site's downloads are. Go's proxy
// rules (and .NET's) never send a loopback address through a proxy, so the
// sandbox's servers on 127.0.0.1 need a name to be reached through it.
func (p *Proxy) Name(name, addr string) {
	p.mu.Lock()
	p.names[strings.ToLower(name)] = addr
	p.mu.Unlock()
}

// Start listens on a free loopback port.
func Start() (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, names: map[string]string{}}
	p.URL = "http://" + p.Addr
	gp := goproxy.NewProxyHttpServer()
	var d net.Dialer
	gp.Tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		p.mu.Lock()
		to, ok := p.names[strings.ToLower(addr)]
		p.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("siteproxy: %s is not a server of the sandbox (it has no internet)", addr)
		}
		return d.DialContext(ctx, network, to)
	}
	gp.OnRequest().DoFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		p.record(r.Method + " " + r.URL.String())
		return r, nil
	})
	gp.OnRequest(goproxy.ReqHostIs(Registries...)).HijackConnect(func(r *http.Request, client net.Conn, _ *goproxy.ProxyCtx) {
		p.record("CONNECT " + r.Host)
		_, _ = client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")) // the client reads it or has gone
		_ = client.Close()                                                         // the stand-in registry's tunnel ends here
	})
	gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		// Any other CONNECT is refused: the sandbox has no internet.
		p.record("CONNECT " + host + " (refused)")
		return goproxy.RejectConnect, host
	})
	p.srv = &http.Server{Handler: gp, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }() // Serve returns ErrServerClosed at Close
	return p, nil
}

func (p *Proxy) record(s string) {
	p.mu.Lock()
	p.requests = append(p.requests, s)
	p.mu.Unlock()
}

// Requests are the requests the proxy carried, in order ("GET <url>",
// "CONNECT <host:port>").
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Carried reports whether a request containing s went through the proxy.
func (p *Proxy) Carried(s string) bool {
	return slices.ContainsFunc(p.Requests(), func(r string) bool { return strings.Contains(r, s) })
}

// Egress is the site in which guests reach outside (the given download
// servers, host:port, and the registries) only through this proxy.
func (p *Proxy) Egress(outside ...string) *winsim.Egress {
	return &winsim.Egress{Proxy: p.Addr, Outside: append(slices.Clone(outside), Registries...)}
}

// Close stops the proxy.
func (p *Proxy) Close() error {
	if err := p.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
