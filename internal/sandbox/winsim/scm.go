package winsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// scm is the run-time half of the service control manager (services.exe):
// the environment block it captured at boot and each service's process.
// The configuration half is the registry (serviceTable).
type scm struct {
	mu   sync.Mutex
	env  map[string]string
	runs map[string]*svcRun // by lower-case service name
}

// svcRun is one service's run-time state.
type svcRun struct {
	startMu  sync.Mutex // one start at a time (a dependency may be started by two dependents)
	status   string
	cancel   context.CancelFunc
	done     chan struct{}
	stopping bool // a stop was requested: the process ending is not a failure
	failures int  // for the recovery actions
	lastFail time.Time
	exits    int               // ServiceExits faults fired
	env      map[string]string // the running process's environment
}

func (c *scm) run(name string) *svcRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]*svcRun{}
	}
	r := c.runs[strings.ToLower(name)]
	if r == nil {
		r = &svcRun{status: StatusStopped}
		c.runs[strings.ToLower(name)] = r
	}
	return r
}

func (c *scm) status(name string) string {
	r := c.run(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.status
}

// captureEnvironment builds the SCM's environment block as services.exe does
// at boot: the machine environment of the registry plus the system's own
// variables, for the LocalSystem account. It does not change until the next
// boot (services.exe does not act on WM_SETTINGCHANGE).
func (h *Host) captureEnvironment() {
	env := h.MachineEnv()
	for k, v := range map[string]string{
		"ALLUSERSPROFILE": `C:\ProgramData`, "COMMONPROGRAMFILES": `C:\Program Files\Common Files`,
		"PROGRAMFILES(X86)": `C:\Program Files (x86)`, "PUBLIC": `C:\Users\Public`,
		"USERPROFILE": `C:\Windows\system32\config\systemprofile`, "USERDOMAIN": "WORKGROUP",
		"APPDATA":      `C:\Windows\system32\config\systemprofile\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Windows\system32\config\systemprofile\AppData\Local`,
	} {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	h.scm.mu.Lock()
	h.scm.env = env
	h.scm.mu.Unlock()
}

// ServiceEnvironment is the environment block the service control manager
// gives the processes it starts (captured at boot), before a service's own
// Environment value is added.
func (h *Host) ServiceEnvironment() map[string]string {
	h.scm.mu.Lock()
	defer h.scm.mu.Unlock()
	out := make(map[string]string, len(h.scm.env))
	for k, v := range h.scm.env {
		out[k] = v
	}
	return out
}

// RunningServiceEnv is the environment the service's process started with
// (the SCM's block and the service's Environment value, as it was at that
// start: a change takes effect at the next start), while it runs.
func (h *Host) RunningServiceEnv(name string) (map[string]string, bool) {
	h.scm.mu.Lock()
	defer h.scm.mu.Unlock()
	r := h.scm.runs[strings.ToLower(name)]
	if r == nil || r.status != StatusRunning || r.env == nil {
		return nil, false
	}
	out := make(map[string]string, len(r.env))
	for k, v := range r.env {
		out[k] = v
	}
	return out, true
}

// startService starts a service and waits until it reports Running, as
// Start-Service does: its dependencies first (error 1068 when one fails),
// then its ImagePath's program, which must report Running within
// HostConfig.ServiceStartTimeout (else 1053 and the process is ended).
// Starting a running service does nothing. Errors are *ServiceError.
func (h *Host) startService(name string) error { return h.startServiceChain(name, nil, false) }

// startServiceAtBoot starts an automatic service as the host boots: its
// time is the boot's (the latency model's WindowsBoot), not its own.
func (h *Host) startServiceAtBoot(name string) error { return h.startServiceChain(name, nil, true) }

func (h *Host) startServiceChain(name string, chain []string, atBoot bool) error {
	s, ok := h.svcs.get(name)
	if !ok {
		return noService(name)
	}
	fail := func(code *ErrorCode) error {
		return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "start", Err: code}
	}
	for _, c := range chain {
		if strings.EqualFold(c, s.Name) {
			return fail(errCircularDependency)
		}
	}
	if h.svcs.markedForDelete(s.Name) {
		return fail(errServiceMarkedForDelete)
	}
	if s.StartupType == StartupDisabled {
		return fail(errServiceDisabled)
	}
	r := h.scm.run(s.Name)
	r.startMu.Lock()
	defer r.startMu.Unlock()
	if h.scm.status(s.Name) == StatusRunning {
		return nil
	}
	// Dependencies start first, whatever their start type
	// (https://learn.microsoft.com/windows/win32/services/service-startup).
	for _, d := range s.DependOnService {
		if !h.svcs.isService(d) || h.svcs.markedForDelete(d) {
			return fail(errDependencyDeleted)
		}
		if err := h.startServiceChain(d, append(chain, s.Name), atBoot); err != nil {
			if se := (*ServiceError)(nil); errors.As(err, &se) && se.Err == errCircularDependency {
				return err
			}
			return fail(errServiceDependencyFail)
		}
	}
	return h.spawnService(s, r, atBoot)
}

// spawnService runs a service's program and waits for it to report Running.
func (h *Host) spawnService(s Service, r *svcRun, atBoot bool) error {
	fail := func(code *ErrorCode) error {
		return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "start", Err: code}
	}
	// ImagePath is REG_EXPAND_SZ: %SystemRoot% and friends expand first.
	cmdline := expandPercent(s.BinaryPathName, h.ServiceEnvironment())
	exe, args := splitImagePath(func(p string) bool { ok, dir := h.fs.Stat(p); return ok && !dir }, cmdline)
	program, version, err := h.ResolveProgram(exe)
	if err != nil {
		if ec := (*ErrorCode)(nil); errors.As(err, &ec) {
			return fail(ec)
		}
		return fail(errFileNotFound)
	}
	run, ok := h.program(program)
	if !ok {
		return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "start",
			Refused: fmt.Sprintf("winsim: the simulated host does not model the program %q (%s) as a service program; refusing to start it", program, exe)}
	}
	env := h.ServiceEnvironment()
	for _, kv := range s.Environment {
		if i := strings.IndexByte(kv, '='); i > 0 {
			env[strings.ToUpper(kv[:i])] = kv[i+1:]
		}
	}
	h.mu.Lock()
	upCtx := h.upCtx
	h.mu.Unlock()
	if upCtx == nil || upCtx.Err() != nil {
		return fail(errServiceRequestTimeout)
	}
	ctx, cancel := context.WithCancel(upCtx)
	runningCh := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	p := &Process{
		Host: h, Path: exe, Program: program, Version: version, Args: args, Env: env,
		Dir: `C:\Windows\system32`, Stdin: strings.NewReader(""),
		// A service has no console: what it prints goes nowhere unless
		// something (nssm, --log-file) redirects it to a file.
		Stdout: io.Discard, Stderr: io.Discard,
		Service: s.Name,
	}
	p.running = func() {
		once.Do(func() {
			h.scm.mu.Lock()
			if r.done == done {
				r.status = StatusRunning
			}
			h.scm.mu.Unlock()
			close(runningCh)
		})
	}
	h.scm.mu.Lock()
	r.status, r.cancel, r.done, r.stopping, r.env = StatusStartPending, cancel, done, false, env
	h.scm.mu.Unlock()
	if !atBoot {
		// START_PENDING for the start's time (the latency model's
		// ServiceStart; none when it is off), before the process runs.
		_ = h.cfg.Latency.Wait(upCtx, latency.ServiceStart)
	}
	go func() {
		run(ctx, p)
		cancel()
		// A process ended by the host going down has not failed.
		h.serviceExited(s.Name, r, done, upCtx.Err() != nil)
	}()
	timer := time.NewTimer(h.cfg.ServiceStartTimeout)
	defer timer.Stop()
	select {
	case <-runningCh:
		h.armServiceExitFault(s.Name, r, done)
		return nil
	case <-done:
		select {
		case <-runningCh:
			return nil // it reported Running, then ended: a failure after the start
		default:
		}
		return fail(errProcessAborted)
	case <-timer.C:
		// The SCM gives up on the start and ends the process.
		h.scm.mu.Lock()
		r.stopping = true
		h.scm.mu.Unlock()
		cancel()
		waitDone(done, 5*time.Second)
		return fail(errServiceRequestTimeout)
	}
}

func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// serviceExited records a service process's end: Stopped, and when nobody
// asked it to stop after it reported Running, a failure for the recovery
// actions.
func (h *Host) serviceExited(name string, r *svcRun, done chan struct{}, hostDown bool) {
	h.scm.mu.Lock()
	if r.done != done {
		h.scm.mu.Unlock()
		close(done)
		return
	}
	failed := r.status == StatusRunning && !r.stopping && !hostDown
	r.status = StatusStopped
	h.scm.mu.Unlock()
	close(done)
	h.svcs.stopped(name)
	if failed {
		h.serviceFailed(name, r)
	}
}

// serviceFailed applies the recovery actions (sc.exe failure, stored as the
// FailureActions value): the failure count picks the action (the last one
// repeats), reset= seconds without failure set the count back to zero
// (https://learn.microsoft.com/windows/win32/api/winsvc/ns-winsvc-service_failure_actionsw).
// Without recovery actions a failed service stays Stopped.
func (h *Host) serviceFailed(name string, r *svcRun) {
	fa, ok := h.failureActions(name)
	h.scm.mu.Lock()
	now := time.Now()
	if ok && fa.ResetSeconds > 0 && !r.lastFail.IsZero() && now.Sub(r.lastFail) > time.Duration(fa.ResetSeconds)*time.Second {
		r.failures = 0
	}
	r.failures++
	r.lastFail = now
	n := r.failures
	h.scm.mu.Unlock()
	if !ok || len(fa.Actions) == 0 {
		return
	}
	a := fa.Actions[min(n, len(fa.Actions))-1]
	if a.Type != scActionRestart {
		return
	}
	h.mu.Lock()
	upCtx := h.upCtx
	h.mu.Unlock()
	go func() {
		t := time.NewTimer(a.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			_ = h.startService(name)
		case <-upCtx.Done():
		}
	}()
}

// armServiceExitFault makes the process exit on its own (Faults.ServiceExits).
func (h *Host) armServiceExitFault(name string, r *svcRun, done chan struct{}) {
	h.mu.Lock()
	var fault *ServiceExitFault
	for i := range h.faults.ServiceExits {
		if strings.EqualFold(h.faults.ServiceExits[i].Service, name) {
			fault = &h.faults.ServiceExits[i]
			break
		}
	}
	h.mu.Unlock()
	if fault == nil {
		return
	}
	h.scm.mu.Lock()
	if fault.Times > 0 && r.exits >= fault.Times {
		h.scm.mu.Unlock()
		return
	}
	r.exits++
	cancel := r.cancel
	h.scm.mu.Unlock()
	go func() {
		t := time.NewTimer(fault.After)
		defer t.Stop()
		select {
		case <-t.C:
			cancel() // not a stop request: the SCM sees the process die
		case <-done:
		}
	}()
}

// stopService stops a service and waits for its process to end, as
// Stop-Service does without -Force: a service that running services depend
// on is not stopped (error 1051; Stop-Service's message asks for -Force).
// Stopping a stopped service does nothing. Errors are *ServiceError.
func (h *Host) stopService(name string) error {
	s, ok := h.svcs.get(name)
	if !ok {
		return noService(name)
	}
	if s.Status == StatusStopped {
		return nil
	}
	if err := h.stockStopRefused(s); err != nil {
		return err
	}
	if deps := h.runningDependents(s.Name); len(deps) > 0 {
		return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "stop", Err: errDependentServices}
	}
	h.endService(s.Name)
	return nil
}

// stopServiceWithDependents stops the running services that depend on a
// service, then the service: Stop-Service -Force, net stop answering yes.
func (h *Host) stopServiceWithDependents(name string) error {
	s, ok := h.svcs.get(name)
	if !ok {
		return noService(name)
	}
	if s.Status != StatusStopped {
		if err := h.stockStopRefused(s); err != nil {
			return err
		}
	}
	for _, d := range h.runningDependents(s.Name) {
		if err := h.stopServiceWithDependents(d); err != nil {
			return err
		}
	}
	if h.scm.status(s.Name) != StatusStopped {
		h.endService(s.Name)
	}
	return nil
}

// runningDependents lists the services not stopped that depend on name.
func (h *Host) runningDependents(name string) []string {
	var out []string
	for _, s := range h.svcs.list() {
		if s.Status == StatusStopped {
			continue
		}
		for _, d := range s.DependOnService {
			if strings.EqualFold(d, name) {
				out = append(out, s.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// endService asks a service's process to stop and waits for it to end.
func (h *Host) endService(name string) {
	r := h.scm.run(name)
	h.scm.mu.Lock()
	cancel, done := r.cancel, r.done
	if r.status != StatusStopped {
		r.stopping = true
		r.status = StatusStopPending
	}
	h.scm.mu.Unlock()
	if cancel == nil || done == nil {
		return
	}
	cancel()
	if !waitDone(done, 10*time.Second) {
		// A program that ignores its context: the SCM would terminate
		// the process; the goroutine is abandoned.
		h.scm.mu.Lock()
		if r.done == done {
			r.status = StatusStopped
		}
		h.scm.mu.Unlock()
	}
}

// stopAllServices ends every service process (the host is going down).
func (h *Host) stopAllServices() {
	var wg sync.WaitGroup
	for _, s := range h.svcs.list() {
		if s.Status != StatusStopped {
			wg.Add(1)
			go func(n string) {
				defer wg.Done()
				h.endService(n)
			}(s.Name)
		}
	}
	wg.Wait()
}

// bootServices is the SCM at boot: it captures the environment block, then
// starts the Automatic services, each after its dependencies, the delayed
// ones last (https://learn.microsoft.com/windows/win32/services/automatically-starting-services).
func (h *Host) bootServices() {
	h.features.boot()
	h.captureEnvironment()
	var delayed []string
	for _, s := range h.svcs.list() {
		if s.StartupType != StartupAutomatic {
			continue
		}
		if s.DelayedAutoStart {
			delayed = append(delayed, s.Name)
			continue
		}
		_ = h.startServiceAtBoot(s.Name)
	}
	for _, n := range delayed {
		_ = h.startServiceAtBoot(n)
	}
}

// CrashService ends a running service's process without a stop request, as
// when it crashes or is killed (taskkill /F): the SCM sees it die, marks it
// Stopped and applies its recovery actions (scm_recovery.go). It reports
// whether the service was running.
func (h *Host) CrashService(name string) bool {
	r := h.scm.run(name)
	h.scm.mu.Lock()
	cancel, running := r.cancel, r.status == StatusRunning
	h.scm.mu.Unlock()
	if !running || cancel == nil {
		return false
	}
	cancel()
	return true
}
