package vmtools

import (
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// SetDefaultFaults sets the faults of hosts that boot from now on and have
// no faults of their own (SetFaults).
func (h *Hosts) SetDefaultFaults(f winsim.Faults) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.defaultFaults = f
}

// SetFaults sets the faults of the host with a computer name: now, if it
// runs, and at every boot from now on (register them before the VM powers
// on to fail its first boot's scripts). ClearFaults undoes it.
func (h *Hosts) SetFaults(computerName string, f winsim.Faults) {
	h.mu.Lock()
	h.faults[strings.ToUpper(computerName)] = f
	h.mu.Unlock()
	if host := h.ByName(computerName); host != nil {
		host.SetFaults(f)
	}
}

// ClearFaults removes a computer name's own faults (the defaults apply again
// at its next boot; a running host has no faults from now on).
func (h *Hosts) ClearFaults(computerName string) {
	h.mu.Lock()
	delete(h.faults, strings.ToUpper(computerName))
	h.mu.Unlock()
	if host := h.ByName(computerName); host != nil {
		host.SetFaults(winsim.Faults{})
	}
}

func (h *Hosts) faultsFor(computerName string) winsim.Faults {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.faults[strings.ToUpper(computerName)]; ok {
		return f
	}
	return h.defaultFaults
}
