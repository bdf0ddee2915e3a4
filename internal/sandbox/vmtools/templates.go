package vmtools

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// templatesDir holds the base templates' disks, under Hosts.Dir.
const templatesDir = ".templates"

// installTemplates gives every base template its disk, as an administrator
// left it before converting the VM to a template: a stock Windows Server
// with VMware Tools (winsim.StockInstallation: the stock services, VMTools
// among them, the WinRM HTTP listener and its firewall rules), or, for
// the prepared template, an HTTPS listener with ONE certificate issued for
// the template's own computer name by the sandbox's CA (the user's CA) and
// OpenSSH Server with its host key. A clone copies the disk (prepareDisk),
// so every clone of the prepared template serves that one certificate,
// with its one private key, and that one SSH host key: the sandbox issues
// nothing to a guest.
func (h *Hosts) installTemplates() error {
	for _, t := range vcsim.Templates {
		var vm *simulator.VirtualMachine
		for _, e := range h.reg.All("VirtualMachine") {
			if v, ok := e.(*simulator.VirtualMachine); ok && v.Name == t.Name {
				vm = v
			}
		}
		if vm == nil {
			return fmt.Errorf("guests: base template %s not found", t.Name)
		}
		computer := computerName(t.Name)
		dir := filepath.Join(h.Dir, templatesDir, t.Name)
		in := winsim.StockInstallation()
		if t.Prepared {
			cert, key, err := h.opts.CA.IssueServing(computer, strings.ToLower(computer))
			if err != nil {
				return fmt.Errorf("guests: the WinRM certificate of template %s: %w", t.Name, err)
			}
			in.WinRMHTTPS = &winsim.HTTPSListener{Hostname: computer, CertPEM: cert, KeyPEM: key}
			in.OpenSSHServer = true
		}
		if err := winsim.Install(dir, in); err != nil {
			return fmt.Errorf("guests: the disk of template %s: %w", t.Name, err)
		}
		h.mu.Lock()
		h.vms[vm.Self] = &vmState{ref: vm.Self, computer: computer, dir: dir, booted: true}
		h.mu.Unlock()
		h.logf("guests: template %s: %s", t.Name, describe(in))
	}
	return nil
}

func describe(in winsim.Installation) string {
	parts := []string{"stock services", "WinRM HTTP listener"}
	if in.VMwareTools {
		parts = append(parts, "VMware Tools (VMTools)")
	}
	if l := in.WinRMHTTPS; l != nil {
		parts = append(parts, "WinRM HTTPS listener (certificate for "+l.Hostname+")")
	}
	if in.OpenSSHServer {
		parts = append(parts, "OpenSSH Server")
	}
	return strings.Join(parts, ", ")
}
