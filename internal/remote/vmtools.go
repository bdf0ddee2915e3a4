package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/guest/toolbox"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The vmtools transport runs scripts through vCenter's guest operations
// (vSphere Web Services API: GuestProcessManager, GuestFileManager), which
// VMware Tools in the guest carries out: no network path to the guest, no
// listener, no certificate of the guest's. The channel is the vCenter
// session's verified TLS (and, for file transfers, the ESXi host's, which
// vCenter vouches for by its thumbprint: govmomi's guest.FileManager
// TransferURL), and each call carries the guest account's credentials.
//
// A Run is what PowerCLI's Invoke-VMScript does
// (https://developer.broadcom.com/powercli/latest/vmware.vimautomation.core/commands/invoke-vmscript):
// it starts powershell.exe through cmd.exe with its output redirected to
// files in the guest, waits for the process's exit code, downloads the
// output and deletes the files. Unlike Invoke-VMScript it runs a short
// script inline (-EncodedCommand, as over WinRM, so stderr is PowerShell's
// CLIXML, decoded the same way) and uploads only a script too long for a
// command line. Per Run, in SOAP calls to vCenter: StartProgramInGuest, one
// ListProcessesInGuest per poll (processPoll*), two
// InitiateFileTransferFromGuest (stdout, stderr; each then one HTTPS GET)
// and two or three DeleteFileInGuest (in the background); a long script
// adds InitiateFileTransferToGuest and its PUT.
//
// govmomi's guest/toolbox Client is used for the transfers (Upload,
// Download). Its Run is not: it polls ListProcessesInGuest every 500 ms
// without looking at the context, and creates each output file with
// CreateTemporaryFileInGuest (two round trips more per Run).
//
// Packer's vsphere builders (hashicorp/packer-plugin-vsphere) reach guests
// through their SSH or WinRM communicator only; they use VMware Tools for
// the guest's IP and its shutdown, as the rest of this provider does.

// cmdExe runs the script's command line: cmd.exe applies the redirections.
const cmdExe = `C:\Windows\System32\cmd.exe`

// Polling a started process: ListProcessesInGuest is the only way vSphere
// tells that a guest process ended (there is no event, task or property
// for it), so its end is polled: once processPollFirst after the start (a
// short script is seen ending at once), then every processPollInterval,
// doubling up to processPollMax for a long step. VMware Tools refuses a
// ListProcessesInGuest polled sooner than it answers with vix error 3016
// (a SystemError "vix error codes = (3016, 0)": vmware/govmomi#759, where
// govc polled every 250 ms; govc's fix polls every second, govmomi#1481;
// govmomi's toolbox.Client.Run polls every 500 ms), so no two polls of a
// process come closer than processPollInterval, a little above toolbox's.
// PowerCLI's Invoke-VMScript documents no interval of its own. The cap
// stays short: a step that ends with Restart-Computer must be seen ending
// before the guest's shutdown stops VMware Tools, seconds later.
const (
	processPollFirst    = 100 * time.Millisecond
	processPollInterval = 600 * time.Millisecond
	processPollMax      = 2 * time.Second
)

// A poll answered with vix error 3016 while VMware Tools runs is VMware
// Tools not keeping up: the wait backs off, doubling the interval up to
// toolsBusyMax, and polls again; toolsBusyAttempts refusals in a row (about
// a minute of them) end the Run with the fault. A guest whose tools really
// stopped is told apart by vCenter's own fault (GuestOperationsUnavailable),
// which cuts the Run as before.
const (
	toolsBusyMax      = 16 * time.Second
	toolsBusyAttempts = 8
)

// toolsStoppedUnder explains a Run whose process VMware Tools lost: vmtoolsd
// keeps the exit codes of the programs it started in its own memory
// (open-vm-tools services/plugins/vix/vixTools.c, startedProcessList), and
// vCenter refuses guest operations while it is not running
// (GuestOperationsUnavailable), so a guest restart or a restart of the
// VMTools service (Restart-Service VMTools, a VMware Tools upgrade) under a
// running script loses the script's result.
const toolsStoppedUnder = "VMware Tools stopped under the running script (the guest restarted, or its VMware Tools service VMTools was restarted: a script run over vmtools must not restart VMware Tools)"

// vmtoolsCleanup bounds the background deletion of a Run's temporary files.
const vmtoolsCleanup = 30 * time.Second

// GuestOperations is how the vmtools transport reaches a guest: a vCenter
// session and the guest's VM.
type GuestOperations struct {
	Client *vim25.Client
	VM     types.ManagedObjectReference
	// WaitReady returns once the guest takes guest operations
	// (vsphere.Client.WaitForGuestOperations, on vCenter's property
	// collector); Connect calls it before each attempt, so a booting or
	// restarting guest is waited for without polling. nil: not waited for.
	WaitReady func(ctx context.Context) error
}

type vmtoolsTransport struct {
	cfg  Config
	auth types.BaseGuestAuthentication
	tb   *toolbox.Client
	wg   sync.WaitGroup
}

func dialVMTools(ctx context.Context, cfg Config) (*vmtoolsTransport, error) {
	g := cfg.Guest
	if g.WaitReady != nil {
		if err := g.WaitReady(ctx); err != nil {
			return nil, &ConnectError{Protocol: cfg.label(), Host: cfg.target(), Step: StepReady, Err: err}
		}
	}
	ops := guest.NewOperationsManager(g.Client, g.VM)
	pm, err := ops.ProcessManager(ctx)
	if err != nil {
		return nil, vmtoolsError(cfg, err)
	}
	fm, err := ops.FileManager(ctx)
	if err != nil {
		return nil, vmtoolsError(cfg, err)
	}
	auth := &types.NamePasswordAuthentication{Username: cfg.User, Password: cfg.Password}
	return &vmtoolsTransport{cfg: cfg, auth: auth, tb: &toolbox.Client{ProcessManager: pm, FileManager: fm,
		Authentication: auth, GuestFamily: types.VirtualMachineGuestOsFamilyWindowsGuest}}, nil
}

// vmtoolsError names the step of a guest operation's fault: the guest's
// credentials refused (auth, never retried), the guest or its tools not
// running (dial: Connect waits for it again), anything else as it is.
func vmtoolsError(cfg Config, err error) error {
	switch {
	case fault.Is(err, &types.InvalidGuestLogin{}), fault.Is(err, &types.GuestPermissionDenied{}):
		return &ConnectError{Protocol: cfg.label(), Host: cfg.target(), Step: StepAuth, Err: err}
	case guestUnavailable(err):
		return &ConnectError{Protocol: cfg.label(), Host: cfg.target(), Step: StepDial, Err: err}
	}
	return err
}

// guestUnavailable reports a fault that says the guest cannot take guest
// operations now: its tools are not running (it is booting or
// restarting), or the VM is not powered on.
func guestUnavailable(err error) bool {
	return fault.Is(err, &types.GuestOperationsUnavailable{}) || fault.Is(err, &types.InvalidPowerState{}) ||
		fault.Is(err, &types.InvalidState{})
}

// cut is a Run's failure once the process started: the guest went away
// under it (a restart), or forgot it (a new boot lists no such process).
func (t *vmtoolsTransport) cut(err error) error {
	return &ConnectError{Protocol: t.cfg.label(), Host: t.cfg.target(), Step: StepDial, Err: fmt.Errorf("%w: %w", ErrConnectionCut, err)}
}

// Run implements Transport.
func (t *vmtoolsTransport) Run(ctx context.Context, script string) (Result, error) {
	base := vmtoolsTempBase()
	out, errf := base+".out", base+".err"
	files := []string{out, errf}
	defer func() { t.removeFiles(ctx, files...) }()
	line := encodedCommand(script)
	args := cmdArguments(line, out, errf)
	if line == "" || len(`"`+cmdExe+`" `+args) > maxCommandLine {
		path := base + ".ps1"
		body := []byte(utf8BOM + script)
		if err := t.put(ctx, bytes.NewReader(body), path); err != nil {
			return Result{}, fmt.Errorf("%s: uploading a %d-character script: %w", t.cfg, len(script), err)
		}
		// The script may carry a secret: it goes before Run returns (the
		// output files in the background).
		defer t.deleteNow(ctx, path)
		args = cmdArguments(fileCommand(path), out, errf)
	}
	pid, err := t.tb.ProcessManager.StartProgram(ctx, t.auth, &types.GuestProgramSpec{ProgramPath: cmdExe, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled in flight: vCenter may have started the program
			// all the same, and its pid never came back. The program's
			// command line holds this Run's unique file names: found by
			// them, it is terminated as wait would have.
			t.terminateStartedLater(ctx, base)
			return Result{}, ctx.Err()
		}
		return Result{}, t.callError("starting powershell.exe", err)
	}
	code, err := t.wait(ctx, pid)
	if err != nil {
		return Result{}, err
	}
	var res Result
	res.ExitCode = code
	if res.Stdout, err = t.get(ctx, out); err != nil {
		return res, err
	}
	if res.Stderr, err = t.get(ctx, errf); err != nil {
		return res, err
	}
	return finish(t.cfg, res, nil)
}

// cmdArguments is cmd.exe's command line: the PowerShell line with its
// output streams redirected to files.
func cmdArguments(line, out, errf string) string {
	return `/c ` + line + ` > "` + out + `" 2> "` + errf + `"`
}

// callError turns a failed guest operation into the transport's error.
func (t *vmtoolsTransport) callError(what string, err error) error {
	err = vmtoolsError(t.cfg, err)
	var ce *ConnectError
	if errors.As(err, &ce) {
		if ce.Step == StepDial {
			return t.cut(ce.Err)
		}
		return ce
	}
	return fmt.Errorf("%s: %s: %w", t.cfg, what, err)
}

// wait polls the process until it ends and returns its exit code. ctx
// ending terminates it (TerminateProcessInGuest, in the background), as
// WinRM signals a cancelled command to terminate.
func (t *vmtoolsTransport) wait(ctx context.Context, pid int64) (int, error) {
	code, err := t.poll(ctx, pid)
	if err != nil && ctx.Err() != nil {
		t.terminateLater(ctx, pid)
		return 0, ctx.Err()
	}
	return code, err
}

// poll is wait's loop: processPollFirst, then processPollInterval doubling
// up to processPollMax, and a back-off up to toolsBusyMax while VMware
// Tools answers 3016.
func (t *vmtoolsTransport) poll(ctx context.Context, pid int64) (int, error) {
	delay, next, busy := processPollFirst, processPollInterval, 0
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-timer.C:
		}
		procs, err := t.tb.ProcessManager.ListProcesses(ctx, t.auth, []int64{pid})
		switch {
		case err != nil && toolsBusy(err):
			busy++
			if busy >= toolsBusyAttempts {
				return 0, t.callError(fmt.Sprintf("waiting for powershell.exe (VMware Tools refused %d polls in a row with vix error 3016)", busy), err)
			}
			next = min(max(2*next, 2*processPollInterval), toolsBusyMax)
		case err != nil && guestUnavailable(err):
			return 0, t.cut(fmt.Errorf("%s (process %d): %w", toolsStoppedUnder, pid, err))
		case err != nil:
			return 0, t.callError("waiting for powershell.exe", err)
		case len(procs) == 0:
			// VMware Tools lists every process it started for minutes
			// after it ends, from its own memory: one it does not know
			// was lost to a restart of the guest or of VMware Tools.
			return 0, t.cut(fmt.Errorf("%s: VMware Tools in the guest no longer knows process %d", toolsStoppedUnder, pid))
		case procs[0].EndTime != nil:
			return int(procs[0].ExitCode), nil
		default:
			busy = 0
		}
		delay, next = next, min(2*next, processPollMax)
		if busy > 0 {
			// Backing off: the next interval grows again from this one.
			next = delay
		}
		timer.Reset(delay)
	}
}

// toolsBusy reports vCenter's SystemError with VIX error 3016
// (VIX_E_TOOLS_NOT_RUNNING, open-vm-tools lib/include/vix.h): "A general
// system error occurred: vix error codes = (3016, 0)." (govmomi#759).
func toolsBusy(err error) bool {
	var se *types.SystemError
	if _, ok := fault.As(err, &se); ok && strings.Contains(se.Reason, "(3016,") {
		return true
	}
	return strings.Contains(err.Error(), "vix error codes = (3016,")
}

// get downloads a guest file as text.
func (t *vmtoolsTransport) get(ctx context.Context, path string) (string, error) {
	f, _, err := t.tb.Download(ctx, path)
	if err != nil {
		return "", t.callError("reading the script's output", err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", fmt.Errorf("%s: reading the script's output: %w", t.cfg, err)
	}
	return string(b), nil
}

// put implements uploader: it writes r to a new file at path. The
// transfer needs its length first (an HTTP PUT with Content-Length), so r
// is read into memory.
func (t *vmtoolsTransport) put(ctx context.Context, r io.Reader, path string) error {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, r)
	if err != nil {
		return err
	}
	p := soap.DefaultUpload
	p.ContentLength = n
	if err := t.tb.Upload(ctx, &buf, path, p, &types.GuestWindowsFileAttributes{}, true); err != nil {
		return t.callError("writing "+path, err)
	}
	return nil
}

// Upload implements Transport.
func (t *vmtoolsTransport) Upload(ctx context.Context, r io.Reader, size int64, sha256hex, dest string) (bool, error) {
	return upload(ctx, t, r, size, sha256hex, dest, true)
}

// removeLater implements uploader.
func (t *vmtoolsTransport) removeLater(path string) { t.removeFiles(context.Background(), path) }

// removeFiles deletes guest files in the background (a cancelled caller
// must not wait for it); a failure is harmless.
func (t *vmtoolsTransport) removeFiles(ctx context.Context, paths ...string) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		// The caller's values (its vCenter operation id) without its end.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vmtoolsCleanup)
		defer cancel()
		for _, p := range paths {
			// A file the script never created (cmd.exe failed first) or a
			// guest gone: nothing to delete.
			_ = t.tb.FileManager.DeleteFile(ctx, t.auth, p)
		}
	}()
}

// deleteNow deletes a guest file before returning, after a failure or a
// cancelled ctx too (bounded by vmtoolsCleanup); a failure (the guest gone)
// is not the caller's.
func (t *vmtoolsTransport) deleteNow(ctx context.Context, path string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vmtoolsCleanup)
	defer cancel()
	_ = t.tb.FileManager.DeleteFile(dctx, t.auth, path)
}

// terminateLater ends an abandoned process in the background.
func (t *vmtoolsTransport) terminateLater(ctx context.Context, pid int64) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vmtoolsCleanup)
		defer cancel()
		_ = t.tb.ProcessManager.TerminateProcess(ctx, t.auth, pid)
	}()
}

// terminateStartedLater ends, in the background, a program this Run may
// have started but whose pid it never learned: the one whose command line
// names base (vmtoolsTempBase, unique per Run). ListProcessesInGuest with
// no pids lists every process guest operations started on this boot. A
// start that reaches vCenter only after this lookup is not found: the
// window is the cancelled request's transit.
func (t *vmtoolsTransport) terminateStartedLater(ctx context.Context, base string) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vmtoolsCleanup)
		defer cancel()
		procs, err := t.tb.ProcessManager.ListProcesses(ctx, t.auth, nil)
		if err != nil {
			return // the guest gone: nothing of this Run runs there
		}
		for _, p := range procs {
			if p.EndTime == nil && strings.Contains(p.CmdLine, base) {
				_ = t.tb.ProcessManager.TerminateProcess(ctx, t.auth, p.Pid)
			}
		}
	}()
}

// Close implements Transport: it waits for the background clean-up (which
// is bounded); the vCenter session is the caller's.
func (t *vmtoolsTransport) Close() error {
	t.wg.Wait()
	return nil
}

// vmtoolsTempBase names a Run's files in the guest's C:\Windows\Temp.
func vmtoolsTempBase() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return `C:\Windows\Temp\tfwin-` + hex.EncodeToString(b[:])
}

// target names the guest in errors: its VM, and its address when known.
func (c Config) target() string {
	if c.Guest == nil {
		return c.Host
	}
	if c.Host != "" {
		return fmt.Sprintf("virtual machine %s (%s)", c.Guest.VM.Value, c.Host)
	}
	return "virtual machine " + c.Guest.VM.Value
}

var _ uploader = (*vmtoolsTransport)(nil)
