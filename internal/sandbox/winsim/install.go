package winsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenersFile is the disk's record of what serves remote connections:
// the WinRM listeners (winrm enumerate winrm/config/listener, kept in the
// registry on Windows) with the HTTPS listener's certificate and key (the
// LocalMachine\My store), and whether the OpenSSH Server optional feature
// is installed. A disk without it is served as HostConfig says (Ports,
// TLSCertPEM), as winsim's own tests configure their hosts.
const listenersFile = "listeners.json"

// Installation is what a Windows Server installation's disk carries that
// decides how it can be reached. Install writes it; Start reads it, and a
// clone of the disk carries it, certificate and keys included.
type Installation struct {
	// WinRMHTTP is the HTTP listener on 5985 that Windows Server creates
	// at setup (PowerShell remoting is on by default on Windows Server since
	// 2012: learn.microsoft.com/powershell/module/microsoft.powershell.core/enable-psremoting).
	WinRMHTTP bool
	// WinRMHTTPS is an HTTPS listener on 5986 someone created (winrm create
	// winrm/config/Listener?Address=*+Transport=HTTPS @{Hostname=...;
	// CertificateThumbprint=...}); Windows has none out of the box.
	WinRMHTTPS *HTTPSListener `json:",omitempty"`
	// OpenSSHServer is the OpenSSH Server optional feature, installed
	// (Add-WindowsCapability -Online -Name OpenSSH.Server~~~~0.0.1.0) and
	// sshd set to start automatically. Not installed on a stock Windows
	// Server 2019 or 2022 (learn.microsoft.com/windows-server/administration/openssh/openssh_install_firstuse).
	OpenSSHServer bool
	// VMwareTools is VMware Tools installed (the VMTools service, started
	// with the guest): what a vSphere template carries, and what guest
	// operations need.
	VMwareTools bool
}

// HTTPSListener is an HTTPS listener and its certificate, as the disk holds
// them: CertificateThumbprint names a certificate of Cert:\LocalMachine\My
// (certstore.go), as a listener created with New-WSManInstance does;
// without it (a disk Install wrote), CertPEM and KeyPEM are the certificate.
type HTTPSListener struct {
	Hostname              string
	CertificateThumbprint string `json:",omitempty"`
	CertPEM, KeyPEM       []byte `json:",omitempty"`
}

// StockInstallation is a Windows Server 2019, 2022 or 2025 as setup
// leaves it, with VMware Tools installed: the WinRM HTTP listener, no
// HTTPS listener, no OpenSSH Server, the stock services
// (stock_services.go).
func StockInstallation() Installation { return Installation{WinRMHTTP: true, VMwareTools: true} }

// Install writes an installation onto a new disk (a HostConfig.Dir): the
// stock services (with VMware Tools when in.VMwareTools), the
// listeners, the firewall's inbound rules (StockFirewallRules plus those
// of what the installation adds) and, with OpenSSH Server, its host key,
// which every clone of the disk then shares.
func Install(dir string, in Installation) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, listenersFile), b, 0o600); err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	rules := StockFirewallRules()
	if in.WinRMHTTPS != nil {
		// What the administrator adds with the listener: Microsoft's own
		// instructions open 5986 on every profile
		// (learn.microsoft.com/troubleshoot/windows-client/system-management-components/configure-winrm-for-https).
		rules = append(rules, FirewallRule{Name: "WinRM-HTTPS-In-TCP", DisplayName: "Windows Remote Management (HTTPS-In)",
			Direction: "Inbound", Action: "Allow", Protocol: "TCP", LocalPort: []string{"5986"}, Enabled: "True", Profile: "Any", RemoteAddress: []string{"Any"}})
	}
	if in.OpenSSHServer {
		// The rule the OpenSSH Server feature's setup creates.
		rules = append(rules, FirewallRule{Name: "OpenSSH-Server-In-TCP", DisplayName: "OpenSSH SSH Server (sshd)",
			Direction: "Inbound", Action: "Allow", Protocol: "TCP", LocalPort: []string{"22"}, Enabled: "True", Profile: "Any", RemoteAddress: []string{"Any"}})
	}
	if b, err = json.MarshalIndent(rules, "", "  "); err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "firewall.json"), b, 0o644); err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	v, err := newVFS(filepath.Join(dir, "fs"), map[string]string{"SystemDrive": "C:"})
	if err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	reg, err := loadRegistry(filepath.Join(dir, "registry.json"))
	if err != nil {
		return fmt.Errorf("winsim: %w", err)
	}
	if err := installStockServices(reg, v, in.VMwareTools); err != nil {
		return fmt.Errorf("winsim: the stock services: %w", err)
	}
	if in.OpenSSHServer {
		h := &Host{fs: v}
		if err := v.WriteFile(SSHDConfigFile, []byte(stockSSHDConfig), false); err != nil {
			return fmt.Errorf("winsim: sshd_config: %w", err)
		}
		if _, err := h.loadSSHHostKey(nil); err != nil {
			return fmt.Errorf("winsim: the SSH host key: %w", err)
		}
	}
	return nil
}

// readInstallation reads the disk's listeners; ok is false for a disk
// without the record.
func readInstallation(dir string) (in Installation, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, listenersFile))
	if errors.Is(err, fs.ErrNotExist) {
		return in, false, nil
	}
	if err != nil {
		return in, false, err
	}
	return in, true, json.Unmarshal(b, &in)
}

// applyInstallation turns the listeners the disk records into the
// configuration's: a listener the disk lacks is off, and the HTTPS
// listener serves the disk's certificate.
func (c *HostConfig) applyInstallation(in Installation) {
	p := *c.Ports
	if !in.WinRMHTTP {
		p.WinRM = PortDisabled
	}
	if in.WinRMHTTPS == nil {
		p.WinRMHTTPS = PortDisabled
	} else if in.WinRMHTTPS.CertificateThumbprint == "" {
		c.TLSCertPEM, c.TLSKeyPEM = in.WinRMHTTPS.CertPEM, in.WinRMHTTPS.KeyPEM
	}
	if !in.OpenSSHServer {
		p.SSH = PortDisabled
	}
	c.Ports = &p
}

// FirewallRule is one rule of the host's firewall (<Dir>/firewall.json), as
// Get-NetFirewallRule and Get-NetFirewallAddressFilter show it.
type FirewallRule struct {
	Name, DisplayName, Direction, Action, Protocol string
	LocalPort                                      []string
	Enabled                                        string
	// Profile is Any, or Domain, Private and Public joined by ", " (the
	// NetSecurity.Profile flags as Get-NetFirewallRule shows them); empty
	// is Any (New-NetFirewallRule's default). A rule applies only while
	// one of its profiles is the active one: "The rule is active on the
	// local computer only when the specified profile is currently active"
	// (learn.microsoft.com/powershell/module/netsecurity/new-netfirewallrule, -Profile).
	Profile string `json:",omitempty"`
	// RemoteAddress is Any (empty too), LocalSubnet or addresses.
	RemoteAddress []string `json:",omitempty"`
	// Description and Group are New-NetFirewallRule's -Description and
	// -Group, read back by Get-NetFirewallRule (Description, Group,
	// DisplayGroup: a group given as a plain string displays as itself).
	Description string `json:",omitempty"`
	Group       string `json:",omitempty"`
}

// StockFirewallRules are the inbound rules for WinRM's HTTP listener on a
// stock Windows Server: "Windows Remote Management (HTTP-In)" for the
// Domain and Private profiles from any address, and for the Public profile
// from the local subnet only. Enable-PSRemoting: "On server versions of
// Windows, Enable-PSRemoting creates firewall rules for private and domain
// networks that allow remote access, and creates a firewall rule for public
// networks that allows remote access only from computers in the same local
// subnet" (learn.microsoft.com/powershell/module/microsoft.powershell.core/enable-psremoting);
// the same holds for winrm quickconfig
// (learn.microsoft.com/windows/win32/winrm/installation-and-configuration-for-windows-remote-management:
// "the WinRM firewall exception for public profiles limits access to remote
// computers within the same local subnet").
func StockFirewallRules() []FirewallRule {
	return []FirewallRule{
		{Name: "WINRM-HTTP-In-TCP", DisplayName: "Windows Remote Management (HTTP-In)", Direction: "Inbound", Action: "Allow",
			Protocol: "TCP", LocalPort: []string{"5985"}, Enabled: "True", Profile: "Domain, Private", RemoteAddress: []string{"Any"}},
		{Name: "WINRM-HTTP-In-TCP-PUBLIC", DisplayName: "Windows Remote Management (HTTP-In)", Direction: "Inbound", Action: "Allow",
			Protocol: "TCP", LocalPort: []string{"5985"}, Enabled: "True", Profile: "Public", RemoteAddress: []string{"LocalSubnet"}},
	}
}

// Firewall is where the host's network and its clients are, for Windows
// Defender Firewall's inbound filtering (HostConfig.Firewall).
type Firewall struct {
	// Profile is the network's category: Public (what Windows gives a
	// network it cannot identify: a workgroup guest's), Private or Domain.
	Profile string
	// ClientsOutsideSubnet says the clients (the test process, the
	// Terraform runner) are not on the guest's subnet, so LocalSubnet
	// rules do not admit them: a CI runner or Terraform Cloud agent.
	ClientsOutsideSubnet bool
	// ClientAddress is the address the guest sees the sandbox's clients
	// (the provider, the test process, the API server: every process
	// that connects from 127.0.0.1) connect from, for rules that name
	// addresses, subnets or ranges (-RemoteAddress); empty: 127.0.0.1
	// itself. A client that binds another source is seen at its own
	// (firewall_scope.go).
	ClientAddress string
}

// wellKnownPort is the Windows port of a listener: the firewall's rules
// name it even where the sandbox listens on another (15985 when 5985
// cannot be bound).
var wellKnownPort = map[string]string{"winrm-http": "5985", "winrm-https": "5986", "ssh": "22"}

// firewallAdmits reports whether an enabled inbound Allow rule admits
// anyone to a listener's port (firewallScope says whom). Windows drops what
// no rule admits: the client's connect times out, and so it does against
// the simulator, whose port then holds a listener that completes no
// connection (firewall_drop.go), or filters the sources a rule does not
// name (firewall_scope.go). Rules are read as the host comes up (boot,
// reboot), and by the HTTPS listener created at run time (openHTTPS).
func (h *Host) firewallAdmits(listener string) bool {
	return !h.firewallScope(listener).none()
}

// ruleHasTCP reports whether a rule's protocol covers TCP, which every
// listener of the host speaks: Any (or none given: New-NetFirewallRule's
// default), TCP, or its IANA number 6. A UDP rule admits no TCP client.
func ruleHasTCP(protocol string) bool {
	return protocol == "" || strings.EqualFold(protocol, "Any") || strings.EqualFold(protocol, "TCP") || protocol == "6"
}

func ruleHasPort(ports []string, port string) bool {
	if len(ports) == 0 {
		return true // no -LocalPort: any
	}
	n, _ := strconv.Atoi(port)
	for _, p := range ports {
		if strings.EqualFold(p, "Any") || p == port {
			return true
		}
		if lo, hi, ok := strings.Cut(p, "-"); ok {
			l, _ := strconv.Atoi(lo)
			u, _ := strconv.Atoi(hi)
			if n >= l && n <= u {
				return true
			}
		}
	}
	return false
}

func ruleHasProfile(profiles, profile string) bool {
	if profiles == "" || strings.EqualFold(profiles, "Any") {
		return true
	}
	for _, p := range strings.Split(profiles, ",") {
		if strings.EqualFold(strings.TrimSpace(p), profile) {
			return true
		}
	}
	return false
}
