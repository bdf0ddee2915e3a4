package winsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// A Process is one run of a native program (an executable) on the host: from
// PowerShell or cmd.exe (`& 'C:\k\ctr.exe' ...`, `sc.exe ...`), from the
// service control manager, or from a HostProcess container that the simulated
// kubelet runs.
//
// The host learns what a program is from what it holds, as Windows does: the
// programs that ship with Windows are known by their System32 name; any other
// executable is known by its content, "MZ simulated Windows executable" then a
// line "<program> <version>" (the sandbox's artifact server serves such files
// inside the real upstream archive layouts). Program names are lower-case.
type Process struct {
	Host    *Host
	Path    string            // the executable as resolved on the host, e.g. C:\k\kubelet.exe
	Program string            // identity: "sc.exe" for System32 programs, else the content's name ("kubelet")
	Version string            // from the content ("v1.36.3"); "" for System32 programs
	Args    []string          // arguments as the program receives them (after the caller's quoting rules)
	Env     map[string]string // the process environment (case-insensitive names, stored upper-case)
	Dir     string            // working directory
	Stdin   io.Reader         // never nil (empty when nothing is piped)
	Stdout  io.Writer         // never nil (io.Discard when nothing reads it)
	Stderr  io.Writer         // never nil

	// Service is set when the service control manager started the process:
	// the service's name. A service program reports to the SCM by calling
	// ServiceRunning; one that never does fails the start with error 1053
	// after the start timeout, as on Windows.
	Service string
	running func()
}

// ServiceRunning tells the service control manager that the service entered
// SERVICE_RUNNING (svc.Run's handler reporting Running). It does nothing for a
// process that is not a service.
func (p *Process) ServiceRunning() {
	if p.running != nil {
		p.running()
	}
}

// Program runs a native program to completion and returns its exit code.
// Long-running programs (service programs, node agents) return when ctx is
// done, with the exit code the real program has when it is stopped.
type Program func(ctx context.Context, p *Process) int

// Subsystem is the subsystem an executable's PE header names (the
// Subsystem field of the optional header,
// https://learn.microsoft.com/en-us/windows/win32/debug/pe-format#windows-subsystem):
// it decides whether the program's callers wait for it.
//
// A console program (IMAGE_SUBSYSTEM_WINDOWS_CUI, 3) is waited for by
// PowerShell and cmd.exe. A GUI program (IMAGE_SUBSYSTEM_WINDOWS_GUI, 2)
// is not: PowerShell's `& prog` starts it and returns at once without
// setting $LASTEXITCODE unless its output goes down a pipeline
// (`prog | Out-Null`); cmd.exe waits for it only in a batch file; both
// wait through Start-Process -Wait and start /wait (pwsh/native.go,
// cmdline.go, doc.go "Programs and their subsystem").
type Subsystem int

const (
	// SubsystemConsole is IMAGE_SUBSYSTEM_WINDOWS_CUI.
	SubsystemConsole Subsystem = iota
	// SubsystemGUI is IMAGE_SUBSYSTEM_WINDOWS_GUI.
	SubsystemGUI
)

func (s Subsystem) String() string {
	if s == SubsystemGUI {
		return "GUI"
	}
	return "console"
}

// registered is one built-in program: its implementation and the
// subsystem of the real executable it stands for.
type registered struct {
	run       Program
	subsystem Subsystem
}

// programs holds the programs every simulated host knows, by identity.
// HostConfig.Programs adds or overrides programs per host (the simulated
// kubelet and node agents plug in there; they stand for Go programs, which
// `go build` links as console programs unless -ldflags -H=windowsgui, so
// they are console programs: https://pkg.go.dev/cmd/link).
var (
	programsMu sync.RWMutex
	programs   = map[string]registered{}
)

// registerProgram makes a program known to every host, with the subsystem
// the real executable's PE header names (cite it where you register).
// Files that add programs call it from init.
func registerProgram(name string, subsystem Subsystem, p Program) {
	programsMu.Lock()
	defer programsMu.Unlock()
	programs[strings.ToLower(name)] = registered{run: p, subsystem: subsystem}
}

// programSubsystem is the subsystem of a program identity: the registered
// one's, console for the host's own (HostConfig.Programs) and for a name
// no program answers (the run refuses it anyway).
func (h *Host) programSubsystem(name string) Subsystem {
	name = strings.ToLower(name)
	if _, ok := h.cfg.Programs[name]; ok {
		return SubsystemConsole
	}
	programsMu.RLock()
	defer programsMu.RUnlock()
	return programs[name].subsystem
}

// ProgramSubsystem is the subsystem of the program a path names on the
// host (ResolveProgram's identity); an error when the path cannot be run.
func (h *Host) ProgramSubsystem(path string) (Subsystem, error) {
	id, _, err := h.ResolveProgram(path)
	if err != nil {
		return SubsystemConsole, err
	}
	return h.programSubsystem(id), nil
}

// program returns the implementation of a program identity: the host's own
// (HostConfig.Programs) first, then the built-in ones.
func (h *Host) program(name string) (Program, bool) {
	name = strings.ToLower(name)
	if p, ok := h.cfg.Programs[name]; ok {
		return p, true
	}
	programsMu.RLock()
	defer programsMu.RUnlock()
	p, ok := programs[name]
	return p.run, ok
}

// simulatedExecutableMagic starts the content of every simulated executable.
const simulatedExecutableMagic = "MZ simulated Windows executable"

// ExecutableIdentity reads a simulated executable's program name and version
// from its content. ok is false for anything else (a text file, a script, a
// truncated download): Windows cannot run it (error 193, not a valid Win32
// application).
func ExecutableIdentity(content []byte) (program, version string, ok bool) {
	if !bytes.HasPrefix(content, []byte(simulatedExecutableMagic)) {
		return "", "", false
	}
	lines := strings.Split(strings.ReplaceAll(string(content), "\r\n", "\n"), "\n")
	if len(lines) < 2 {
		return "", "", false
	}
	f := strings.Fields(lines[1])
	if len(f) != 2 {
		return "", "", false
	}
	return strings.ToLower(f[0]), f[1], true
}

// ErrorCode is a Win32 error with its code, as the service control manager
// and CreateProcess report them (2 ERROR_FILE_NOT_FOUND, 193
// ERROR_BAD_EXE_FORMAT, 1053 ERROR_SERVICE_REQUEST_TIMEOUT, 1060
// ERROR_SERVICE_DOES_NOT_EXIST, ...).
type ErrorCode struct {
	Code    int
	Message string // the system message, e.g. "The system cannot find the file specified."
}

func (e *ErrorCode) Error() string { return e.Message }

// ResolveProgram finds what Windows would run for an executable path: a
// program that ships with Windows by its System32 name (systemProgram),
// else the file on the host's disk, known by its content. It fails with
// ERROR_FILE_NOT_FOUND (2) when there is no such file and
// ERROR_BAD_EXE_FORMAT (193) when the file is not an executable.
func (h *Host) ResolveProgram(path string) (program, version string, err error) {
	clean := h.fs.Clean(path)
	if id, ok := systemProgram(clean); ok {
		return id, "", nil
	}
	content, rerr := h.fs.ReadFile(clean)
	if rerr != nil {
		return "", "", &ErrorCode{Code: 2, Message: "The system cannot find the file specified."}
	}
	program, version, ok := ExecutableIdentity(content)
	if !ok {
		return "", "", &ErrorCode{Code: 193, Message: "%1 is not a valid Win32 application."}
	}
	return program, version, nil
}

// Run resolves p.Path (ResolveProgram), fills in p's identity and runs the
// program to completion (or until ctx is done), returning its exit code. A
// path that cannot be run, or a program the simulator does not model, fails
// with a message on p.Stderr, as CreateProcess failures reach a caller: the
// simulator never pretends to run what it does not model.
func (h *Host) Run(ctx context.Context, p *Process) int {
	p.Host = h
	if p.Stdin == nil {
		p.Stdin = strings.NewReader("")
	}
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.Stderr == nil {
		p.Stderr = io.Discard
	}
	// A bare name is found as CreateProcess's callers find it: on PATH.
	if !strings.ContainsAny(p.Path, `\/:`) {
		env := p.Env
		if env["PATH"] == "" {
			env = map[string]string{"PATH": defaultPath, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}
		}
		if found, ok := h.resolveProgram(p.Path, env); ok {
			p.Path = found
		}
	}
	program, version, err := h.ResolveProgram(p.Path)
	if err != nil {
		fmt.Fprintf(p.Stderr, "%s: %v\r\n", p.Path, err)
		var ec *ErrorCode
		if errors.As(err, &ec) {
			return ec.Code
		}
		return 1
	}
	p.Program, p.Version = program, version
	if code, ok := h.guardProgram(ctx, program, p.Args, p.Stderr); !ok {
		return code
	}
	run, ok := h.program(program)
	if !ok {
		fmt.Fprintf(p.Stderr, "winsim: the simulated host does not model the program %q (%s); refusing to run it\r\n", program, p.Path)
		return 1
	}
	return run(ctx, p)
}
