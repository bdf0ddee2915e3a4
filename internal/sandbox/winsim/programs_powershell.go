package winsim

import "context"

// powershell.exe started as a process rather than as a WinRM or SSH command:
// the command of a HostProcess container (kubernetes.io "Create a Windows
// HostProcess Pod": the container runs on the host, with the host's
// powershell.exe), or `powershell.exe -File x.ps1` from a script. Its
// arguments are joined into the command line CreateProcess passes
// (windowsCommandLine) and parsed as powershell.exe parses its own command
// line (parsePowerShell: -Command joins what follows, -File reads the
// script); the script runs on the engine with the process's environment
// and streams, and ends when ctx does (a container stopped).
func init() { registerProgram("powershell.exe", SubsystemConsole, runPowerShellProcess) }

func runPowerShellProcess(ctx context.Context, p *Process) int {
	inv, _ := p.Host.parsePowerShell("powershell.exe " + windowsCommandLine(p.Args))
	req := execRequest{Transport: "process", Stdin: p.Stdin, Stdout: p.Stdout, Stderr: p.Stderr}
	return p.Host.runPowerShell(ctx, req, inv, p.Env)
}
