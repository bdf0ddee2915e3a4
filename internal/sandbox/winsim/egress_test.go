package winsim

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/elazarl/goproxy"
)

// TestEgressThroughProxyOnly: at a site that lets only its proxy out,
// Invoke-WebRequest reaches an outside server only with -Proxy naming that
// proxy (Windows PowerShell 5.1 ignores HTTP_PROXY), and netsh keeps
// WinHTTP's proxy in the registry.
func TestEgressThroughProxyOnly(t *testing.T) {
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("payload")) }))
	t.Cleanup(outside.Close)
	var carried atomic.Int32
	gp := goproxy.NewProxyHttpServer()
	gp.OnRequest().DoFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		carried.Add(1)
		return r, nil
	})
	proxy := httptest.NewServer(gp)
	t.Cleanup(proxy.Close)
	other := httptest.NewServer(goproxy.NewProxyHttpServer())
	t.Cleanup(other.Close)
	h := startTestHost(t, nil)
	u, _ := url.Parse(outside.URL)
	pu, _ := url.Parse(proxy.URL)
	h.SetFaults(Faults{Egress: &Egress{Proxy: pu.Host, Outside: []string{u.Host}}})
	get := func(extra string) (string, string, int) {
		return run(t, h, encoded("New-Item -ItemType Directory -Force -Path 'C:\\k' | Out-Null\n"+
			"$env:HTTP_PROXY = '"+proxy.URL+"'\n"+
			"Invoke-WebRequest -UseBasicParsing -Uri '"+outside.URL+"/f' -OutFile 'C:\\k\\f'"+extra+"\nGet-Content -Path 'C:\\k\\f'"))
	}
	if _, stderr, code := get(""); code == 0 || !strings.Contains(stderr, "Unable to connect to the remote server") {
		t.Errorf("direct download at a proxy-only site: code %d, stderr %q; want Unable to connect to the remote server", code, stderr)
	}
	if carried.Load() != 0 {
		t.Errorf("HTTP_PROXY in the session sent the download through the proxy; Windows PowerShell 5.1 ignores it")
	}
	if _, stderr, code := get(" -Proxy '" + other.URL + "'"); code == 0 || !strings.Contains(stderr, "Unable to connect to the remote server") {
		t.Errorf("download through a proxy that is not the site's: code %d, stderr %q", code, stderr)
	}
	if stdout, stderr, code := get(" -Proxy '" + proxy.URL + "'"); code != 0 || !strings.Contains(stdout, "payload") || carried.Load() != 1 {
		t.Errorf("download through the site's proxy: code %d, stdout %q, stderr %q, the proxy carried %d requests", code, stdout, stderr, carried.Load())
	}

	stdout, stderr, code := runProgram(t, h, `C:\Windows\System32\netsh.exe`, "winhttp", "set", "proxy", "proxy-server=http=p:3128;https=p:3128", "bypass-list=<local>;*.corp")
	if code != 0 || !strings.Contains(stdout, "Proxy Server(s) :  http=p:3128;https=p:3128") {
		t.Fatalf("netsh winhttp set proxy: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if w := h.WinHTTPProxy(); w.Server != "http=p:3128;https=p:3128" || w.Bypass != "<local>;*.corp" {
		t.Errorf("WinHTTPProxy() = %+v", w)
	}
	if _, stderr, code := runProgram(t, h, `C:\Windows\System32\netsh.exe`, "interface", "ip", "show", "config"); code == 0 || !strings.Contains(stderr, "does not model") {
		t.Errorf("netsh interface: code %d, stderr %q; want refused as not modelled", code, stderr)
	}
	if stdout, _, code := runProgram(t, h, `C:\Windows\System32\netsh.exe`, "winhttp", "set", "proxy"); code != 1 || !strings.Contains(stdout, "not valid") {
		t.Errorf("netsh winhttp set proxy without a server: code %d, stdout %q", code, stdout)
	}
}
