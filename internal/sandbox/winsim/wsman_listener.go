package winsim

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The WinRM listeners as the WS-Management cmdlets see them
// (winrm/config/Listener): the HTTP listener the disk has, and an HTTPS
// listener created on it, at setup (Install, listeners.json) or at run time
// with New-WSManInstance, bound to a certificate of Cert:\LocalMachine\My by
// its thumbprint. Sources: learn.microsoft.com/powershell/module/microsoft.wsman.management/new-wsmaninstance
// (its example creates an HTTPS listener: -ResourceURI winrm/config/Listener
// -SelectorSet @{Transport='HTTPS'; Address=...} -ValueSet @{Hostname=...;
// CertificateThumbprint=...}), and learn.microsoft.com/troubleshoot/windows-client/system-management-components/configure-winrm-for-https
// (the certificate must be in the computer's personal store, its CN match
// the listener's Hostname, and it must be for Server Authentication).

const wsmanDocs = "https://learn.microsoft.com/en-us/powershell/module/microsoft.wsman.management/"

// listenerURI is the one resource the WS-Management cmdlets model.
const listenerURI = "winrm/config/Listener"

// wsmanFault fails a WS-Management cmdlet as the WinRM client reports a
// fault: an InvalidOperationException whose message is the WSManFault.
func wsmanFault(c *Call, msg string) error {
	return c.Throw(c.Fail(msg, "InvalidOperation", "", "InvalidOperationException",
		"System.InvalidOperationException,Microsoft.WSMan.Management."+strings.ReplaceAll(c.Cmd.Name, "-", "")+"Command", "System.InvalidOperationException"))
}

// listenerSelector reads -SelectorSet @{Address='*'; Transport='HTTPS'}:
// only that listener is modelled.
func listenerSelector(c *Call) (transport string, err error) {
	if !strings.EqualFold(strings.Trim(c.Str("ResourceURI"), "/"), listenerURI) {
		return "", c.Unmodelled("the WS-Management resource " + c.Str("ResourceURI") + " (only " + listenerURI + ")")
	}
	sel, ok := c.Value("SelectorSet").(*pwsh.Hashtable)
	if !ok {
		return "", c.Unmodelled("-SelectorSet that is not a hash table")
	}
	addr, _ := sel.Get("Address")
	tr, _ := sel.Get("Transport")
	if pwsh.Text(addr) != "*" || len(sel.Keys()) != 2 {
		return "", c.Unmodelled("a listener selector other than @{Address='*'; Transport=...}")
	}
	return strings.ToUpper(pwsh.Text(tr)), nil
}

// listenerValues reads -ValueSet: Hostname and CertificateThumbprint only.
func listenerValues(c *Call) (hostname, thumb string, err error) {
	vs, ok := c.Value("ValueSet").(*pwsh.Hashtable)
	if !ok {
		return "", "", c.Unmodelled("-ValueSet that is not a hash table")
	}
	for _, k := range vs.Keys() {
		v, _ := vs.Get(k)
		switch strings.ToLower(k) {
		case "hostname":
			hostname = pwsh.Text(v)
		case "certificatethumbprint":
			thumb = pwsh.Text(v)
		default:
			return "", "", c.Unmodelled("the listener setting " + k + " (only Hostname and CertificateThumbprint)")
		}
	}
	return hostname, thumb, nil
}

// checkListenerCert refuses what WinRM refuses of an HTTPS listener's
// certificate: one missing from the computer's personal store, and a
// Hostname that is not its CN.
func (h *Host) checkListenerCert(c *Call, hostname, thumb string) (string, error) {
	sc, ok := h.storeCert(thumb)
	if !ok {
		return "", wsmanFault(c, "The WS-Management service cannot find the certificate that was requested. ")
	}
	block, _ := pem.Decode(sc.CertPEM)
	x, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", err
	}
	if hostname == "" {
		hostname = x.Subject.CommonName
	}
	if !strings.EqualFold(hostname, x.Subject.CommonName) {
		return "", wsmanFault(c, "The certificate CN and the hostname that were provided do not match. ")
	}
	return hostname, nil
}

func (h *Host) saveInstallation(in Installation) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.cfg.Dir, listenersFile), b, 0o600)
}

func listenerObject(transport, port, hostname, thumb string) *pwsh.Object {
	o := NewObject("System.Xml.XmlElement#http://schemas.microsoft.com/wbem/wsman/1/config/listener#Listener")
	o.Str = "Listener"
	return o.Set("Address", "*").Set("Transport", transport).Set("Port", port).Set("Hostname", hostname).
		Set("Enabled", "true").Set("URLPrefix", "wsman").Set("CertificateThumbprint", thumb)
}

func wsmanCmdlets() []*Cmdlet {
	uri := func() *Param { return P("ResourceURI", "System.Uri", 0, Mandatory, Alias("ruri")) }
	unmodelled := func() []*Param {
		return []*Param{P("ComputerName", "System.String", -1, Alias("cn"), Unmodelled), P("ConnectionURI", "System.Uri", -1, Unmodelled),
			P("Credential", "System.Management.Automation.PSCredential", -1, Alias("cred", "c"), Unmodelled),
			P("Authentication", "Microsoft.WSMan.Management.AuthenticationMechanism", -1, Alias("auth", "am"), Unmodelled),
			P("SessionOption", "Microsoft.WSMan.Management.SessionOption", -1, Alias("so"), Unmodelled), P("FilePath", "System.String", -1, Alias("Path"), Unmodelled),
			P("UseSSL", "SwitchParameter", -1, Alias("ssl"), Unmodelled), P("Port", "System.Int32", -1, Unmodelled)}
	}
	return []*Cmdlet{
		{Name: "Get-WSManInstance", Class: "Microsoft.WSMan.Management.GetWSManInstanceCommand",
			Source: wsmanDocs + "get-wsmaninstance",
			Behaviour: "-ResourceURI winrm/config/Listener -Enumerate: the listeners (Address, Transport, Port, Hostname, CertificateThumbprint) of the disk; " +
				"any other resource or a -SelectorSet is refused",
			Params: append([]*Param{uri(), P("Enumerate", "SwitchParameter", -1), P("SelectorSet", "System.Collections.Hashtable", 1, Unmodelled),
				P("Dialect", "System.Uri", -1, Unmodelled), P("Filter", "System.String", -1, Unmodelled), P("Fragment", "System.String", -1, Unmodelled)}, unmodelled()...),
			Run: func(c *Call) error {
				if !strings.EqualFold(strings.Trim(c.Str("ResourceURI"), "/"), listenerURI) || !c.Switch("Enumerate") {
					return c.Unmodelled("Get-WSManInstance other than -ResourceURI " + listenerURI + " -Enumerate")
				}
				h := ps(c).h
				in, _, err := readInstallation(h.cfg.Dir)
				if err != nil {
					return err
				}
				if in.WinRMHTTP || h.cfg.Ports.WinRM != PortDisabled {
					c.Write(listenerObject("HTTP", "5985", "", ""))
				}
				if l := in.WinRMHTTPS; l != nil {
					thumb := l.CertificateThumbprint
					if thumb == "" {
						if b, _ := pem.Decode(l.CertPEM); b != nil {
							thumb = thumbprint(b.Bytes)
						}
					}
					c.Write(listenerObject("HTTPS", "5986", l.Hostname, thumb))
				}
				return nil
			}},
		{Name: "New-WSManInstance", Class: "Microsoft.WSMan.Management.NewWSManInstanceCommand",
			Source: wsmanDocs + "new-wsmaninstance",
			Behaviour: "creates the HTTPS listener (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'} -ValueSet @{Hostname=...; " +
				"CertificateThumbprint=...}) bound to that certificate of Cert:\\LocalMachine\\My, serving at once on 5986 where the firewall admits it; " +
				"a certificate not in the store, a Hostname other than its CN and an existing listener are refused, as is any other resource, selector or setting",
			Params: append([]*Param{uri(), P("SelectorSet", "System.Collections.Hashtable", 1, Mandatory), P("ValueSet", "System.Collections.Hashtable", -1),
				P("OptionSet", "System.Collections.Hashtable", -1, Alias("os"), Unmodelled), P("ApplicationName", "System.String", -1, Unmodelled)}, unmodelled()...),
			Run: func(c *Call) error {
				transport, err := listenerSelector(c)
				if err != nil {
					return err
				}
				hostname, thumb, err := listenerValues(c)
				if err != nil {
					return err
				}
				h := ps(c).h
				in, _, err := readInstallation(h.cfg.Dir)
				if err != nil {
					return err
				}
				if transport == "HTTP" && (in.WinRMHTTP || h.cfg.Ports.WinRM != PortDisabled) || transport == "HTTPS" && in.WinRMHTTPS != nil {
					return wsmanFault(c, "The WS-Management service cannot create the resource because it already exists. ")
				}
				if transport != "HTTPS" {
					return c.Unmodelled("a new " + transport + " listener (only HTTPS)")
				}
				if hostname, err = h.checkListenerCert(c, hostname, thumb); err != nil {
					return err
				}
				in.WinRMHTTP = in.WinRMHTTP || h.cfg.Ports.WinRM != PortDisabled
				in.WinRMHTTPS = &HTTPSListener{Hostname: hostname, CertificateThumbprint: strings.ToUpper(thumb)}
				if err := h.saveInstallation(in); err != nil {
					return err
				}
				if err := h.bindStoreCert(thumb); err != nil {
					return err
				}
				if err := h.openHTTPS(); err != nil {
					return wsmanFault(c, err.Error())
				}
				o := NewObject("System.Xml.XmlElement#http://schemas.xmlsoap.org/ws/2004/09/transfer#ResourceCreated")
				o.Str = "ResourceCreated"
				c.Write(o.Set("Address", "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous"))
				return nil
			}},
		{Name: "Remove-WSManInstance", Class: "Microsoft.WSMan.Management.RemoveWSManInstanceCommand",
			Source: wsmanDocs + "remove-wsmaninstance",
			Behaviour: "deletes the HTTP listener (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTP'}): the disk forgets it and port 5985 " +
				"closes at once (HTTP.sys binds a port only while a URL on it is registered); a missing listener is the WS-Management fault " +
				"of a resource not found; the HTTPS listener, any other resource or selector is refused",
			Params: append([]*Param{uri(), P("SelectorSet", "System.Collections.Hashtable", 1, Mandatory),
				P("OptionSet", "System.Collections.Hashtable", -1, Alias("os"), Unmodelled), P("ApplicationName", "System.String", -1, Unmodelled),
				P("CertificateThumbprint", "System.String", -1, Unmodelled)}, unmodelled()...),
			Run: func(c *Call) error {
				transport, err := listenerSelector(c)
				if err != nil {
					return err
				}
				if transport != "HTTP" {
					return c.Unmodelled("Remove-WSManInstance of the " + transport + " listener (only HTTP)")
				}
				h := ps(c).h
				in, _, err := readInstallation(h.cfg.Dir)
				if err != nil {
					return err
				}
				if !in.WinRMHTTP && h.cfg.Ports.WinRM == PortDisabled {
					return wsmanFault(c, "The service cannot find the resource identified by the resource URI and selectors. ")
				}
				return h.removeHTTPListener()
			}},
		{Name: "Set-WSManInstance", Class: "Microsoft.WSMan.Management.SetWSManInstanceCommand",
			Source: wsmanDocs + "set-wsmaninstance",
			Behaviour: "changes the HTTPS listener's Hostname and CertificateThumbprint (-ResourceURI winrm/config/Listener -SelectorSet @{Address='*'; Transport='HTTPS'}); " +
				"the next connection gets the new certificate. A missing listener, a certificate not in the store and a Hostname other than its CN are refused",
			Params: append([]*Param{uri(), P("SelectorSet", "System.Collections.Hashtable", 1), P("ValueSet", "System.Collections.Hashtable", -1),
				P("OptionSet", "System.Collections.Hashtable", -1, Alias("os"), Unmodelled), P("Dialect", "System.Uri", -1, Unmodelled),
				P("Fragment", "System.String", -1, Unmodelled), P("ApplicationName", "System.String", -1, Unmodelled)}, unmodelled()...),
			Run: func(c *Call) error {
				transport, err := listenerSelector(c)
				if err != nil {
					return err
				}
				if transport != "HTTPS" {
					return c.Unmodelled("Set-WSManInstance of the " + transport + " listener")
				}
				hostname, thumb, err := listenerValues(c)
				if err != nil {
					return err
				}
				h := ps(c).h
				in, _, err := readInstallation(h.cfg.Dir)
				if err != nil {
					return err
				}
				if in.WinRMHTTPS == nil {
					return wsmanFault(c, "The service cannot find the resource identified by the resource URI and selectors. ")
				}
				if thumb == "" {
					thumb = in.WinRMHTTPS.CertificateThumbprint
				}
				if thumb == "" {
					return c.Unmodelled("Set-WSManInstance of a listener whose certificate came with the disk, without a new CertificateThumbprint")
				}
				if hostname == "" {
					hostname = in.WinRMHTTPS.Hostname
				}
				if hostname, err = h.checkListenerCert(c, hostname, thumb); err != nil {
					return err
				}
				in.WinRMHTTPS = &HTTPSListener{Hostname: hostname, CertificateThumbprint: strings.ToUpper(thumb)}
				if err := h.saveInstallation(in); err != nil {
					return err
				}
				if err := h.bindStoreCert(thumb); err != nil {
					return err
				}
				c.Write(listenerObject("HTTPS", "5986", hostname, in.WinRMHTTPS.CertificateThumbprint))
				return nil
			}},
	}
}

// removeHTTPListener is Remove-WSManInstance of the HTTP listener: the disk
// forgets it (a reboot brings it not back) and its port closes at once.
// WinRM serves its listeners through HTTP.sys, which binds a port only while
// some URL on it is registered (devblogs.microsoft.com/oldnewthing/20180703-00/?p=99145:
// the System process listens on a port for the URLs reserved there), so
// with the listener's URL gone nothing answers on 5985: a client the
// firewall admits is refused, one it does not admit stays dropped
// (firewall_drop.go). The WinRM service keeps running.
func (h *Host) removeHTTPListener() error {
	in, _, err := readInstallation(h.cfg.Dir)
	if err != nil {
		return err
	}
	in.WinRMHTTP = false
	if err := h.saveInstallation(in); err != nil {
		return err
	}
	h.mu.Lock()
	p := *h.cfg.Ports
	p.WinRM = PortDisabled
	h.cfg.Ports = &p
	if h.configured.WinRM == 0 {
		// The port chosen at the first bind stays the one the firewall
		// drops from now on (dropLocked).
		h.configured.WinRM = h.ports.WinRM
	}
	h.ports.WinRM = 0
	srv := h.httpServer
	h.httpServer = nil
	h.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	return nil
}

// openHTTPS starts serving the HTTPS listener created at run time, when
// the host is up, the firewall admits the clients to 5986 and it is not
// served yet (New-WSManInstance, and New-NetFirewallRule after it). The
// port is the one the host was configured with for HTTPS (the sandbox's
// 5986 or 15986), fixed from then on.
func (h *Host) openHTTPS() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.certMu.Lock()
	bound := h.httpsCert != nil
	h.certMu.Unlock()
	if !h.up || h.httpsServing || h.httpsPort == PortDisabled || !bound || !h.firewallAdmits("winrm-https") {
		return nil
	}
	port := h.ports.WinRMHTTPS
	if port == 0 {
		port = h.httpsPort
	}
	h.undropLocked("winrm-https") // a rule admits it now: the listener takes the port
	ln, err := listenTCP(net.JoinHostPort(h.cfg.IP, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("the HTTPS listener cannot bind port %d: %w", port, err)
	}
	if !h.scopeLocked("winrm-https", ln) {
		return nil
	}
	h.ports.WinRMHTTPS = ln.Addr().(*net.TCPAddr).Port
	h.serveWSManLocked("winrm-https", ln)
	return nil
}

// Console runs a PowerShell script as the administrator at the guest's
// console: an elevated powershell.exe with no network logon, what a person
// at the VM's console (or vSphere's web console) runs. Tests change a guest
// with it as that person would; it runs the same modelled cmdlets as every
// other script, and refuses what they refuse.
func (h *Host) Console(ctx context.Context, script string) (stdout, stderr string, exitCode int) {
	u := utf16.Encode([]rune(script))
	b := make([]byte, 2*len(u))
	for i, r := range u {
		binary.LittleEndian.PutUint16(b[2*i:], r)
	}
	var out, errOut bytes.Buffer
	code := h.Run(ctx, &Process{Path: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`,
		Args: []string{"-NoProfile", "-NonInteractive", "-EncodedCommand", base64.StdEncoding.EncodeToString(b)}, Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), code
}
