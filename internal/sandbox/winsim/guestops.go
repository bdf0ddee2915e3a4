package winsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Guest operations: what VMware Tools in the guest does for vCenter's
// GuestProcessManager and GuestFileManager (vSphere Web Services API,
// vim.vm.guest.ProcessManager and vim.vm.guest.FileManager;
// https://developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.vm.guest.ProcessManager.html):
// log the user on, start a program as that user, report its exit code,
// read, write and delete files. internal/sandbox/vmtools turns vCenter's
// calls into these.
//
// A started program runs as Windows runs it: CreateProcess of the command
// line `"<ProgramPath>" <Arguments>`, with no console anyone reads (what it
// prints is lost unless its command line redirects it). cmd.exe applies
// its /c rules and redirections (cmdRedirections); powershell.exe parses
// its own arguments (parsePowerShell); any other program is found and run
// as the host runs programs (Run), its arguments split by
// CommandLineToArgvW's rules. A program environment (envVariables) and a
// working directory for cmd.exe or powershell.exe are not modelled and are
// refused (NotImplemented through vmtools). Processes belong to one boot: a restart ends
// them and the new boot knows none of them, as VMware Tools after a reboot
// does not. An ended process is reported for guestProcessRetention, as
// vSphere keeps the exit code and end time of a process it started for 5
// minutes after it ends.

// guestProcessRetention is how long an ended process stays listed.
const guestProcessRetention = 5 * time.Minute

// Errors of the guest operations; internal/sandbox/vmtools maps each to
// the fault vCenter answers with.
var (
	// ErrGuestLogon: the credentials are not an account's
	// (InvalidGuestLogin).
	ErrGuestLogon = errors.New("the user name or password is incorrect")
	// ErrGuestDown: the guest is not up (GuestOperationsUnavailable).
	ErrGuestDown = errors.New("the guest is not running")
	// ErrToolsNotRunning: the guest is up but VMware Tools is not running
	// in it (the VMTools service stopped or restarting, or not installed):
	// GuestOperationsUnavailable, as vCenter answers guest operations then
	// ("GuestOperationsUnavailable: thrown when the guest operations agent
	// could not be contacted": vSphere Web Services API, vim.fault.GuestOperationsUnavailable).
	ErrToolsNotRunning = errors.New("VMware Tools is not running in the guest")
	// ErrGuestFileNotFound: no such file (FileNotFound).
	ErrGuestFileNotFound = errors.New("the file does not exist")
	// ErrGuestFileExists: the file exists and overwrite is off
	// (FileAlreadyExists).
	ErrGuestFileExists = errors.New("the file exists")
	// ErrGuestNotAFile: the path is a directory (NotAFile).
	ErrGuestNotAFile = errors.New("the path is a directory")
	// ErrGuestNotModelled: a program line the simulator does not model
	// (the caller refuses it, never pretends it ran).
	ErrGuestNotModelled = errors.New("not modelled by the simulated host")
)

// GuestLogon checks a guest operation's credentials: an account (a bare
// name, COMPUTER\name, .\name or name@domain) and its password.
// Faults.FailAuth fails it too. Only the built-in Administrator's guest
// operations are modelled: what token VMware Tools gives another account's
// programs under UAC is not documented by VMware that this project found,
// so any other account is refused with ErrGuestNotModelled (doc.go, "UAC
// remote restrictions").
func (h *Host) GuestLogon(user, password string) error {
	a, ok := h.checkPassword(user, password)
	switch {
	case !ok:
		return ErrGuestLogon
	case !a.rid500:
		return fmt.Errorf("guest operations as %s, not the built-in Administrator, are %w", a.name, ErrGuestNotModelled)
	}
	return nil
}

// GuestProcess is a program started by StartProgram.
type GuestProcess struct {
	Pid     int64
	Name    string // the program path as given
	CmdLine string // `"<ProgramPath>" <Arguments>`
	Owner   string
	Start   time.Time

	boot   context.Context // the boot it belongs to
	tools  int             // the run of vmtoolsd that started it (toolsState.gen)
	cancel context.CancelFunc
	done   chan struct{}
	end    time.Time
	exit   int32
}

// Done is closed when the process has ended.
func (p *GuestProcess) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, when and with what exit code.
func (p *GuestProcess) Exited() (end time.Time, code int32, ok bool) {
	select {
	case <-p.done:
		return p.end, p.exit, true
	default:
		return time.Time{}, 0, false
	}
}

// guestProcesses are the processes guest operations started.
type guestProcesses struct {
	mu    sync.Mutex
	next  int64
	byPid map[int64]*GuestProcess
}

// GuestProgram is StartProgramInGuest's GuestProgramSpec.
type GuestProgram struct {
	User        string
	Path        string
	Arguments   string
	Dir         string
	Environment []string // NAME=value
}

// StartProgram starts a program as VMware Tools does for
// StartProgramInGuest and returns at once. It fails with ErrGuestDown when
// the host is not up and ErrGuestFileNotFound when the program does not
// exist; what the program line then does is the process's business (its
// exit code), as on Windows.
func (h *Host) StartProgram(p GuestProgram) (*GuestProcess, error) {
	h.mu.Lock()
	up, boot := h.up, h.upCtx
	h.mu.Unlock()
	if !up || boot == nil || boot.Err() != nil {
		return nil, ErrGuestDown
	}
	gen, running := h.toolsRun()
	if !running {
		return nil, ErrToolsNotRunning
	}
	kind, err := h.guestProgramKind(p.Path)
	if err != nil {
		return nil, err
	}
	// What the simulator does not model is refused, not ignored.
	switch {
	case len(p.Environment) > 0:
		return nil, fmt.Errorf("%w: a program's environment variables (GuestProgramSpec.envVariables)", ErrGuestNotModelled)
	case p.Dir != "" && kind != programAny:
		return nil, fmt.Errorf("%w: a working directory for %s (GuestProgramSpec.workingDirectory)", ErrGuestNotModelled, kind)
	}
	ctx, cancel := context.WithCancel(boot)
	proc := &GuestProcess{Name: p.Path, CmdLine: `"` + p.Path + `" ` + p.Arguments, Owner: p.User,
		Start: time.Now(), boot: boot, tools: gen, cancel: cancel, done: make(chan struct{})}
	g := &h.gprocs
	g.mu.Lock()
	if g.byPid == nil {
		g.byPid = map[int64]*GuestProcess{}
		g.next = 4096
	}
	g.next += 4 // Windows process ids are multiples of 4
	proc.Pid = g.next
	g.byPid[proc.Pid] = proc
	g.mu.Unlock()
	if !h.spawn(func() {
		defer cancel()
		code := h.runGuestProgram(ctx, kind, p)
		proc.end, proc.exit = time.Now(), int32(code)
		close(proc.done)
	}) {
		cancel()
		g.mu.Lock()
		delete(g.byPid, proc.Pid)
		g.mu.Unlock()
		return nil, ErrGuestDown
	}
	if h.cfg.OnGuestProgram != nil {
		h.cfg.OnGuestProgram(h, proc)
	}
	return proc, nil
}

// Processes lists the processes of this boot that guest operations
// started, those of pids only when pids is not empty (unknown ones are left
// out), ended ones for guestProcessRetention.
//
// vmtoolsd keeps what it started, with exit codes and end times, in its
// own memory (open-vm-tools services/plugins/vix/vixTools.c,
// startedProcessList), so a VMTools restart forgets them: a process an
// earlier vmtoolsd started is listed while it runs, as any process of the
// guest is (ListProcessesEx asks the system's process list), with no exit
// code, and not at all once it has ended. Windows does not end a
// process when the process that created it ends ("Terminating a process
// does not cause child processes to be terminated":
// https://learn.microsoft.com/windows/win32/procthread/terminating-a-process),
// so the program goes on running; whether vmtoolsd puts what it starts in
// a job object that ends with it is not documented, and not modelled.
func (h *Host) Processes(pids []int64) []*GuestProcess {
	h.mu.Lock()
	boot := h.upCtx
	h.mu.Unlock()
	gen, _ := h.toolsRun()
	g := &h.gprocs
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*GuestProcess
	for pid, p := range g.byPid {
		end, _, ended := p.Exited()
		if p.boot != boot || (ended && time.Since(end) > guestProcessRetention) || (ended && p.tools != gen) {
			delete(g.byPid, pid)
			continue
		}
		if len(pids) != 0 && !containsPid(pids, pid) {
			continue
		}
		if p.tools != gen {
			// Forgotten by this vmtoolsd: running, its end never reported.
			c := *p
			c.done = make(chan struct{})
			p = &c
		}
		out = append(out, p)
	}
	return out
}

// toolsState is whether vmtoolsd (the VMTools service) runs, and which run
// of it this is: gen changes at every start.
type toolsState struct {
	mu      sync.Mutex
	running bool
	gen     int
}

func (h *Host) toolsRun() (gen int, running bool) {
	h.tools.mu.Lock()
	defer h.tools.mu.Unlock()
	return h.tools.gen, h.tools.running
}

// ToolsRunning reports whether VMware Tools runs in the guest: the host is
// up and its VMTools service's vmtoolsd.exe runs. A disk without VMware
// Tools (no VMTools service) never takes guest operations.
func (h *Host) ToolsRunning() bool {
	_, running := h.toolsRun()
	return running && h.Up()
}

func (h *Host) toolsStarted() {
	h.tools.mu.Lock()
	h.tools.gen++
	h.tools.running = true
	h.tools.mu.Unlock()
	if h.cfg.OnToolsChange != nil {
		h.cfg.OnToolsChange(h, true)
	}
}

func (h *Host) toolsStopped() {
	h.tools.mu.Lock()
	h.tools.running = false
	h.tools.mu.Unlock()
	if h.cfg.OnToolsChange != nil {
		h.cfg.OnToolsChange(h, false)
	}
}

func containsPid(pids []int64, pid int64) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// TerminateProcess ends a process guest operations started
// (TerminateProcessInGuest); false when this boot knows no such running
// process.
func (h *Host) TerminateProcess(pid int64) bool {
	for _, p := range h.Processes([]int64{pid}) {
		if _, _, ended := p.Exited(); !ended {
			p.cancel()
			return true
		}
	}
	return false
}

// Kinds of program StartProgram runs.
const (
	programCmd = "cmd.exe"
	programPS  = "powershell.exe"
	programAny = ""
)

func (h *Host) guestProgramKind(path string) (string, error) {
	clean := h.fs.Clean(path)
	id, ok := systemProgram(clean)
	switch {
	case ok && (id == programCmd || id == programPS):
		return id, nil
	case ok:
		return programAny, nil
	}
	if exists, dir := h.fs.Stat(clean); !exists || dir {
		return "", fmt.Errorf("%w: %s", ErrGuestFileNotFound, path)
	}
	return programAny, nil
}

func (h *Host) runGuestProgram(ctx context.Context, kind string, p GuestProgram) int {
	switch kind {
	case programCmd:
		return h.runCmdC(ctx, p)
	case programPS:
		return h.execute(ctx, execRequest{Transport: "vmtools", User: p.User, CommandLine: "powershell.exe " + p.Arguments,
			Stdout: io.Discard, Stderr: io.Discard})
	}
	return h.Run(ctx, &Process{Path: p.Path, Args: CommandLineToArgv(p.Arguments), Dir: p.Dir})
}

// runCmdC runs `cmd.exe /c <line>` with its redirections: stdout and stderr
// go to the files they name (or nowhere, no console being read).
func (h *Host) runCmdC(ctx context.Context, p GuestProgram) int {
	args := strings.TrimSpace(p.Arguments)
	lower := strings.ToLower(args)
	if !strings.HasPrefix(lower, "/c ") {
		// cmd.exe without /c would wait for input no one gives; /k, /s and
		// the other switches are not modelled.
		h.logGuestRefusal(p, "cmd.exe is modelled with /c only")
		return 1
	}
	line := strings.TrimSpace(args[3:])
	if strings.HasPrefix(line, `"`) {
		// cmd /? : a leading quote is kept or stripped with its last
		// partner by rules the simulator does not model.
		h.logGuestRefusal(p, "a quoted command after cmd.exe /c is not modelled")
		return 1
	}
	inner, reds, err := cmdRedirections(line)
	if err != nil {
		h.logGuestRefusal(p, err.Error())
		return 1
	}
	var stdout, stderr io.Writer = io.Discard, io.Discard
	for _, r := range reds {
		if r.dup {
			switch r.fd {
			case 1:
				stdout = stderr
			case 2:
				stderr = stdout
			}
			continue
		}
		f, err := h.fs.OpenWrite(r.path, r.append)
		if err != nil {
			// cmd.exe: "The system cannot find the path specified." and
			// the command does not run.
			return 1
		}
		defer func(f *os.File) { _ = f.Close() }(f)
		if r.fd == 1 {
			stdout = f
		} else {
			stderr = f
		}
	}
	return h.execute(ctx, execRequest{Transport: "vmtools", User: p.User, CommandLine: inner, Stdout: stdout, Stderr: stderr})
}

// logGuestRefusal records a refused program line in the script log, so a
// test sees why a process exited 1.
func (h *Host) logGuestRefusal(p GuestProgram, why string) {
	rec := ScriptRecord{Time: time.Now(), Transport: "vmtools", User: p.User,
		Text: logText(fmt.Sprintf("winsim: refused %s %s: %s", p.Path, p.Arguments, why)), ExitCode: 1}
	h.log.add(rec)
	if h.cfg.OnScript != nil {
		h.cfg.OnScript(h, rec)
	}
}

// redirection is one of cmd.exe's output redirections: n>file, n>>file,
// n>&m (https://learn.microsoft.com/previous-versions/windows/it-pro/windows-xp/bb490982(v=technet.10)).
type redirection struct {
	fd     int // 1 (stdout, the default) or 2 (stderr)
	path   string
	append bool
	dup    bool // fd>&other: fd goes where the other handle goes
}

// cmdRedirections splits a cmd.exe command line into the command and its
// output redirections, outside double quotes. Input redirection, pipes and
// command separators are refused: not modelled.
func cmdRedirections(line string) (string, []redirection, error) {
	var cmd strings.Builder
	var reds []redirection
	quoted := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			quoted = !quoted
			cmd.WriteByte(c)
			continue
		case quoted:
			cmd.WriteByte(c)
			continue
		case c == '<' || c == '|' || c == '&':
			return "", nil, fmt.Errorf("the cmd.exe operator %q is %w", c, ErrGuestNotModelled)
		case c != '>':
			cmd.WriteByte(c)
			continue
		}
		r := redirection{fd: 1}
		// A handle number right before '>' (and after a space) is the
		// handle redirected.
		if s := cmd.String(); len(s) > 0 && (s[len(s)-1] == '1' || s[len(s)-1] == '2') && (len(s) == 1 || s[len(s)-2] == ' ') {
			r.fd = int(s[len(s)-1] - '0')
			cmd.Reset()
			cmd.WriteString(s[:len(s)-1])
		}
		if i+1 < len(line) && line[i+1] == '>' {
			r.append = true
			i++
		}
		if i+1 < len(line) && line[i+1] == '&' {
			if i+2 >= len(line) || (line[i+2] != '1' && line[i+2] != '2') {
				return "", nil, fmt.Errorf("the redirection %q is %w", line[i-1:], ErrGuestNotModelled)
			}
			r.dup = true
			i += 2
			reds = append(reds, r)
			continue
		}
		j := i + 1
		for j < len(line) && line[j] == ' ' {
			j++
		}
		k := j
		if k < len(line) && line[k] == '"' {
			end := strings.IndexByte(line[k+1:], '"')
			if end < 0 {
				return "", nil, errors.New("cmd.exe: unterminated quote in a redirection")
			}
			r.path = line[k+1 : k+1+end]
			k += end + 2
		} else {
			for k < len(line) && !strings.ContainsRune(" <>|&", rune(line[k])) {
				k++
			}
			r.path = line[j:k]
		}
		if r.path == "" {
			return "", nil, errors.New("The syntax of the command is incorrect.")
		}
		reds = append(reds, r)
		i = k - 1
	}
	return strings.TrimSpace(cmd.String()), reds, nil
}

// OpenGuestFile opens a file for InitiateFileTransferFromGuest.
func (h *Host) OpenGuestFile(path string) (*os.File, int64, error) {
	exists, dir := h.fs.Stat(path)
	switch {
	case !exists:
		return nil, 0, fmt.Errorf("%w: %s", ErrGuestFileNotFound, path)
	case dir:
		return nil, 0, fmt.Errorf("%w: %s", ErrGuestNotAFile, path)
	}
	f, err := h.fs.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// CheckGuestFileWrite says whether InitiateFileTransferToGuest may write
// path: its directory must exist, and an existing file only with
// overwrite.
func (h *Host) CheckGuestFileWrite(path string, overwrite bool) error {
	clean := h.fs.Clean(path)
	if exists, dir := h.fs.Stat(parentOf(clean)); !exists || !dir {
		return fmt.Errorf("%w: the directory of %s", ErrGuestFileNotFound, path)
	}
	exists, dir := h.fs.Stat(clean)
	switch {
	case dir:
		return fmt.Errorf("%w: %s", ErrGuestNotAFile, path)
	case exists && !overwrite:
		return fmt.Errorf("%w: %s", ErrGuestFileExists, path)
	}
	return nil
}

// WriteGuestFile writes what a file transfer to the guest sends.
func (h *Host) WriteGuestFile(path string, r io.Reader) error {
	f, err := h.fs.OpenWrite(path, false)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close() // the copy's error is the one to report
		return err
	}
	return f.Close()
}

// DeleteGuestFile deletes a file (DeleteFileInGuest).
func (h *Host) DeleteGuestFile(path string) error {
	exists, dir := h.fs.Stat(path)
	switch {
	case !exists:
		return fmt.Errorf("%w: %s", ErrGuestFileNotFound, path)
	case dir:
		return fmt.Errorf("%w: %s", ErrGuestNotAFile, path)
	}
	return h.fs.Remove(path, false)
}

// CreateGuestTempFile creates an empty file named prefix<random>suffix in
// dir, or in the user's %TEMP% when dir is "" (CreateTemporaryFileInGuest).
func (h *Host) CreateGuestTempFile(prefix, suffix, dir string) (string, error) {
	if dir == "" {
		dir = h.fs.env["TEMP"]
	}
	if exists, isDir := h.fs.Stat(dir); !exists || !isDir {
		return "", fmt.Errorf("%w: %s", ErrGuestFileNotFound, dir)
	}
	for {
		p := strings.TrimRight(h.fs.Clean(dir), `\`) + `\` + prefix + newGUID()[:8] + suffix
		if exists, _ := h.fs.Stat(p); !exists {
			return p, h.fs.WriteFile(p, nil, false)
		}
	}
}
