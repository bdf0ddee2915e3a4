package winsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// sshPasswordsOff is the OpenSSH half of what the provider's join runs on
// a node reached through VMware Tools (bootstrap's
// remote-logins-off.ps1.tmpl; the simulator imports nothing of the
// provider, so the test carries its own copy).
const sshPasswordsOff = `$ErrorActionPreference = 'Stop'
$sshdConfig = 'C:\ProgramData\ssh\sshd_config'
if ((Get-Service -Name 'sshd' -ErrorAction SilentlyContinue) -and (Test-Path -Path $sshdConfig)) {
  $global = @()
  $match = @()
  foreach ($line in @(Get-Content -Path $sshdConfig)) {
    if ($match.Count -gt 0 -or $line -match '^\s*Match\s') {
      $match += $line
    } elseif ($line -notmatch '^\s*PasswordAuthentication\s') {
      $global += $line
    }
  }
  Set-Content -Path $sshdConfig -Value ($global + @('PasswordAuthentication no') + $match)
  if ((Get-Service -Name 'sshd').Status -eq 'Running') {
    Restart-Service -Name 'sshd'
  }
  Write-Output 'OpenSSH password logins off'
} else {
  Write-Output 'no OpenSSH Server'
}
`

func sshPasswordLogin(f *winsimtest.Fixture) error {
	cfg := &ssh.ClientConfig{User: "Administrator", Auth: []ssh.AuthMethod{ssh.Password(f.Password)}, Timeout: 5 * time.Second,
		HostKeyCallback: ssh.InsecureIgnoreHostKey()} //nolint:gosec // the test checks authentication, not the host
	c, err := ssh.Dial("tcp", fmt.Sprintf("%s:%d", f.Host.IP(), f.Host.Ports().SSH), cfg)
	if err == nil {
		_ = c.Close()
	}
	return err
}

// TestSSHDPasswordAuthenticationOff: a host with OpenSSH Server (the stock
// sshd_config, its Match Group administrators block last) admits a
// password login; the script sets PasswordAuthentication no in the global
// section, before the Match block, and restarts the running sshd, after
// which a password login is refused. The script runs again to the same
// file.
func TestSSHDPasswordAuthenticationOff(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		if err := winsim.Install(c.Dir, winsim.Installation{WinRMHTTP: true, OpenSSHServer: true, VMwareTools: true}); err != nil {
			t.Fatal(err)
		}
	})
	h := f.Host
	exe := h.DiskPath(`C:\Windows\System32\OpenSSH\sshd.exe`)
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("MZ simulated Windows executable\nsshd v9.5.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What install-sshd.ps1 registers, as the OpenSSH Server feature does.
	if _, stderr, code := console(t, h, `$ErrorActionPreference = 'Stop'
New-Service -Name sshd -BinaryPathName 'C:\Windows\System32\OpenSSH\sshd.exe' -StartupType Automatic | Out-Null
Start-Service -Name sshd`); code != 0 {
		t.Fatalf("registering sshd: exit %d: %s", code, stderr)
	}
	if err := sshPasswordLogin(f); err != nil {
		t.Fatalf("a password login before: %v", err)
	}
	var first []byte
	for i := range 2 {
		if out, stderr, code := console(t, h, sshPasswordsOff); code != 0 || strings.TrimSpace(out) != "OpenSSH password logins off" {
			t.Fatalf("run %d: exit %d, out %q: %s", i, code, out, stderr)
		}
		b, err := h.ReadFile(winsim.SSHDConfigFile)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("a second run changed sshd_config:\n%s\nthen\n%s", first, b)
		}
	}
	cfgText := strings.ReplaceAll(string(first), "\r\n", "\n")
	off, match := strings.Index(cfgText, "\nPasswordAuthentication no\n"), strings.Index(cfgText, "\nMatch Group administrators\n")
	if off < 0 || match < 0 || off > match || strings.Count(cfgText, "PasswordAuthentication no") != 1 ||
		!strings.Contains(cfgText, "AuthorizedKeysFile __PROGRAMDATA__/ssh/administrators_authorized_keys") {
		t.Fatalf("sshd_config after the script:\n%s\nwant one PasswordAuthentication no before the Match block, which stays", cfgText)
	}
	if err := sshPasswordLogin(f); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("a password login after: %v, want it refused", err)
	}
}
