package winsim

import (
	"bufio"
	"bytes"
	"strings"
)

// SSHDConfigFile is Win32-OpenSSH's server configuration.
const SSHDConfigFile = `C:\ProgramData\ssh\sshd_config`

// stockSSHDConfig is the sshd_config the OpenSSH Server feature installs
// (PowerShell/openssh-portable contrib/win32/openssh/sshd_config): every
// option at its default and commented, but for AuthorizedKeysFile, the
// sftp subsystem, and a closing Match block that sends the administrators'
// keys to administrators_authorized_keys. Only what a password login
// depends on is reproduced with its surroundings; the commented lines
// change nothing.
const stockSSHDConfig = "# This is the sshd server system-wide configuration file.  See\r\n" +
	"# sshd_config(5) for more information.\r\n\r\n" +
	"#PubkeyAuthentication yes\r\n\r\n" +
	"AuthorizedKeysFile\t.ssh/authorized_keys\r\n\r\n" +
	"# To disable tunneled clear text passwords, change to no here!\r\n" +
	"#PasswordAuthentication yes\r\n#PermitEmptyPasswords no\r\n\r\n" +
	"# override default of no subsystems\r\n" +
	"Subsystem\tsftp\tsftp-server.exe\r\n\r\n" +
	"Match Group administrators\r\n" +
	"       AuthorizedKeysFile __PROGRAMDATA__/ssh/administrators_authorized_keys\r\n"

// sshdPasswordAuthentication reads PasswordAuthentication as sshd does at
// its start: keywords are case-insensitive, the first value obtained wins
// ("For each keyword, the first obtained value will be used", sshd_config(5)),
// and the default is yes. Only the global section, before the first Match
// line, is read: a Match block's PasswordAuthentication (per user, group or
// address) is not modelled, and makes the host refuse every password login
// rather than guess (passwordAuthOff). A missing file is the default.
func sshdPasswordAuthentication(b []byte) (on, matchSetsIt bool) {
	on, seen, inMatch := true, false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(strings.ReplaceAll(sc.Text(), "=", " "))
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case strings.EqualFold(f[0], "Match"):
			inMatch = true
		case strings.EqualFold(f[0], "PasswordAuthentication") && len(f) > 1:
			if inMatch {
				matchSetsIt = true
			} else if !seen {
				on, seen = !strings.EqualFold(f[1], "no"), true
			}
		}
	}
	return on, matchSetsIt
}

// loadSSHDConfig is sshd reading its configuration as it starts (the
// service's start, the machine's boot). Each connection's re-executed sshd
// gets that configuration from the listening process (openssh-portable
// sshd.c, send_rexec_state), so an edited sshd_config applies after a
// restart of the service, as on Windows.
func (h *Host) loadSSHDConfig() {
	b, _ := h.fs.ReadFile(SSHDConfigFile)
	on, matchSetsIt := sshdPasswordAuthentication(b)
	h.sshPasswordOff.Store(!on || matchSetsIt)
}
