package vmtools

import (
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
)

// handlerRef names the registry handler.
var handlerRef = types.ManagedObjectReference{Type: "SandboxGuests", Value: "guests"}

// onClone records what a clone request says about the clone's guest, and
// refuses static addresses a simulated host cannot listen on.
func (h *Hosts) onClone(src *simulator.VirtualMachine, req *types.CloneVM_Task) error {
	custom := req.Spec.Customization
	if custom != nil {
		for _, nic := range custom.NicSettingMap {
			if ip, ok := nic.Adapter.Ip.(*types.CustomizationFixedIp); ok {
				if a := net.ParseIP(ip.IpAddress); a == nil || !a.IsLoopback() || a.To4() == nil {
					return fmt.Errorf("sandbox: static IP %q of %s is not in 127.0.0.0/8; the sandbox's simulated Windows hosts listen on loopback addresses only: use one such as 127.0.10.1 (or DHCP)", ip.IpAddress, req.Name)
				}
			}
		}
	}
	sysprep, err := takeCustomization(src, req)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clones[strings.ToLower(req.Spec.Config.Uuid)] = cloneInfo{source: src.Self, name: req.Name, custom: custom, sysprep: sysprep}
	return nil
}

// powerEvent is a VM's state at a power change, read under the simulator's lock.
type powerEvent struct {
	ref       types.ManagedObjectReference
	state     types.VirtualMachinePowerState
	name      string
	uuid      string
	numCPU    int
	memoryMB  int
	build     string
	guestName string // set by the simulator's customization
}

// registryHandler receives the simulator's object changes.
type registryHandler struct{ h *Hosts }

func (r *registryHandler) Reference() types.ManagedObjectReference { return handlerRef }

func (r *registryHandler) PutObject(*simulator.Context, mo.Reference) {}

func (r *registryHandler) UpdateObject(_ *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	vm, ok := obj.(*mo.VirtualMachine)
	if !ok {
		return
	}
	for _, ch := range changes {
		if ch.Name != "runtime.powerState" {
			continue
		}
		state, _ := ch.Val.(types.VirtualMachinePowerState)
		ev := powerEvent{ref: vm.Self, state: state, name: vm.Name}
		if cfg := vm.Config; cfg != nil {
			ev.uuid = cfg.Uuid
			ev.numCPU = int(cfg.Hardware.NumCPU)
			ev.memoryMB = int(cfg.Hardware.MemoryMB)
			for _, o := range cfg.ExtraConfig {
				if ov := o.GetOptionValue(); ov.Key == vcsim.BuildKey {
					ev.build, _ = ov.Value.(string)
				}
			}
		}
		if vm.Guest != nil {
			ev.guestName = vm.Guest.HostName
		}
		r.h.power(ev)
		return
	}
}

func (r *registryHandler) RemoveObject(_ *simulator.Context, ref types.ManagedObjectReference) {
	if ref.Type == "VirtualMachine" {
		r.h.destroyed(ref)
	}
}

// state returns (creating) a VM's state; nil after Close.
func (h *Hosts) state(ref types.ManagedObjectReference) *vmState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	st := h.vms[ref]
	if st == nil {
		st = &vmState{ref: ref}
		h.vms[ref] = st
	}
	return st
}

func (h *Hosts) enqueue(st *vmState, f func()) {
	h.wg.Add(1)
	st.run.do(func() {
		defer h.wg.Done()
		f()
	})
}

func (h *Hosts) power(ev powerEvent) {
	st := h.state(ev.ref)
	if st == nil {
		return
	}
	switch ev.state {
	case types.VirtualMachinePowerStatePoweredOn:
		h.enqueue(st, func() { h.boot(st, ev) })
	default:
		h.cutBoot(st)
		h.enqueue(st, func() { h.stop(st) })
	}
}

// cutBoot ends a boot under way (its modelled phases) at once: the power-off
// or destroy queued behind it must not wait for a customization to end.
func (h *Hosts) cutBoot(st *vmState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st.bootCancel != nil {
		st.bootCancel()
	}
}

func (h *Hosts) destroyed(ref types.ManagedObjectReference) {
	h.mu.Lock()
	st := h.vms[ref]
	h.mu.Unlock()
	if st == nil {
		return
	}
	h.cutBoot(st)
	h.enqueue(st, func() {
		h.stop(st)
		h.mu.Lock()
		delete(h.vms, ref)
		for ip, owner := range h.leases {
			if owner == ref {
				delete(h.leases, ip)
			}
		}
		h.mu.Unlock()
		if st.dir != "" {
			if err := retire(h.Dir, st.dir); err != nil {
				h.logf("guests: %v", err)
			}
		}
	})
}

// serial runs functions one at a time, in order, on a goroutine that exists
// only while there is work.
type serial struct {
	mu      sync.Mutex
	queue   []func()
	running bool
}

func (s *serial) do(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, f)
	if !s.running {
		s.running = true
		go s.drain()
	}
}

func (s *serial) drain() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		f := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		f()
	}
}
