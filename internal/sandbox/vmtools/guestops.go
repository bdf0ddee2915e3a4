package vmtools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Guest operations: vCenter's GuestProcessManager and GuestFileManager
// (vSphere Web Services API, vim.vm.guest.ProcessManager and
// vim.vm.guest.FileManager), answered by the simulated Windows host of the
// VM (winsim's guestops.go), as VMware Tools in the guest answers them on
// vSphere. Each call is checked as vCenter checks it: the VM is powered on
// (InvalidPowerState), VMware Tools runs in it (GuestOperationsUnavailable),
// and the credentials are an account of the guest with its password
// (InvalidGuestLogin). The methods modelled are those below; vcsim refuses
// any other guest method with NotImplemented.
//
// File transfers: InitiateFileTransfer{To,From}Guest hand out a URL of
// vCenter's form, https://*/guestFile?id=<id>&token=<token> (the "*" is the
// address the client reached vCenter at: guest.FileManager.TransferURL),
// valid once and for guestTransferTTL; the PUT or GET of it reads or writes
// the host's disk.

// VMware Tools' pace, with the latency model on: each guest operation is
// answered after the model's GuestOperation time, and a ListProcessesInGuest
// of a VM sooner than ProcessPollInterval (judged unscaled: the client's
// poll intervals are real time) after the last one VMware Tools answered is
// refused as vCenter refuses it, a SystemError whose reason is "vix error
// codes = (3016, 0)." (faultstring "A general system error occurred: vix
// error codes = (3016, 0).": vmware/govmomi#759, where govc polled every
// 250 ms; the reason's form is hostd's, vmware/vic#3029's log). VIX error
// 3016 is VIX_E_TOOLS_NOT_RUNNING (open-vm-tools lib/include/vix.h), what a
// client reads as VMware Tools not running although it runs: govc's fix was
// to poll every second (govmomi#1481). With the model off nothing waits and
// nothing is refused for its pace.
const vixToolsNotRunning = "vix error codes = (3016, 0).\n"

// toolsBusy is vCenter's answer to a guest operation VMware Tools did not
// take: the 3016 SystemError.
func toolsBusy() *soap.Fault {
	return simulator.Fault("A general system error occurred: vix error codes = (3016, 0).",
		&types.SystemError{Reason: vixToolsNotRunning})
}

// pace takes VMware Tools' time for one guest operation (GuestOperation,
// played), or less if the request is cancelled.
func (g *guestOps) pace(ctx *simulator.Context) {
	_ = g.h.opts.Latency.Wait(ctx.Context, latency.GuestOperation)
}

// pollTooSoon reports whether a ListProcessesInGuest of vm comes sooner
// than VMware Tools answers another, and otherwise records it as answered.
func (g *guestOps) pollTooSoon(vm types.ManagedObjectReference) bool {
	m := g.h.opts.Latency
	if !m.On() {
		return false
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lastPoll == nil {
		g.lastPoll = map[types.ManagedObjectReference]time.Time{}
	}
	if last, ok := g.lastPoll[vm]; ok && now.Sub(last) < m.Real(latency.ProcessPollInterval) {
		g.refused++
		return true
	}
	g.lastPoll[vm] = now
	return false
}

// Refused3016 counts the guest operations refused with vix error 3016 for
// being polled too often.
func (h *Hosts) Refused3016() int {
	h.guestOps.mu.Lock()
	defer h.guestOps.mu.Unlock()
	return h.guestOps.refused
}

// guestTransferTTL bounds how long a transfer URL may wait for its use.
const guestTransferTTL = 5 * time.Minute

// guestOpsRef is the object the sandbox's guest operations are answered by.
var guestOpsRef = types.ManagedObjectReference{Type: "SandboxGuestOperations", Value: "guest-operations"}

type guestOps struct {
	h *Hosts

	mu        sync.Mutex
	transfers map[string]*transfer
	// lastPoll is when VMware Tools last answered a ListProcessesInGuest of
	// each VM; refused counts the polls refused for coming sooner.
	lastPoll map[types.ManagedObjectReference]time.Time
	refused  int
}

// transfer is a file transfer URL handed out and not used yet.
type transfer struct {
	vm        types.ManagedObjectReference
	path      string
	toGuest   bool
	size      int64
	overwrite bool
	expires   time.Time
}

func (g *guestOps) Reference() types.ManagedObjectReference { return guestOpsRef }

// Lock and Unlock opt guestOps out of the simulator's lock per object
// (simulator.Registry.WithLock holds the handler's lock for the whole call):
// VMware Tools in different guests answers at once, each in its own time
// (pace), and guestOps guards its own state with mu.
func (g *guestOps) Lock()   {}
func (g *guestOps) Unlock() {}

// guest checks a guest operation's VM, its tools and its credentials, and
// returns the VM's running host.
func (g *guestOps) guest(ctx *simulator.Context, ref types.ManagedObjectReference, auth types.BaseGuestAuthentication) (*winsim.Host, types.BaseMethodFault) {
	g.pace(ctx)
	vm, ok := ctx.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return nil, &types.ManagedObjectNotFound{Obj: ref}
	}
	var power types.VirtualMachinePowerState
	ctx.WithLock(vm, func() { power = vm.Runtime.PowerState })
	if power != types.VirtualMachinePowerStatePoweredOn {
		return nil, &types.InvalidPowerState{RequestedState: types.VirtualMachinePowerStatePoweredOn, ExistingState: power}
	}
	host := g.h.ByVM(ref.Value)
	if host == nil || !host.Up() || !host.ToolsRunning() {
		// Down, or up without VMware Tools running (its VMTools service
		// stopped or restarting).
		return nil, new(types.GuestOperationsUnavailable)
	}
	creds, ok := auth.(*types.NamePasswordAuthentication)
	if !ok {
		// SAML tokens and SSPI tickets are not modelled.
		return nil, new(types.InvalidGuestLogin)
	}
	if err := host.GuestLogon(creds.Username, creds.Password); err != nil {
		if errors.Is(err, winsim.ErrGuestNotModelled) {
			return nil, new(types.NotImplemented) // refused, never pretended
		}
		return nil, new(types.InvalidGuestLogin)
	}
	return host, nil
}

// fileFault is the fault of a winsim guest file error.
func fileFault(err error, path string) types.BaseMethodFault {
	switch {
	case errors.Is(err, winsim.ErrGuestFileNotFound):
		return &types.FileNotFound{FileFault: types.FileFault{File: path}}
	case errors.Is(err, winsim.ErrGuestFileExists):
		return &types.FileAlreadyExists{FileFault: types.FileFault{File: path}}
	case errors.Is(err, winsim.ErrGuestNotAFile):
		return &types.NotAFile{FileFault: types.FileFault{File: path}}
	case errors.Is(err, winsim.ErrGuestDown), errors.Is(err, winsim.ErrToolsNotRunning):
		return new(types.GuestOperationsUnavailable)
	case errors.Is(err, winsim.ErrGuestNotModelled):
		return new(types.NotImplemented)
	}
	return &types.GuestOperationsFault{}
}

func (g *guestOps) StartProgramInGuest(ctx *simulator.Context, req *types.StartProgramInGuest) soap.HasFault {
	body := new(methods.StartProgramInGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	spec, ok := req.Spec.(*types.GuestProgramSpec)
	if !ok {
		body.Fault_ = simulator.Fault("only GuestProgramSpec is modelled", new(types.NotImplemented))
		return body
	}
	user := req.Auth.(*types.NamePasswordAuthentication).Username
	p, err := host.StartProgram(winsim.GuestProgram{User: user, Path: spec.ProgramPath, Arguments: spec.Arguments,
		Dir: spec.WorkingDirectory, Environment: spec.EnvVariables})
	if err != nil {
		body.Fault_ = simulator.Fault(err.Error(), fileFault(err, spec.ProgramPath))
		return body
	}
	body.Res = &types.StartProgramInGuestResponse{Returnval: p.Pid}
	return body
}

func (g *guestOps) ListProcessesInGuest(ctx *simulator.Context, req *types.ListProcessesInGuest) soap.HasFault {
	body := new(methods.ListProcessesInGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	if g.pollTooSoon(req.Vm) {
		body.Fault_ = toolsBusy()
		return body
	}
	body.Res = new(types.ListProcessesInGuestResponse)
	for _, p := range host.Processes(req.Pids) {
		info := types.GuestProcessInfo{Name: p.Name, Pid: p.Pid, Owner: p.Owner, CmdLine: p.CmdLine, StartTime: p.Start}
		if end, code, ok := p.Exited(); ok {
			info.EndTime, info.ExitCode = types.NewTime(end), code
		}
		body.Res.Returnval = append(body.Res.Returnval, info)
	}
	return body
}

func (g *guestOps) TerminateProcessInGuest(ctx *simulator.Context, req *types.TerminateProcessInGuest) soap.HasFault {
	body := new(methods.TerminateProcessInGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault == nil && !host.TerminateProcess(req.Pid) {
		fault = &types.GuestProcessNotFound{Pid: req.Pid}
	}
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	body.Res = new(types.TerminateProcessInGuestResponse)
	return body
}

func (g *guestOps) CreateTemporaryFileInGuest(ctx *simulator.Context, req *types.CreateTemporaryFileInGuest) soap.HasFault {
	body := new(methods.CreateTemporaryFileInGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	p, err := host.CreateGuestTempFile(req.Prefix, req.Suffix, req.DirectoryPath)
	if err != nil {
		body.Fault_ = simulator.Fault(err.Error(), fileFault(err, req.DirectoryPath))
		return body
	}
	body.Res = &types.CreateTemporaryFileInGuestResponse{Returnval: p}
	return body
}

func (g *guestOps) DeleteFileInGuest(ctx *simulator.Context, req *types.DeleteFileInGuest) soap.HasFault {
	body := new(methods.DeleteFileInGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	if err := host.DeleteGuestFile(req.FilePath); err != nil {
		body.Fault_ = simulator.Fault(err.Error(), fileFault(err, req.FilePath))
		return body
	}
	body.Res = new(types.DeleteFileInGuestResponse)
	return body
}

func (g *guestOps) InitiateFileTransferToGuest(ctx *simulator.Context, req *types.InitiateFileTransferToGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferToGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	if err := host.CheckGuestFileWrite(req.GuestFilePath, req.Overwrite); err != nil {
		body.Fault_ = simulator.Fault(err.Error(), fileFault(err, req.GuestFilePath))
		return body
	}
	u := g.add(&transfer{vm: req.Vm, path: req.GuestFilePath, toGuest: true, size: req.FileSize, overwrite: req.Overwrite}, ctx.Session.Key)
	body.Res = &types.InitiateFileTransferToGuestResponse{Returnval: u}
	return body
}

func (g *guestOps) InitiateFileTransferFromGuest(ctx *simulator.Context, req *types.InitiateFileTransferFromGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferFromGuestBody)
	host, fault := g.guest(ctx, req.Vm, req.Auth)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	f, size, err := host.OpenGuestFile(req.GuestFilePath)
	if err != nil {
		body.Fault_ = simulator.Fault(err.Error(), fileFault(err, req.GuestFilePath))
		return body
	}
	_ = f.Close() // read again at the GET, as ESXi does
	u := g.add(&transfer{vm: req.Vm, path: req.GuestFilePath, size: size}, ctx.Session.Key)
	body.Res = &types.InitiateFileTransferFromGuestResponse{Returnval: types.FileTransferInformation{
		Attributes: &types.GuestWindowsFileAttributes{}, Size: size, Url: u}}
	return body
}

// add records a transfer and returns its URL.
func (g *guestOps) add(t *transfer, token string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	t.expires = time.Now().Add(guestTransferTTL)
	g.mu.Lock()
	if g.transfers == nil {
		g.transfers = map[string]*transfer{}
	}
	for k, old := range g.transfers {
		if time.Now().After(old.expires) {
			delete(g.transfers, k)
		}
	}
	g.transfers[id] = t
	g.mu.Unlock()
	return (&url.URL{Scheme: "https", Host: "*", Path: vcsim.GuestFilePath,
		RawQuery: url.Values{"id": {id}, "token": {token}}.Encode()}).String()
}

// take removes and returns the transfer of a URL, nil when it is unknown,
// used or expired.
func (g *guestOps) take(id string) *transfer {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.transfers[id]
	delete(g.transfers, id)
	if t == nil || time.Now().After(t.expires) {
		return nil
	}
	return t
}

// ServeTransfer serves the PUT or GET of a transfer URL.
func (g *guestOps) ServeTransfer(w http.ResponseWriter, r *http.Request) {
	t := g.take(r.URL.Query().Get("id"))
	switch {
	case t == nil:
		http.Error(w, "unknown or expired guest file transfer", http.StatusNotFound)
		return
	case t.toGuest && r.Method != http.MethodPut, !t.toGuest && r.Method != http.MethodGet:
		http.Error(w, "wrong method for this transfer", http.StatusMethodNotAllowed)
		return
	}
	host := g.h.ByVM(t.vm.Value)
	if host == nil || !host.Up() || !host.ToolsRunning() {
		http.Error(w, "VMware Tools is not running in the guest", http.StatusServiceUnavailable)
		return
	}
	if t.toGuest {
		if r.ContentLength != t.size {
			http.Error(w, fmt.Sprintf("Content-Length %d is not the file size %d given to InitiateFileTransferToGuest", r.ContentLength, t.size), http.StatusBadRequest)
			return
		}
		if err := host.CheckGuestFileWrite(t.path, t.overwrite); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		if err := host.WriteGuestFile(t.path, io.LimitReader(r.Body, t.size)); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	f, size, err := host.OpenGuestFile(t.path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer func() { _ = f.Close() }()
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, f)
}
