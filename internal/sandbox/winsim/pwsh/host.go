package pwsh

import (
	"context"
	"io"
)

// Host is what the engine needs of the machine it runs on. internal/sandbox/winsim
// implements it over its virtual filesystem, environment and programs.
type Host interface {
	// Getenv/Setenv are the process environment ($env:NAME).
	Getenv(name string) (string, bool)
	Setenv(name, value string)
	// MachineEnv reads and writes the machine-scope environment
	// ([Environment]::Get/SetEnvironmentVariable(..., 'Machine')).
	GetMachineEnv(name string) (string, bool)
	SetMachineEnv(name, value string) error

	// Files: Windows paths ("C:\k\x"), case-insensitive.
	Stat(path string) (exists, dir bool)
	ReadFile(path string) ([]byte, error)
	WriteFile(path string, data []byte, appendTo bool) error
	Create(path string) (io.WriteCloser, error) // truncates; the parent must exist
	MkdirAll(path string) error
	FullPath(path string) string // [IO.Path]::GetFullPath

	ComputerName() string
	OSVersion() string // [Environment]::OSVersion.Version: "10.0.20348.0"

	// ResolveNative finds an executable by name or path as PowerShell's
	// command discovery does (a path, else PATH with PATHEXT); ok is false
	// when nothing matches.
	ResolveNative(name string) (path string, ok bool)
	// RunNative runs an executable to completion, or starts it and returns
	// at once with n.Background set (a GUI-subsystem program whose output
	// is not piped: see NativeRun.Piped). An error is a program Windows
	// cannot start (its message is the reason, e.g. "The specified
	// executable is not a valid application for this OS platform.").
	RunNative(ctx context.Context, n *NativeRun) (exitCode int, err error)
}

// NativeRun is one native program invocation.
type NativeRun struct {
	Path   string   // as resolved
	Args   []string // as the program receives them
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Piped: the program is not the last command of its pipeline (its
	// output goes to a downstream command, `prog | Out-Null`). PowerShell
	// then waits for it whatever its subsystem; last in the pipeline, a
	// GUI-subsystem program runs in the background
	// (NativeCommandProcessor.cs: "Never background unless you're at the
	// end of a pipe", else _isRunningInBackground = isWindowsApplication).
	Piped bool
	// Redirected: the command has a redirection (> file, 2>&1). It does
	// not make PowerShell wait for a GUI program (PowerShell/PowerShell#26455).
	Redirected bool
	// Background is set by the host when it started the program without
	// waiting for it: the caller gets no exit code and no output.
	Background bool
}
