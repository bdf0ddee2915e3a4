package winsim

import (
	"sort"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// hotfixCmdlets: Get-HotFix, the read-back of what the servicing store
// (servicing.go) holds. Get-HotFix reads Win32_QuickFixEngineering and
// writes one object per update, HotFixID its KB; -Id names the KBs to get,
// and a KB not installed is a non-terminating ObjectNotFound error,
// "Cannot find the requested hotfix on the 'localhost' computer. Verify
// the input and run the command again."
// (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-hotfix?view=powershell-5.1).
// A package staged for the next restart (Install Pending) is refused as not
// modelled: whether QFE lists it before the restart is not documented.
func hotfixCmdlets() []*Cmdlet {
	return []*Cmdlet{
		{Name: "Get-HotFix", Class: "Microsoft.PowerShell.Commands.GetHotFixCommand",
			Source: mgmt + "get-hotfix?view=powershell-5.1", Behaviour: "lists the updates of the servicing store (DISM, wusa, the Windows Update Agent installed them) as Win32_QuickFixEngineering objects (HotFixID, Description, Source); -Id: those KBs, a KB not installed a non-terminating ObjectNotFound error; refused while a package waits for a restart",
			Params: []*Param{P("Id", "System.String[]", 0, Alias("HFID")), P("Description", "System.String[]", -1, Unmodelled),
				P("ComputerName", "System.String[]", -1, Alias("CN", "__Server", "IPAddress"), Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled)},
			Run: func(c *Call) error {
				h := ps(c).h
				installed := h.InstalledUpdates()
				var kbs []string
				for kb, st := range installed {
					if st != PackageInstalled {
						return c.Unmodelled("listing updates while " + kb + " waits for a restart (" + st + ")")
					}
					kbs = append(kbs, kb)
				}
				sort.Strings(kbs)
				object := func(kb string) *pwsh.Object {
					o := pwsh.NewObject("System.Management.ManagementObject#root\\cimv2\\Win32_QuickFixEngineering")
					o.Str = h.cfg.ComputerName + " Update " + kb
					return o.Set("Source", h.cfg.ComputerName).Set("Description", "Update").Set("HotFixID", kb)
				}
				if !c.Has("Id") {
					for _, kb := range kbs {
						c.Write(object(kb))
					}
					return nil
				}
				for _, id := range c.Strs("Id") {
					found := false
					for _, kb := range kbs {
						if strings.EqualFold(kb, id) {
							c.Write(object(kb))
							found = true
						}
					}
					if !found {
						if err := c.Error(c.Fail("Cannot find the requested hotfix on the 'localhost' computer. Verify the input and run the command again.",
							"ObjectNotFound", id, "ArgumentException", "GetHotFixNoEntriesFound", "System.ArgumentException")); err != nil {
							return err
						}
					}
				}
				return nil
			}},
	}
}
