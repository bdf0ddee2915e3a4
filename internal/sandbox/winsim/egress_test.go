package winsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
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

// TestWindowsUpdateThroughWinHTTPProxy: at a site that lets only its proxy
// out, the Windows Update Agent reaches the WSUS outside only through the
// machine's WinHTTP proxy (netsh winhttp set proxy), as the agent running as
// LocalSystem does: without it, through another proxy, or with the server
// in the bypass list, the scan fails with 0x80072EFD; through the site's
// proxy the scan and the download go through it.
func TestWindowsUpdateThroughWinHTTPProxy(t *testing.T) {
	const learn = "https://learn.microsoft.com/en-us/troubleshoot/windows-server/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect"
	ssu := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	content := updatepkg.ContentPath + "kb5070010.cab"
	catalog, _ := json.Marshal([]updatepkg.CatalogEntry{ssu.Entry("Servicing Stack Update", "Security Updates", content)})
	files := map[string][]byte{updatepkg.CatalogPath: catalog, content: ssu.Encode()}
	wsus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(wsus.Close)
	var mu sync.Mutex
	var carried []string
	gp := goproxy.NewProxyHttpServer()
	gp.OnRequest().DoFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		mu.Lock()
		carried = append(carried, r.URL.Path)
		mu.Unlock()
		return r, nil
	})
	proxy := httptest.NewServer(gp)
	t.Cleanup(proxy.Close)
	other := httptest.NewServer(goproxy.NewProxyHttpServer())
	t.Cleanup(other.Close)
	wu, _ := url.Parse(wsus.URL)
	pu, _ := url.Parse(proxy.URL)
	ou, _ := url.Parse(other.URL)
	h := startTestHost(t, nil)
	h.SetFaults(Faults{Egress: &Egress{Proxy: pu.Host, Outside: []string{wu.Host}}})
	if err := h.reg.set(WUPolicyKey, "WUServer", RegValue{Type: RegSZ, Str: wsus.URL}); err != nil {
		t.Fatal(err)
	}
	if err := h.reg.set(WUAUPolicyKey, "UseWUServer", RegValue{Type: RegDWord, DWord: 1}); err != nil {
		t.Fatal(err)
	}
	netsh := func(args ...string) {
		t.Helper()
		if stdout, stderr, code := runProgram(t, h, `C:\Windows\System32\netsh.exe`, args...); code != 0 {
			t.Fatalf("netsh %v: code %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	agent := encoded("$ErrorActionPreference = 'Stop'\n$s = New-Object -ComObject 'Microsoft.Update.Session'\n" +
		"$r = $s.CreateUpdateSearcher().Search(\"IsInstalled=0 and Type='Software'\")\n'found ' + $r.Updates.Count\n" +
		"$c = New-Object -ComObject 'Microsoft.Update.UpdateColl'\n$c.Add($r.Updates.Item(0)) | Out-Null\n" +
		"$d = $s.CreateUpdateDownloader(); $d.Updates = $c\n'download ' + $d.Download().ResultCode")
	for _, tc := range []struct {
		name, server, bypass string
	}{
		{"no WinHTTP proxy", "", ""},
		{"another proxy", ou.Host, "<local>"},
		{"the server bypassed", "http=" + pu.Host + ";https=" + pu.Host, "<local>;" + wu.Hostname()},
	} {
		if tc.server != "" {
			netsh("winhttp", "set", "proxy", "proxy-server="+tc.server, "bypass-list="+tc.bypass)
		}
		if stdout, stderr, code := run(t, h, agent); code == 0 || !strings.Contains(stderr, "0x80072EFD") || strings.Contains(stdout, "found") {
			t.Errorf("%s: code %d, stdout %q, stderr %q; want the search to fail with 0x80072EFD (%s)", tc.name, code, stdout, stderr, learn)
		}
	}
	mu.Lock()
	if len(carried) != 0 {
		t.Errorf("the site proxy carried %v before WinHTTP named it", carried)
	}
	mu.Unlock()
	// As the provider's winhttp-proxy step writes it, with the lists quoted.
	netsh("winhttp", "set", "proxy", `proxy-server="http=`+pu.Host+";https="+pu.Host+`"`, `bypass-list="<local>;*.corp.example"`)
	if w := h.WinHTTPProxy(); w.Server != "http="+pu.Host+";https="+pu.Host || w.Bypass != "<local>;*.corp.example" {
		t.Fatalf("WinHTTPProxy() = %+v: the quotes are netsh's syntax, not the value", w)
	}
	if stdout, stderr, code := run(t, h, agent); code != 0 || !strings.Contains(stdout, "found 1") || !strings.Contains(stdout, "download 2") {
		t.Fatalf("through the site's proxy: code %d, stdout %q, stderr %q; want one update found and downloaded (%s)", code, stdout, stderr, learn)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(carried, []string{updatepkg.CatalogPath, content}) {
		t.Errorf("the site proxy carried %v, want the catalog then the package", carried)
	}
}

// TestWinHTTPProxyFor: the proxy list per scheme or for all, the bypass
// list's wildcards and <local>.
func TestWinHTTPProxyFor(t *testing.T) {
	for _, tc := range []struct {
		w        WinHTTPProxy
		url, out string
	}{
		{WinHTTPProxy{}, "http://wsus:8530/", ""},
		{WinHTTPProxy{Server: "p:3128"}, "https://wsus.corp:8531/", "http://p:3128"},
		{WinHTTPProxy{Server: "http=p:3128"}, "https://wsus.corp:8531/", ""},
		{WinHTTPProxy{Server: "http=p:3128;https=s:88"}, "https://wsus.corp:8531/", "http://s:88"},
		{WinHTTPProxy{Server: "p:3128", Bypass: "<local>"}, "http://wsus:8530/", ""},
		{WinHTTPProxy{Server: "p:3128", Bypass: "<local>"}, "http://wsus.corp:8530/", "http://p:3128"},
		{WinHTTPProxy{Server: "p:3128", Bypass: "<local>;*.CORP"}, "http://Wsus.corp:8530/", ""},
		{WinHTTPProxy{Server: "p:3128", Bypass: "10.0.0.5"}, "http://10.0.0.5:8530/", ""},
	} {
		u, _ := url.Parse(tc.url)
		if got := tc.w.For(u); got != tc.out {
			t.Errorf("%+v.For(%s) = %q, want %q", tc.w, tc.url, got, tc.out)
		}
	}
}
