package vmtools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// stop takes a VM's host down (power-off, destroy, Close).
func (h *Hosts) stop(st *vmState) {
	h.mu.Lock()
	host := st.host
	st.host = nil
	h.notifyLocked()
	h.mu.Unlock()
	if host != nil {
		_ = host.Stop()
		h.logf("guests: %s (%s) stopped", st.computer, st.ref.Value)
	}
}

// guestNetworkProfile is the network category of every guest: Public, what
// Windows gives a network it cannot identify (no domain), as a workgroup
// clone's first boot has it.
const guestNetworkProfile = "Public"

// boot starts a VM's host. Its boot takes the model's time (customization's
// phases, the boot to VMware Tools), which a power-off or Close cuts short.
func (h *Hosts) boot(st *vmState, ev powerEvent) {
	ctx, cancel := context.WithCancel(h.ctx)
	h.mu.Lock()
	st.bootCancel = cancel
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		st.bootCancel = nil
		h.mu.Unlock()
		cancel()
	}()
	if err := h.bootHost(ctx, st, ev); err != nil {
		if ctx.Err() != nil {
			h.logf("guests: VM %s (%s) powered off or the sandbox closed during its boot", ev.name, ev.ref.Value)
			return
		}
		err = fmt.Errorf("sandbox: booting the simulated Windows host of VM %s (%s): %w", ev.name, ev.ref.Value, err)
		h.logf("guests: %v", err)
		h.mu.Lock()
		st.bootErr = err
		h.notifyLocked()
		h.mu.Unlock()
	}
}

func (h *Hosts) bootHost(ctx context.Context, st *vmState, ev powerEvent) error {
	if st.host != nil {
		return nil // already up (a repeated event)
	}
	h.identify(st, ev)
	if err := h.prepareDisk(st); err != nil {
		return err
	}
	bootDelay, rebootDelay := h.opts.BootDelay, h.opts.RebootDelay
	if m := h.opts.Latency; m.On() {
		// Power-on to VMware Tools running; Restart-Computer's downtime.
		bootDelay, rebootDelay = m.Of(latency.WindowsBoot), m.Of(latency.WindowsRestart)
	}
	if s := st.customize; s != nil {
		st.customize = nil
		serve, err := h.customizeWindows(ctx, st, ev, s)
		if err != nil {
			if ctx.Err() != nil {
				st.customize = s // cut short: the next power-on runs it again
			}
			return fmt.Errorf("applying the guest customization: %w", err)
		}
		if !serve {
			return nil // OOBE waits, or the customization failed: nothing serves
		}
		if h.opts.Latency.On() {
			bootDelay = 0 // OOBE's time ends with VMware Tools running
		}
	}
	customizedName := ev.guestName != ""
	build := ev.build
	if build == "" {
		build = DefaultWindowsBuild
	}
	ports := h.ports
	cfg := winsim.HostConfig{
		ComputerName:  st.computer,
		IP:            st.ip,
		AdminPassword: st.password,
		WindowsBuild:  build,
		BIOSUUID:      ev.uuid,
		NumCPU:        ev.numCPU,
		MemoryMB:      ev.memoryMB,
		Dir:           st.dir,
		Ports:         &ports,
		// The listeners, the HTTPS certificate and the firewall rules are
		// the disk's (the template's, copied): the sandbox issues nothing.
		Firewall:    &winsim.Firewall{Profile: guestNetworkProfile, ClientsOutsideSubnet: h.runnerOutside()},
		BootDelay:   bootDelay,
		RebootDelay: rebootDelay,
		Latency:     h.opts.Latency,
		Faults:      h.faultsFor(st.computer),
		Programs:    h.opts.Programs,
		// Windows waits 30 s for a service to report Running; the sandbox
		// fails a service program that never does (error 1053) sooner, so
		// tests of that failure do not spend the full timeout.
		ServiceStartTimeout: sandboxServiceStartTimeout,
		OnShutdown:          func(*winsim.Host) { h.guestShutdown(st) },
		OnStateChange: func(w *winsim.Host, up bool) {
			// VMware Tools runs once its service has started (OnToolsChange),
			// after the host came up; going down, it stops with the host.
			h.reportGuest(st, up && w.ToolsRunning(), !customizedName)
			h.emit(Event{ComputerName: w.ComputerName(), Up: up, Down: !up})
			if up {
				h.customizationDone(st) // VMware Tools runs in the customization's last boot
			}
		},
		OnToolsChange: func(w *winsim.Host, running bool) {
			h.reportGuest(st, running && w.Up(), !customizedName)
			h.emit(Event{ComputerName: w.ComputerName(), Tools: &running})
		},
		OnScript: func(w *winsim.Host, r winsim.ScriptRecord) { h.emit(Event{ComputerName: w.ComputerName(), Script: &r}) },
		OnGuestProgram: func(w *winsim.Host, p *winsim.GuestProcess) {
			h.emit(Event{ComputerName: w.ComputerName(), Program: p})
		},
	}
	host, err := winsim.Start(context.Background(), cfg)
	for attempt := 0; err != nil && !st.static && errors.Is(err, syscall.EADDRINUSE) && attempt < 16; attempt++ {
		// Another process (a sandbox in another test package) holds the
		// leased address: take the next one.
		h.mu.Lock()
		h.release(st.ref)
		st.ip = h.leaseLocked(st.ref)
		h.mu.Unlock()
		cfg.IP = st.ip
		host, err = winsim.Start(context.Background(), cfg)
	}
	if err != nil {
		return err
	}
	h.mu.Lock()
	st.host, st.bootErr, st.booted = host, nil, true
	h.notifyLocked()
	h.mu.Unlock()
	h.logf("guests: %s booted for VM %s (%s) on %s (build %s)", st.computer, ev.name, ev.ref.Value, st.ip, build)
	return nil
}

// identify settles a VM's computer name, address and password at power-on:
// from its clone request the first time, as before afterwards.
func (h *Hosts) identify(st *vmState, ev powerEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	clone, cloned := h.clones[strings.ToLower(ev.uuid)]
	delete(h.clones, strings.ToLower(ev.uuid))
	if cloned {
		st.source = clone.source
		src := h.vms[clone.source]
		st.password = h.opts.AdminPassword
		if src != nil && src.password != "" {
			st.password = src.password
		}
		st.computer = computerName(ev.name)
		if c := clone.custom; c != nil {
			if s := clone.sysprep; s != nil {
				st.customize = s
				if p := s.GuiUnattended.Password; p != nil && p.PlainText && p.Value != "" {
					st.password = p.Value
				}
				if n, ok := s.UserData.ComputerName.(*types.CustomizationFixedName); ok && n.Name != "" {
					st.computer = n.Name
				}
			}
			if len(c.NicSettingMap) > 0 {
				if ip, ok := c.NicSettingMap[0].Adapter.Ip.(*types.CustomizationFixedIp); ok {
					h.release(st.ref)
					st.ip, st.static = ip.IpAddress, true
				} else if st.static {
					st.ip, st.static = "", false
				}
			}
		}
	}
	if st.computer == "" {
		st.computer = computerName(ev.name)
		if ev.guestName != "" {
			st.computer = ev.guestName
		}
	}
	if st.password == "" {
		st.password = h.opts.AdminPassword
	}
	if st.ip == "" {
		st.ip = h.leaseLocked(st.ref)
	}
}

// invalidNetBIOS matches characters a NetBIOS computer name cannot have.
var invalidNetBIOS = regexp.MustCompile(`[^A-Za-z0-9-]`)

// computerName derives a computer name from a VM name, as Windows setup
// would from a host name: upper case, at most 15 characters.
func computerName(vmName string) string {
	n := strings.ToUpper(invalidNetBIOS.ReplaceAllString(vmName, "-"))
	if len(n) > 15 {
		n = n[:15]
	}
	if n == "" {
		n = "WIN-SANDBOX"
	}
	return n
}
