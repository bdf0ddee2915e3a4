// Package guests boots a simulated Windows host (internal/winsim) for every
// VM that powers on in the sandbox's vCenter simulator, and stops it when the
// VM powers off or is destroyed.
//
// A host takes, from its VM:
//   - the computer name and static IPv4 address of the clone's sysprep
//     customization (captured from the CloneVM_Task request; the simulator
//     itself reports them in guest.hostName and guest.ipAddress at power-on).
//     Without a customization the computer name is the VM name (upper case,
//     at most 15 characters);
//   - for DHCP (or no customization) an address leased from 127.1.0.0 to
//     127.16.255.255 (from a random start, the next free one if another
//     process holds it),
//     kept for the VM's lifetime and reported to vSphere as guest.ipAddress
//     and guest.net once the host listens: every VM has its own 127.x.y.z;
//   - the administrator password of the customization's plain-text
//     GuiUnattended password, else the clone source's, else the templates'
//     (SANDBOX_ADMIN_PASSWORD);
//   - the BIOS UUID (config.uuid), CPUs and memory, and the Windows build of
//     its template (extraConfig guestinfo.windows.build, which clones carry);
//   - its disk: <Dir>/<computer name>/ (fs/, services.json, scripts.log). A
//     clone starts with a copy of its source's disk (fs/, services.json, features.json),
//     so what a golden image build installed is on every node cloned from
//     it — its SSH host keys too (winsim.SSHHostKeyFile), unless the image
//     removed them: then the clone's sshd creates its own at boot. A
//     destroyed VM's directory moves to <Dir>/.destroyed/.
//
// The guest shutting itself down (sysprep /shutdown, Stop-Computer) powers
// the VM off in vSphere; Restart-Computer keeps it on. Static addresses must
// lie in 127.0.0.0/8 (the hosts listen on loopback): a clone customized with
// another address is refused with a message saying so.
//
// Power events come from the simulator's registry (an in-process
// RegisterObject handler: no polling); host starts and stops run on one
// goroutine per VM, in event order, never inside a simulator lock.
package guests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

// sandboxServiceStartTimeout replaces Windows' 30 s service start timeout
// (winsim.HostConfig.ServiceStartTimeout) in the sandbox.
const sandboxServiceStartTimeout = 2 * time.Second

// DefaultWindowsBuild is reported by VMs whose template records no build.
const DefaultWindowsBuild = "10.0.20348"

// Options configure the hosts.
type Options struct {
	VSphere *vcsim.Server
	// CA signs every host's WinRM HTTPS certificate (for its IP and name).
	CA *pki.CA
	// Dir holds one directory per host ($SANDBOX_DIR/hosts).
	Dir string
	// AdminPassword is the base templates' Administrator password.
	AdminPassword string
	// Ports: nil means the Windows ports 5985, 5986 and 22, each replaced by
	// 15985, 15986 or 2222 when it cannot be bound here (no privilege, or a
	// local service holds it on every address). Hosts.Ports says which.
	Ports *winsim.Ports
	// BootDelay keeps a host's listeners closed this long after power-on;
	// RebootDelay is Restart-Computer's downtime (winsim's default when 0).
	BootDelay, RebootDelay time.Duration
	// Programs are the native programs every host runs besides winsim's
	// own (the simulated kubelet: kubeletsim.Programs).
	Programs map[string]winsim.Program
	Logf     func(format string, args ...any)
}

// Hosts are the simulated Windows hosts of the sandbox's VMs.
type Hosts struct {
	// Dir is the hosts' root directory.
	Dir   string
	opts  Options
	logf  func(string, ...any)
	reg   *simulator.Registry
	vc    *vim25.Client // in-process client (guest-initiated power-off)
	ports winsim.Ports

	mu            sync.Mutex
	vms           map[types.ManagedObjectReference]*vmState
	clones        map[string]cloneInfo // by the clone's BIOS UUID
	leases        map[string]types.ManagedObjectReference
	nextLease     uint32
	defaultFaults winsim.Faults
	faults        map[string]winsim.Faults // by upper-case computer name
	changed       chan struct{}            // closed and replaced on every host change
	closed        bool
	wg            sync.WaitGroup
}

// cloneInfo is what a CloneVM_Task request said about the clone.
type cloneInfo struct {
	source types.ManagedObjectReference
	name   string // the VM name
	custom *types.CustomizationSpec
}

// vmState is one VM's guest: identity, lease, disk and running host.
type vmState struct {
	ref      types.ManagedObjectReference
	computer string
	ip       string
	static   bool
	password string
	dir      string
	source   types.ManagedObjectReference // clone source, for the first boot's disk copy
	booted   bool                         // the disk exists
	host     *winsim.Host
	bootErr  error
	run      serial
}

// handlerRef names the registry handler.
var handlerRef = types.ManagedObjectReference{Type: "SandboxGuests", Value: "guests"}

// Start hooks the hosts into the simulator. Close stops every host.
func Start(ctx context.Context, opts Options) (*Hosts, error) {
	if opts.VSphere == nil || opts.CA == nil || opts.Dir == "" {
		return nil, errors.New("guests: VSphere, CA and Dir are required")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("guests: %w", err)
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	vc, err := vim25.NewClient(ctx, opts.VSphere.Model.Service)
	if err != nil {
		return nil, fmt.Errorf("guests: in-process vSphere client: %w", err)
	}
	h := &Hosts{
		Dir: opts.Dir, opts: opts, logf: logf, reg: opts.VSphere.Model.Map(), vc: vc,
		vms: map[types.ManagedObjectReference]*vmState{}, clones: map[string]cloneInfo{},
		leases: map[string]types.ManagedObjectReference{}, faults: map[string]winsim.Faults{},
		changed: make(chan struct{}),
		// Leases start at a random point of 127.1.0.0-127.16.255.255, so
		// sandboxes of concurrently running test packages rarely meet.
		nextLease: uint32(rand.IntN(1 << 20)),
	}
	if opts.Ports != nil {
		h.ports = *opts.Ports
	} else {
		h.ports = probePorts()
	}
	opts.VSphere.OnClone(h.onClone)
	h.reg.AddHandler(&registryHandler{h})
	return h, nil
}

// Ports are the ports every host listens on.
func (h *Hosts) Ports() winsim.Ports { return h.ports }

// Close stops every host and unhooks from the simulator.
func (h *Hosts) Close() error {
	h.reg.RemoveHandler(&registryHandler{h})
	h.mu.Lock()
	h.closed = true
	states := make([]*vmState, 0, len(h.vms))
	for _, st := range h.vms {
		states = append(states, st)
	}
	h.mu.Unlock()
	for _, st := range states {
		h.enqueue(st, func() { h.stop(st) })
	}
	h.wg.Wait()
	return nil
}

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

// notify wakes WaitFor callers.
func (h *Hosts) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

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
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clones[strings.ToLower(req.Spec.Config.Uuid)] = cloneInfo{source: src.Self, name: req.Name, custom: custom}
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
		h.enqueue(st, func() { h.stop(st) })
	}
}

func (h *Hosts) destroyed(ref types.ManagedObjectReference) {
	h.mu.Lock()
	st := h.vms[ref]
	h.mu.Unlock()
	if st == nil {
		return
	}
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

// boot starts a VM's host.
func (h *Hosts) boot(st *vmState, ev powerEvent) {
	if err := h.bootHost(st, ev); err != nil {
		err = fmt.Errorf("sandbox: booting the simulated Windows host of VM %s (%s): %w", ev.name, ev.ref.Value, err)
		h.logf("guests: %v", err)
		h.mu.Lock()
		st.bootErr = err
		h.notifyLocked()
		h.mu.Unlock()
	}
}

func (h *Hosts) bootHost(st *vmState, ev powerEvent) error {
	if st.host != nil {
		return nil // already up (a repeated event)
	}
	h.identify(st, ev)
	if err := h.prepareDisk(st); err != nil {
		return err
	}
	certPEM, tlsKeyPEM, err := h.opts.CA.IssueServing(st.ip, st.computer, strings.ToLower(st.computer))
	if err != nil {
		return fmt.Errorf("issuing the WinRM certificate: %w", err)
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
		TLSCertPEM:    certPEM,
		TLSKeyPEM:     tlsKeyPEM,
		Ports:         &ports,
		BootDelay:     h.opts.BootDelay,
		RebootDelay:   h.opts.RebootDelay,
		Faults:        h.faultsFor(st.computer),
		Programs:      h.opts.Programs,
		// Windows waits 30 s for a service to report Running; the sandbox
		// fails a service program that never does (error 1053) sooner, so
		// tests of that failure do not spend the full timeout.
		ServiceStartTimeout: sandboxServiceStartTimeout,
		OnShutdown:          func(*winsim.Host) { h.guestShutdown(st) },
		OnStateChange:       func(_ *winsim.Host, up bool) { h.reportGuest(st, up, !customizedName) },
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
		if cfg.TLSCertPEM, cfg.TLSKeyPEM, err = h.opts.CA.IssueServing(st.ip, st.computer, strings.ToLower(st.computer)); err != nil {
			return fmt.Errorf("issuing the WinRM certificate: %w", err)
		}
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
			if s, ok := c.Identity.(*types.CustomizationSysprep); ok {
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

// leaseLocked gives a VM an address of 127.1.0.0-127.16.255.255 that no other
// VM holds.
func (h *Hosts) leaseLocked(ref types.ManagedObjectReference) string {
	for {
		h.nextLease = (h.nextLease + 1) % (1 << 20)
		n := h.nextLease
		ip := net.IPv4(127, byte(1+n/65536), byte(n/256), byte(n)).String()
		if byte(n) == 0 || byte(n) == 255 {
			continue
		}
		if _, taken := h.leases[ip]; taken || h.staticInUseLocked(ip) {
			continue
		}
		h.leases[ip] = ref
		return ip
	}
}

func (h *Hosts) staticInUseLocked(ip string) bool {
	for _, st := range h.vms {
		if st.static && st.ip == ip {
			return true
		}
	}
	return false
}

func (h *Hosts) release(ref types.ManagedObjectReference) {
	for ip, owner := range h.leases {
		if owner == ref {
			delete(h.leases, ip)
		}
	}
}

// reportGuest tells vSphere what VMware Tools in the guest would: running
// or not (a reboot is Tools stopping and running again), and once the guest
// is up its address (guest.ipAddress, guest.net; static addresses the
// simulator reported at customization already) and, for a VM that was not
// customized, its host name.
func (h *Hosts) reportGuest(st *vmState, up, withName bool) {
	vm, ok := h.reg.Get(st.ref).(*simulator.VirtualMachine)
	if !ok {
		return
	}
	tools, status, guestState := types.VirtualMachineToolsRunningStatusGuestToolsNotRunning, types.VirtualMachineToolsStatusToolsNotRunning, "notRunning"
	if up {
		tools, status, guestState = types.VirtualMachineToolsRunningStatusGuestToolsRunning, types.VirtualMachineToolsStatusToolsOk, "running"
	}
	ctx := &simulator.Context{Context: context.Background(), Map: h.reg}
	ctx.WithLock(vm, func() {
		if vm.Guest == nil || (up && vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn) {
			return
		}
		changes := []types.PropertyChange{
			{Name: "guest.toolsRunningStatus", Val: string(tools)},
			{Name: "guest.toolsStatus", Val: status},
			{Name: "guest.guestState", Val: guestState},
			{Name: "summary.guest.toolsRunningStatus", Val: string(tools)},
			{Name: "summary.guest.toolsStatus", Val: status},
		}
		if up && !st.static && vm.Guest.IpAddress != st.ip {
			nets := append([]types.GuestNicInfo(nil), vm.Guest.Net...)
			if len(nets) > 0 {
				nets[0].IpAddress = []string{st.ip}
				nets[0].IpConfig = &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{{IpAddress: st.ip, PrefixLength: 8, State: "preferred"}}}
			}
			changes = append(changes,
				types.PropertyChange{Name: "guest.ipAddress", Val: st.ip},
				types.PropertyChange{Name: "summary.guest.ipAddress", Val: st.ip},
				types.PropertyChange{Name: "guest.net", Val: nets})
		}
		if up && withName && vm.Guest.HostName != st.computer {
			changes = append(changes,
				types.PropertyChange{Name: "guest.hostName", Val: st.computer},
				types.PropertyChange{Name: "summary.guest.hostName", Val: st.computer})
		}
		ctx.Update(vm, changes)
	})
}

// guestShutdown powers the VM off after its guest shut itself down.
func (h *Hosts) guestShutdown(st *vmState) {
	h.logf("guests: %s shut itself down; powering VM %s off", st.computer, st.ref.Value)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	task, err := object.NewVirtualMachine(h.vc, st.ref).PowerOff(ctx)
	if err == nil {
		_, err = task.WaitForResult(ctx)
	}
	if err != nil {
		h.logf("guests: powering VM %s off after its guest shut down: %v", st.ref.Value, err)
	}
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

// probePorts picks the Windows ports, or alternates where those cannot be bound.
func probePorts() winsim.Ports {
	try := func(port, alt int) int {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.1.255.254", fmt.Sprint(port)))
		if err != nil {
			return alt
		}
		ln.Close()
		return port
	}
	d := winsim.DefaultPorts()
	return winsim.Ports{WinRM: try(d.WinRM, 15985), WinRMHTTPS: try(d.WinRMHTTPS, 15986), SSH: try(d.SSH, 2222)}
}
