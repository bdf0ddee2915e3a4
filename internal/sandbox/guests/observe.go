package guests

import (
	"slices"

	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

// Event is something a guest did: a script finished (Script set), or its
// host started serving (Up) or went down (Down), as VMware Tools reports to
// vSphere. Tests act on it at the moment it happens rather than polling.
type Event struct {
	ComputerName string
	Script       *winsim.ScriptRecord
	Up, Down     bool
}

// OnEvent adds a hook run for every guest's events; the returned func
// removes it. A hook runs on the goroutine of the script or state change
// and must not block.
func (h *Hosts) OnEvent(hook func(Event)) (remove func()) {
	h.hooksMu.Lock()
	defer h.hooksMu.Unlock()
	h.hooks = append(h.hooks, hook)
	i := len(h.hooks) - 1
	return func() {
		h.hooksMu.Lock()
		defer h.hooksMu.Unlock()
		h.hooks[i] = nil // running events hold copies of the list: indexes stay valid
	}
}

func (h *Hosts) emit(ev Event) {
	h.hooksMu.Lock()
	hooks := slices.Clone(h.hooks)
	h.hooksMu.Unlock()
	for _, hook := range hooks {
		if hook != nil {
			hook(ev)
		}
	}
}
