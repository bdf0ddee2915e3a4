// Package vmtools stands in for VMware Tools in each guest: it boots a simulated Windows host (internal/sandbox/winsim) for every
// VM that powers on in the sandbox's vCenter simulator, and stops it when the
// VM powers off or is destroyed.
//
// A host takes, from its VM:
//   - the computer name and static IPv4 address of the clone's sysprep
//     customization (captured from the CloneVM_Task request; reported in
//     guest.hostName and guest.ipAddress once the host serves).
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
//   - at a customized clone's first boot, the customization as vCenter and
//     VMware Tools run it (customization.go, taken from vcsim, which would
//     end it inside the PowerOn task): PENDING, then RUNNING and
//     CustomizationStartedEvent when VMware Tools starts, deployPkg's logs in
//     C:\Windows\TEMP\vmware-imc, vCenter's sysprep.xml with the
//     customization's password at C:\sysprep\sysprep.xml and cached by Setup
//     in C:\Windows\Panther, sysprep's reboot, specialize and OOBE, then
//     SUCCEEDED and CustomizationSucceeded once VMware Tools runs in the last
//     boot; without an AdministratorPassword OOBE waits and nothing ends it;
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
// With the latency model on (Options.Latency, internal/sandbox/latency) a
// guest takes Windows' time, scaled: a power-on to VMware Tools running
// (WindowsBoot), a customization's generalize, sysprep's reboot,
// specialize and OOBE (adding up to the 6-15 minutes of a customized first
// boot), Restart-Computer's downtime (WindowsRestart); a power-off, a
// destroy or Close cuts a boot under way short. VMware Tools answers each
// guest operation after GuestOperation's time and refuses a
// ListProcessesInGuest polled sooner than it tolerates with vix error 3016
// (guestops.go).
//
// Power events come from the simulator's registry (an in-process
// RegisterObject handler: no polling); host starts and stops run on one
// goroutine per VM, in event order, never inside a simulator lock.
package vmtools

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/hooks"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// sandboxServiceStartTimeout replaces Windows' 30 s service start timeout
// (winsim.HostConfig.ServiceStartTimeout) in the sandbox: shorter, so a
// service that never starts fails a test soon, but not so short that a
// loaded machine fails a healthy one. 2 s was: with a pool's members
// joining at once on 2 cores, a kubelet (its flags checked by the real
// kubelet's parser, a process of its own) sometimes reported Running after
// it ("Cannot start service kubelet").
const sandboxServiceStartTimeout = 10 * time.Second

// DefaultWindowsBuild is reported by VMs whose template records no build.
const DefaultWindowsBuild = "10.0.20348"

// Options configure the hosts.
type Options struct {
	VSphere *vcsim.Server
	// Latency times what the guests do: boots, customization's reboots,
	// VMware Tools' answers (internal/sandbox/latency); nil takes no time.
	Latency *latency.Model
	// CA is the site's certificate authority: it signs the one WinRM HTTPS
	// certificate of the prepared template (for the template's name), as an
	// administrator's CA would. Guests get none of their own.
	CA *pki.CA
	// RunnerOutsideSubnet puts the clients (the test process, Terraform)
	// outside the guests' subnet, as a CI runner or Terraform Cloud agent
	// is: the stock firewall rule admits WinRM HTTP (5985) on the Public
	// profile from the local subnet only, so it is refused; guest
	// operations through vCenter still work. By default the runner is in
	// the guests' subnet, as in a lab.
	RunnerOutsideSubnet bool
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
	// Domains find the Active Directory domains' controllers a
	// customization's domain join reaches (internal/sandbox/addomain); nil
	// knows none, so every join fails as for a domain that cannot be
	// contacted.
	Domains addomain.Locator
	Logf    func(format string, args ...any)
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
	outside       bool // the runner is outside the guests' subnet (RunnerOutsideSubnet)
	defaultFaults winsim.Faults
	faults        map[string]winsim.Faults // by upper-case computer name
	changed       chan struct{}            // closed and replaced on every host change
	observers     hooks.List[func(Event)]  // OnEvent; apart from mu: they run while mu is free
	closed        bool
	wg            sync.WaitGroup
	guestOps      *guestOps
	// ctx ends at Close: every boot's modelled time waits on it.
	ctx    context.Context
	cancel context.CancelFunc
}

// cloneInfo is what a CloneVM_Task request said about the clone.
type cloneInfo struct {
	source types.ManagedObjectReference
	name   string // the VM name
	custom *types.CustomizationSpec
	// sysprep is the Windows customization taken from vcsim: the sandbox
	// runs it (customization.go).
	sysprep *types.CustomizationSysprep
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
	// customize is a clone's sysprep customization, until its first boot
	// runs it (customization.go); customizing is the run waiting for
	// VMware Tools in its last boot.
	customize   *types.CustomizationSysprep
	customizing *customizationRun
	// bootCancel cuts short a boot under way (its customization's phases):
	// the VM powered off, was destroyed, or the sandbox closed.
	bootCancel context.CancelFunc
	host       *winsim.Host
	bootErr    error
	run        serial
}

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
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.outside = opts.RunnerOutsideSubnet
	if opts.Ports != nil {
		h.ports = *opts.Ports
	} else {
		h.ports = probePorts()
	}
	if err := h.installTemplates(); err != nil {
		return nil, err
	}
	opts.VSphere.OnClone(h.onClone)
	h.reg.AddHandler(&registryHandler{h})
	h.guestOps = &guestOps{h: h}
	opts.VSphere.ServeGuestOperations(h.guestOps)
	return h, nil
}

// SetRunnerOutsideSubnet moves the runner outside the guests' subnet (or
// back in) for the hosts that boot from now on: the firewall judges a host's
// listeners as it comes up. Tests put it outside for their own guests.
func (h *Hosts) SetRunnerOutsideSubnet(outside bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outside = outside
}

func (h *Hosts) runnerOutside() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outside
}

// Ports are the ports every host listens on.
func (h *Hosts) Ports() winsim.Ports { return h.ports }

// Close stops every host and unhooks from the simulator.
func (h *Hosts) Close() error {
	h.reg.RemoveHandler(&registryHandler{h})
	h.opts.VSphere.ServeGuestOperations(nil)
	h.cancel() // boots under way end now
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
