package winsim

import (
	"context"
	"fmt"
)

// sshd.exe of Win32-OpenSSH (PowerShell/openssh-portable,
// contrib/win32/win32compat/wmain_sshd.c): started by the service control
// manager (no arguments, as install-sshd.ps1 registers it) it creates the
// host keys that are missing (generate_host_keys runs ssh-keygen -A), runs
// as the sshd service and reports Running. The host's SSH listener is the
// simulator's own and otherwise does not depend on it; each connection
// reads the host key from the disk (connSSHConfig). Run from a console without -d
// or -D it fails the way sshd does without a terminal to detach from.
func init() { registerProgram("sshd", SubsystemConsole, runSSHD) }

func runSSHD(ctx context.Context, p *Process) int {
	if p.Service == "" {
		fmt.Fprintf(p.Stderr, "winsim: sshd outside the service control manager is not modelled\r\n")
		return 1
	}
	p.Host.loadSSHDConfig()
	// sshd creates missing host keys as it starts (generate_host_keys).
	if err := p.Host.createSSHHostKey(); err != nil {
		fmt.Fprintf(p.Stderr, "%v\r\n", err)
		return 1
	}
	p.ServiceRunning()
	<-ctx.Done()
	return 0
}
