package winsim

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// netsh.exe, its winhttp context's set proxy and show proxy only: `netsh
// winhttp set proxy proxy-server="<list>" bypass-list="<list>"` sets the
// machine's WinHTTP proxy, which Windows Update's agent and other services
// using WinHTTP go through, and prints the settings; show proxy prints them
// ("Direct access (no proxy server)." when none). Sources:
// https://learn.microsoft.com/en-us/windows/win32/winhttp/netsh-exe-commands#set-proxy
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect
// Every other context and command (netsh interface, advfirewall, winhttp
// import, reset) is refused as not modelled.
func init() { registerProgram("netsh.exe", SubsystemConsole, runNetsh) }

// WinHTTPProxy is the machine's WinHTTP proxy: netsh winhttp set proxy's
// proxy-server and bypass-list ("" for direct access).
type WinHTTPProxy struct{ Server, Bypass string }

// winHTTPKey holds WinHTTP's settings (the WinHttpSettings value), in the
// machine's registry, so a clone of the disk keeps them. Windows stores a
// REG_BINARY structure there whose layout is not modelled: the sandbox keeps
// the two strings as a REG_MULTI_SZ of its own under the same name.
const winHTTPKey = `HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Internet Settings\Connections`

// WinHTTPProxy returns the WinHTTP proxy the host's netsh set.
func (h *Host) WinHTTPProxy() WinHTTPProxy {
	v, ok := h.reg.get(winHTTPKey, "WinHttpSettings")
	if !ok || len(v.Multi) != 2 {
		return WinHTTPProxy{}
	}
	return WinHTTPProxy{Server: v.Multi[0], Bypass: v.Multi[1]}
}

// For is the proxy WinHTTP sends a request for u through, as an
// http://host:port URL, or "" for a direct connection: none is set, the
// proxy list names none for u's scheme, or the bypass list names u's host.
// The proxy list is "<server>" for every scheme or "<scheme>=<server>"
// entries separated by semicolons; the bypass list's entries are host names
// with "*" wildcards, matched without case, and "<local>", any host without
// a period. Sources: WINHTTP_PROXY_INFO's lpszProxy and lpszProxyBypass
// (https://learn.microsoft.com/en-us/windows/win32/api/winhttp/ns-winhttp-winhttp_proxy_info),
// netsh winhttp set proxy
// (https://learn.microsoft.com/en-us/windows/win32/winhttp/netsh-exe-commands#set-proxy).
func (w WinHTTPProxy) For(u *url.URL) string {
	if w.Server == "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	for _, e := range strings.Split(w.Bypass, ";") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case e == "<local>":
			if !strings.Contains(host, ".") {
				return ""
			}
		default:
			if ok, err := path.Match(e, host); err == nil && ok {
				return ""
			}
		}
	}
	server := ""
	for _, e := range strings.Split(w.Server, ";") {
		e = strings.TrimSpace(e)
		scheme, s, perScheme := strings.Cut(e, "=")
		switch {
		case !perScheme && server == "":
			server = e
		case perScheme && strings.EqualFold(scheme, u.Scheme):
			server = s
		}
	}
	if server == "" {
		return ""
	}
	return "http://" + strings.TrimPrefix(server, "http://")
}

func runNetsh(_ context.Context, p *Process) int {
	refuse := func(what string) int {
		fmt.Fprintf(p.Stderr, "winsim: netsh.exe: the simulated host does not model %s\r\n", what)
		return 1
	}
	args := p.Args
	if len(args) < 3 || !strings.EqualFold(args[0], "winhttp") || !strings.EqualFold(args[2], "proxy") {
		return refuse("netsh " + strings.Join(args, " ") + " (only winhttp set proxy and winhttp show proxy)")
	}
	show := func(w WinHTTPProxy) {
		fmt.Fprint(p.Stdout, "\r\nCurrent WinHTTP proxy settings:\r\n\r\n")
		if w.Server == "" {
			fmt.Fprint(p.Stdout, "    Direct access (no proxy server).\r\n\r\n")
			return
		}
		fmt.Fprintf(p.Stdout, "    Proxy Server(s) :  %s\r\n    Bypass List     :  %s\r\n\r\n", w.Server, w.Bypass)
	}
	switch strings.ToLower(args[1]) {
	case "show":
		if len(args) != 3 {
			return refuse("netsh winhttp show proxy with arguments")
		}
		show(p.Host.WinHTTPProxy())
		return 0
	case "set":
	default:
		return refuse("netsh winhttp " + args[1])
	}
	var w WinHTTPProxy
	for _, a := range args[3:] {
		k, v, ok := strings.Cut(a, "=")
		// netsh's documented form quotes the lists
		// (proxy-server="http=p:3128;https=p:3128"); the quotes delimit the
		// value, as the C runtime's argument parsing drops them, and are not
		// part of it.
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		switch {
		case ok && strings.EqualFold(k, "proxy-server"):
			w.Server = v
		case ok && strings.EqualFold(k, "bypass-list"):
			w.Bypass = v
		default:
			return refuse("the argument " + a + " of netsh winhttp set proxy")
		}
	}
	if w.Server == "" {
		// netsh's usage text, exit code 1.
		fmt.Fprint(p.Stdout, "The syntax supplied for this command is not valid. Check help for the correct syntax.\r\n\r\n")
		return 1
	}
	if err := p.Host.reg.set(winHTTPKey, "WinHttpSettings", RegValue{Type: RegMultiSZ, Multi: []string{w.Server, w.Bypass}}); err != nil {
		fmt.Fprintf(p.Stderr, "Error: %v\r\n", err)
		return 1
	}
	show(w)
	return 0
}
