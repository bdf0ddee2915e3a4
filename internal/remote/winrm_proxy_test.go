package remote

import (
	"net/http"
	"testing"
)

// TestWinRMIgnoresProxyEnvironment: the WinRM transport never goes through
// an HTTPS_PROXY or HTTP_PROXY: through one, net/http would dial and secure
// the connection itself, and neither the configured CA and server name nor
// NTLM (which newHTTPClient's dial applies) would hold.
func TestWinRMIgnoresProxyEnvironment(t *testing.T) {
	for _, cfg := range []Config{{Host: "guest.example", HTTPS: true}, {Host: "guest.example", NTLM: true}} {
		c, err := newHTTPClient(cfg, "https://guest.example:5986/wsman")
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := c.Transport.(*http.Transport)
		if !ok {
			t.Fatalf("transport %T", c.Transport)
		}
		if tr.Proxy != nil {
			t.Errorf("HTTPS %v NTLM %v: the transport takes a proxy: the configured TLS and NTLM would not apply through it", cfg.HTTPS, cfg.NTLM)
		}
	}
}
