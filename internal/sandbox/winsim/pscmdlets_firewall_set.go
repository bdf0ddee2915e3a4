package winsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// firewallSet is Set-NetFirewallRule on rules named by -Name: their remote
// addresses (-RemoteAddress) and whether they are enabled (-Enabled), the
// two a join changes on the image's kubelet rule. Windows applies a changed
// rule at once; the host reads its rules at boot (and the HTTPS listener
// when a rule admits it), so a change to a rule of a port the host serves
// (5985, 5986, 22) is refused as not modelled rather than recorded; 5985
// once its listener is removed (Remove-WSManInstance) serves nothing, and a
// change to its rules applies at once (rescopeClosedHTTPPort).
func firewallSet() *Cmdlet {
	gen := "Microsoft.PowerShell.Cmdletization.GeneratedTypes.NetSecurity."
	return &Cmdlet{Name: "Set-NetFirewallRule", Class: "Set-NetFirewallRule", ShouldProcess: true,
		Source: netsec + "set-netfirewallrule", Behaviour: "changes the -RemoteAddress (as New-NetFirewallRule reads it) and -Enabled of the rules named by -Name in firewall.json; a missing name is CmdletizationQuery_NotFound_Name; a rule covering a port the host serves (5985, 5986, 22) is refused as not modelled, 5985 after Remove-WSManInstance excepted (no rule admitting anyone: its connections are dropped, else refused) (Windows applies the change at once, the host at its next boot); every other parameter is refused",
		Params: []*Param{P("Name", "System.String[]", 0, Alias("ID"), Mandatory), P("RemoteAddress", "System.String[]", -1),
			P("Enabled", gen+"Enabled", -1, Enum("True", "False")),
			P("DisplayName", "System.String[]", -1, Unmodelled), P("NewDisplayName", "System.String", -1, Unmodelled),
			P("Direction", gen+"Direction", -1, Unmodelled), P("Action", gen+"Action", -1, Unmodelled),
			P("Protocol", "System.String", -1, Unmodelled), P("LocalPort", "System.String[]", -1, Unmodelled),
			P("RemotePort", "System.String[]", -1, Unmodelled), P("LocalAddress", "System.String[]", -1, Unmodelled),
			P("Profile", gen+"Profile", -1, Unmodelled), P("Description", "System.String", -1, Unmodelled),
			P("Program", "System.String", -1, Unmodelled), P("PolicyStore", "System.String", -1, Unmodelled),
			P("CimSession", "Microsoft.Management.Infrastructure.CimSession[]", -1, Alias("Session"), Unmodelled),
			P("PassThru", "SwitchParameter", -1, Unmodelled), P("AsJob", "SwitchParameter", -1, Unmodelled)},
		Run: func(c *Call) error {
			h := ps(c).h
			h.fwMu.Lock()
			defer h.fwMu.Unlock()
			addrs := c.Strs("RemoteAddress")
			for _, a := range addrs {
				if why := remoteAddrUnmodelled(a); why != "" {
					return c.Unmodelled(why)
				}
				if strings.EqualFold(a, "Any") && len(addrs) > 1 {
					return c.Unmodelled("-RemoteAddress Any in a list")
				}
			}
			rules := h.firewall()
			httpRule := false
			for _, n := range c.Strs("Name") {
				i := ruleIndex(rules, n)
				if i < 0 {
					return c.Error(c.Fail(fmt.Sprintf("No MSFT_NetFirewallRule objects found with property 'Name' equal to '%s'.  Verify the value of the property and retry.", n),
						"ObjectNotFound", n, "CimJobException", "CmdletizationQuery_NotFound_Name", "Microsoft.PowerShell.Cmdletization.Cim.CimJobException"))
				}
				for name, port := range wellKnownPort {
					if name == "winrm-http" && h.cfg.Ports.WinRM == PortDisabled && ruleHasPort(rules[i].LocalPort, port) {
						httpRule = true // no listener serves it: the rule decides refused or dropped, now
						continue
					}
					if ruleHasPort(rules[i].LocalPort, port) {
						return c.Unmodelled("Set-NetFirewallRule on a rule of port " + port + ", which the host serves (the change would apply only at its next boot)")
					}
				}
				if c.Has("RemoteAddress") {
					rules[i].RemoteAddress = addrs
				}
				if c.Has("Enabled") {
					rules[i].Enabled = c.Str("Enabled")
				}
			}
			b, _ := json.MarshalIndent(rules, "", "  ")
			if err := os.WriteFile(filepath.Join(h.cfg.Dir, "firewall.json"), b, 0o644); err != nil {
				return c.Throw(c.Fail(err.Error(), "WriteError", "firewall.json", "IOException", "FirewallStore", "System.IO.IOException"))
			}
			if httpRule {
				h.rescopeClosedHTTPPort()
			}
			return nil
		}}
}

func ruleIndex(rules []FirewallRule, name string) int {
	for i, r := range rules {
		if strings.EqualFold(r.Name, name) {
			return i
		}
	}
	return -1
}

// rescopeClosedHTTPPort applies the firewall to port 5985 once no listener
// serves it: where no rule admits anyone Windows drops the connection
// attempts (stealth mode, firewall_drop.go), else it refuses them.
func (h *Host) rescopeClosedHTTPPort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up {
		return // read again as the host comes up
	}
	_, dropped := h.dropped["winrm-http"]
	switch admits := h.firewallAdmits("winrm-http"); {
	case !admits && !dropped:
		h.dropLocked("winrm-http", nil)
	case admits && dropped:
		h.undropLocked("winrm-http")
	}
}
