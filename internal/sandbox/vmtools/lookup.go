package vmtools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// ByName returns the running host with a computer name (any case), or nil.
func (h *Hosts) ByName(computerName string) *winsim.Host {
	return h.find(func(st *vmState) bool { return strings.EqualFold(st.computer, computerName) })
}

// ByIP returns the running host with an IP, or nil.
func (h *Hosts) ByIP(ip string) *winsim.Host {
	return h.find(func(st *vmState) bool { return st.ip == ip })
}

// ByVM returns the running host of a VM (managed object id "vm-42"), or nil.
func (h *Hosts) ByVM(id string) *winsim.Host {
	return h.find(func(st *vmState) bool { return st.ref.Value == id })
}

// List returns the running hosts, by computer name.
func (h *Hosts) List() []*winsim.Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*winsim.Host
	for _, st := range h.vms {
		if st.host != nil {
			out = append(out, st.host)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ComputerName() < out[j].ComputerName() })
	return out
}

func (h *Hosts) find(match func(*vmState) bool) *winsim.Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.vms {
		if st.host != nil && match(st) {
			return st.host
		}
	}
	return nil
}

// WaitFor waits until the host with a computer name has booted (its
// listeners open) and returns it. A failed boot ends the wait with its error.
func (h *Hosts) WaitFor(ctx context.Context, computerName string) (*winsim.Host, error) {
	for {
		h.mu.Lock()
		ch := h.changed
		var host *winsim.Host
		var bootErr error
		for _, st := range h.vms {
			if strings.EqualFold(st.computer, computerName) {
				if st.host != nil {
					host = st.host
				} else if st.bootErr != nil {
					bootErr = st.bootErr
				}
			}
		}
		h.mu.Unlock()
		if host != nil {
			return host, host.WaitUp(ctx)
		}
		if bootErr != nil {
			return nil, bootErr
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the simulated host %s: %w", computerName, ctx.Err())
		}
	}
}

// WaitStopped waits until no host with a computer name runs.
func (h *Hosts) WaitStopped(ctx context.Context, computerName string) error {
	for {
		h.mu.Lock()
		ch := h.changed
		running := false
		for _, st := range h.vms {
			if st.host != nil && strings.EqualFold(st.computer, computerName) {
				running = true
			}
		}
		h.mu.Unlock()
		if !running {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the simulated host %s to stop: %w", computerName, ctx.Err())
		}
	}
}

// BootError is the error of the last failed boot of a computer name, or nil.
func (h *Hosts) BootError(computerName string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.vms {
		if strings.EqualFold(st.computer, computerName) && st.bootErr != nil {
			return st.bootErr
		}
	}
	return nil
}

// notify wakes WaitFor callers.
func (h *Hosts) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}
