package vmtools

import "github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"

// Event is something a guest did: a script finished (Script set), guest
// operations started a program (Program set), or its host started serving
// (Up) or went down (Down), as VMware Tools reports to vSphere, or its
// customization reached a phase (Customization: one of the Phase constants,
// with Up or Down when VMware Tools started or stopped with it). Tests act on
// it at the moment it happens rather than polling.
type Event struct {
	ComputerName string
	Script       *winsim.ScriptRecord
	Program      *winsim.GuestProcess
	Up, Down     bool
	// Tools is set when VMware Tools (the VMTools service) started
	// (true) or stopped (false) in the guest.
	Tools         *bool
	Customization string
}

// OnEvent adds a hook run for every guest's events; the returned func
// removes it. A hook runs on the goroutine of the script or state change
// and must not block.
func (h *Hosts) OnEvent(hook func(Event)) (remove func()) {
	return h.observers.Add(hook)
}

func (h *Hosts) emit(ev Event) {
	for _, hook := range h.observers.All() {
		hook(ev)
	}
}
