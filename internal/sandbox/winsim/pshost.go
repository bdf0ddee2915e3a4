package winsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// psHost is one powershell.exe process on a host: pwsh.Host over the host's
// filesystem, its own copy of the environment, and the host's programs.
type psHost struct {
	h   *Host
	ctx context.Context
	env map[string]string // upper-case names
	// reboot: Restart-Computer ran; shutdown: Stop-Computer ran.
	reboot, shutdown bool
	// background: the programs this process started without waiting for
	// them (background.go), started when its script has ended.
	background []backgroundRun
}

// newPSHost is a powershell.exe process with the given environment, or, for
// nil, a logon's: the machine's environment with the user's on top (the
// user's TEMP wins over the machine's C:\Windows\TEMP, as on Windows).
func newPSHost(ctx context.Context, h *Host, procEnv map[string]string) *psHost {
	env := map[string]string{}
	if procEnv != nil {
		for k, v := range procEnv {
			env[strings.ToUpper(k)] = v
		}
	} else {
		for k, v := range h.MachineEnv() {
			env[strings.ToUpper(k)] = v
		}
		for k, v := range h.fs.env {
			env[strings.ToUpper(k)] = v
		}
		h.userProfile(ctx, env)
	}
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = defaultPath
	}
	if _, ok := env["PATHEXT"]; !ok {
		env["PATHEXT"] = ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"
	}
	return &psHost{h: h, ctx: ctx, env: env}
}

// defaultPath is Windows Server's machine PATH.
const defaultPath = `C:\Windows\system32;C:\Windows;C:\Windows\System32\Wbem;C:\Windows\System32\WindowsPowerShell\v1.0\;C:\Windows\System32\OpenSSH\`

func (p *psHost) Getenv(n string) (string, bool) { v, ok := p.env[strings.ToUpper(n)]; return v, ok }
func (p *psHost) Setenv(n, v string)             { p.env[strings.ToUpper(n)] = v }
func (p *psHost) GetMachineEnv(n string) (string, bool) {
	v, ok := p.h.MachineEnv()[strings.ToUpper(n)]
	return v, ok
}
func (p *psHost) SetMachineEnv(n, v string) error {
	if !elevated(p.ctx) {
		return errRegistryDenied // HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment
	}
	return p.h.SetMachineEnv(n, v)
}

func (p *psHost) Stat(path string) (bool, bool) { return p.h.fs.Stat(path) }
func (p *psHost) ReadFile(path string) ([]byte, error) {
	if err := p.h.checkRead(p.ctx, path); err != nil {
		return nil, err
	}
	return p.h.fs.ReadFile(path)
}
func (p *psHost) WriteFile(path string, b []byte, appendTo bool) error {
	if err := p.h.checkWrite(p.ctx, path); err != nil {
		return err
	}
	return p.h.fs.WriteFile(path, b, appendTo)
}
func (p *psHost) Create(path string) (io.WriteCloser, error) {
	if err := p.h.checkWrite(p.ctx, path); err != nil {
		return nil, err
	}
	if ok, dir := p.h.fs.Stat(parentOf(p.h.fs.Clean(path))); !ok || !dir {
		return nil, errors.New("no parent directory")
	}
	return p.h.fs.OpenWrite(path, false)
}
func (p *psHost) MkdirAll(path string) error {
	if err := p.h.checkCreate(p.ctx, p.h.fs.Clean(path), true); err != nil {
		return err
	}
	return p.h.fs.MkdirAll(path)
}

// FileChanges makes the host's files watchable ([System.IO.FileSystemWatcher]).
func (p *psHost) FileChanges() <-chan struct{} { return p.h.fs.Changes() }

var (
	_ pwsh.FileWatcher = (*psHost)(nil)
	_ pwsh.MachineInfo = (*psHost)(nil)
)

func (p *psHost) FullPath(path string) string           { return p.h.fs.Clean(path) }
func (p *psHost) ComputerName() string                  { return p.h.cfg.ComputerName }
func (p *psHost) OSVersion() string                     { return p.h.cfg.WindowsBuild + ".0" }
func (p *psHost) ProcessorCount() int                   { return p.h.cfg.NumCPU }
func (p *psHost) BuildRevision() int                    { return p.h.UBR() }
func (p *psHost) ResolveNative(n string) (string, bool) { return p.h.resolveProgram(n, p.env) }
func (p *psHost) RunNative(ctx context.Context, n *pwsh.NativeRun) (int, error) {
	if !n.Piped {
		if sub, err := p.h.ProgramSubsystem(n.Path); err == nil && sub == SubsystemGUI {
			if n.Redirected {
				fmt.Fprintf(n.Stderr, "winsim: the simulated host does not model a redirection of a GUI program PowerShell does not wait for (%s); pipe it (| Out-Null) or use Start-Process -Wait\r\n", n.Path)
				return 1, nil
			}
			return p.startInBackground(ctx, n)
		}
	}
	return p.h.runProgram(ctx, n.Path, n.Args, p.env, n.Stdin, n.Stdout, n.Stderr)
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '\\')
	if i <= 2 {
		return p[:3]
	}
	return p[:i]
}

// system32Programs are executables that ship with Windows Server in
// C:\Windows\System32: command discovery finds them there. Which of them the
// simulated host can run is up to the programs registered (registerProgram).
var system32Programs = map[string]bool{
	"cmd.exe": true, "sc.exe": true, "tar.exe": true, "icacls.exe": true, "hostname.exe": true, "shutdown.exe": true,
	"whoami.exe": true, "netsh.exe": true, "ipconfig.exe": true, "reg.exe": true, "dism.exe": true, "wusa.exe": true, "ping.exe": true,
	"curl.exe": true, "certutil.exe": true, "net.exe": true, "netstat.exe": true, "schtasks.exe": true,
	"findstr.exe": true, "where.exe": true, "takeown.exe": true, "bcdedit.exe": true, "wevtutil.exe": true, "robocopy.exe": true,
	"xcopy.exe": true, "timeout.exe": true, "tasklist.exe": true, "taskkill.exe": true, "fsutil.exe": true, "route.exe": true,
	"hnsdiag.exe": true, "svchost.exe": true, "netcfg.exe": true,
}

const (
	sysprepPath    = `C:\Windows\System32\Sysprep\sysprep.exe`
	powershellPath = `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`
)

// systemProgram reports whether a cleaned path is a Windows-shipped program
// and its identity.
func systemProgram(clean string) (string, bool) {
	lower := strings.ToLower(clean)
	switch lower {
	case strings.ToLower(sysprepPath):
		return "sysprep.exe", true
	case strings.ToLower(powershellPath):
		return "powershell.exe", true
	case strings.ToLower(trustedInstPath):
		return "trustedinstaller.exe", true
	}
	dir, base := parentOf(lower), lower[strings.LastIndexByte(lower, '\\')+1:]
	if dir == `c:\windows\system32` && system32Programs[base] {
		return base, true
	}
	return "", false
}

// resolveProgram finds an executable as PowerShell's command discovery does:
// a path as given (with PATHEXT extensions tried), else each PATH directory.
func (h *Host) resolveProgram(name string, env map[string]string) (string, bool) {
	exts := strings.Split(strings.ToLower(env["PATHEXT"]), ";")
	try := func(p string) (string, bool) {
		cands := []string{p}
		if !strings.Contains(p[strings.LastIndexByte(p, '\\')+1:], ".") {
			for _, e := range exts {
				cands = append(cands, p+e)
			}
		}
		for _, c := range cands {
			clean := h.fs.Clean(c)
			if _, ok := systemProgram(clean); ok {
				return clean, true
			}
			if ok, dir := h.fs.Stat(clean); ok && !dir {
				return clean, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(name, `\/:`) {
		return try(name)
	}
	for _, dir := range strings.Split(env["PATH"], ";") {
		if dir = strings.TrimRight(strings.TrimSpace(dir), `\`); dir == "" {
			continue
		}
		if p, ok := try(dir + `\` + name); ok {
			return p, true
		}
	}
	return "", false
}

// errNotExecutable is Windows' ERROR_BAD_EXE_FORMAT (193) as PowerShell says it.
var errNotExecutable = errors.New("The specified executable is not a valid application for this OS platform.")

// runProgram runs an executable: a System32 program by name, a .cmd/.bat
// through cmd.exe, anything else by its content (ExecutableIdentity). A
// program the simulator has no implementation of is refused: a line on
// stderr naming it, and exit code 1.
func (h *Host) runProgram(ctx context.Context, path string, args []string, env map[string]string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	identity, version := "", ""
	if id, ok := systemProgram(path); ok {
		identity = id
	} else {
		switch ext := strings.ToLower(path[strings.LastIndexByte(path, '.')+1:]); ext {
		case "cmd", "bat":
			b, err := h.fs.ReadFile(path)
			if err != nil {
				return 1, err
			}
			req := execRequest{Stdin: stdin, Stdout: stdout, Stderr: stderr, Env: env}
			return h.runBatch(ctx, req, string(b), 1), nil
		}
		id, v, err := h.ResolveProgram(path)
		var ec *ErrorCode
		switch {
		case errors.As(err, &ec) && ec.Code == 193:
			return 0, errNotExecutable
		case err != nil:
			return 0, err
		}
		identity, version = id, v
	}
	if code, ok := h.guardProgram(ctx, identity, args, stderr); !ok {
		return code, nil
	}
	prog, ok := h.program(identity)
	if !ok {
		fmt.Fprintf(stderr, "winsim: the simulated host has no implementation of %s (%s); refusing to pretend it ran\r\n", identity, path)
		return 1, nil
	}
	p := &Process{Host: h, Path: path, Program: identity, Version: version, Args: args, Env: env,
		Dir: env["USERPROFILE"], Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return prog(ctx, p), nil
}
