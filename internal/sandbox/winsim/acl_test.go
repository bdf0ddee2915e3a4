package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const icaclsDoc = "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/icacls"

// TestACLRejects runs icacls, Get-Acl/Set-Acl and file access through
// outside WinRM clients, in order on one host: the built-in Administrator
// ("admin") and a standard local user ("plain"). Each case must behave as
// Windows Server does or be refused as not modelled; the first cases are the
// controls that show a user can read and write before the DACL changes, so the
// refusals after them are the DACL's doing.
func TestACLRejects(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.LocalAccounts = []winsim.LocalAccount{{Name: "plain", Password: "Plain-Passw0rd!", Groups: []string{"Users"}}}
	})
	clients := map[string]interface {
		RunPSWithContext(ctx context.Context, script string) (string, string, int, error)
	}{
		"admin": clientAs(t, f, "Administrator", winsimtest.Password),
		"plain": clientAs(t, f, "plain", "Plain-Passw0rd!"),
	}
	for _, tc := range []struct {
		name, as, script string
		code             int
		stdout, stderr   string // fragments ("" checks nothing)
		source           string
	}{
		{"setup", "admin", "New-Item -ItemType Directory -Path 'C:\\k\\pki' -Force | Out-Null\nSet-Content -Path 'C:\\k\\pki\\node.key' -Value 'KEY'\nSet-Content -Path 'C:\\k\\plain.txt' -Value 'x'", 0, "", "", ""},
		// The defaults a folder made at C:\ inherits.
		{"default-dacl-of-new-folder", "admin", "icacls.exe 'C:\\k'", 0,
			"C:\\k NT AUTHORITY\\SYSTEM:(I)(OI)(CI)(F)\r\n     BUILTIN\\Administrators:(I)(OI)(CI)(F)\r\n     BUILTIN\\Users:(I)(OI)(CI)(RX)\r\n     BUILTIN\\Users:(I)(CI)(AD)\r\n     BUILTIN\\Users:(I)(CI)(WD)\r\n", "",
			icaclsDoc + " (output format); Windows Server's C:\\ DACL"},
		{"default-dacl-of-new-file", "admin", "icacls.exe 'C:\\k\\pki\\node.key'", 0,
			"C:\\k\\pki\\node.key NT AUTHORITY\\SYSTEM:(I)(F)\r\n", "", "https://learn.microsoft.com/en-us/windows/win32/secauthz/ace-inheritance-rules"},
		// Controls: before hardening a standard user reads the key and adds files.
		{"user-reads-before", "plain", "Get-Content -Path 'C:\\k\\pki\\node.key'", 0, "KEY", "", "BUILTIN\\Users:(I)(OI)(CI)(RX) inherited from C:\\"},
		{"user-creates-file-before", "plain", "Set-Content -Path 'C:\\k\\mine.txt' -Value 'm'\nGet-Content -Path 'C:\\k\\mine.txt'", 0, "m", "", "BUILTIN\\Users:(CI)(IO)(WD) on C:\\"},
		{"user-overwrites-admins-file-refused", "plain", "Set-Content -Path 'C:\\k\\plain.txt' -Value 'y'", 1, "", "Access to the path 'C:\\k\\plain.txt' is denied.", "Users hold RX only on a file they do not own"},
		{"user-no-file-at-root", "plain", "Set-Content -Path 'C:\\rootfile.txt' -Value 'y'", 1, "", "Access to the path 'C:\\rootfile.txt' is denied.", "C:\\ gives Users WD inherit-only"},
		{"user-folder-at-root", "plain", "New-Item -ItemType Directory -Path 'C:\\userdir' | Out-Null\nicacls.exe 'C:\\userdir'", 0, "WIN-TEST\\plain:(I)(F)", "", "BUILTIN\\Users:(CI)(AD) on C:\\; CREATOR OWNER becomes the owner"},
		{"user-may-not-change-dacl", "plain", "icacls.exe 'C:\\k' /grant 'plain:F'\n$LASTEXITCODE", 0, "5", "C:\\k: Access is denied.", "WRITE_DAC: only Administrators, SYSTEM and the owner"},
		// Hardening as the provider does it.
		{"harden", "admin", "icacls.exe 'C:\\k\\pki' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F'\n$LASTEXITCODE", 0, "processed file: C:\\k\\pki\r\nSuccessfully processed 1 files; Failed processing 0 files\r\n0", "", icaclsDoc},
		{"hardened-dacl", "admin", "icacls.exe 'C:\\k\\pki\\node.key'", 0, "C:\\k\\pki\\node.key NT AUTHORITY\\SYSTEM:(I)(F)\r\n                  BUILTIN\\Administrators:(I)(F)\r\n\r\nSuccessfully", "", "automatic propagation of inheritable ACEs"},
		{"user-read-refused-after", "plain", "Get-Content -Path 'C:\\k\\pki\\node.key'", 1, "", "Access to the path 'C:\\k\\pki\\node.key' is denied.", "no ACE for Users"},
		{"user-dotnet-read-refused-after", "plain", "[IO.File]::ReadAllText('C:\\k\\pki\\node.key')", 1, "", "UnauthorizedAccessException", "https://learn.microsoft.com/en-us/dotnet/api/system.io.file.readalltext#exceptions"},
		{"user-cmd-type-refused-after", "plain", "cmd.exe /c type C:\\k\\pki\\node.key\n$LASTEXITCODE", 0, "1", "Access is denied.", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/type"},
		{"user-create-refused-after", "plain", "Set-Content -Path 'C:\\k\\pki\\x.txt' -Value 'y'", 1, "", "Access to the path 'C:\\k\\pki\\x.txt' is denied.", "no ACE for Users"},
		{"admin-still-reads", "admin", "Get-Content -Path 'C:\\k\\pki\\node.key'", 0, "KEY", "", "Administrators:(OI)(CI)(F)"},
		{"inheritance-disable-copies", "admin", "New-Item -ItemType Directory -Path 'C:\\d' | Out-Null\nicacls.exe 'C:\\d' /inheritance:d | Out-Null\nicacls.exe 'C:\\d'", 0, "C:\\d NT AUTHORITY\\SYSTEM:(OI)(CI)(F)\r\n", "", icaclsDoc + " (/inheritance:d copies the ACEs)"},
		{"remove-and-reset", "admin", "icacls.exe 'C:\\d' /remove 'BUILTIN\\Users' | Out-Null\n(icacls.exe 'C:\\d') -join '|'\nicacls.exe 'C:\\d' /reset | Out-Null\n(icacls.exe 'C:\\d')[0]", 0, "C:\\d NT AUTHORITY\\SYSTEM:(I)(OI)(CI)(F)", "", icaclsDoc},
		{"grant-specific-rights", "admin", "icacls.exe 'C:\\d' /grant 'plain:(OI)(CI)(RD,WD)' | Out-Null\n(icacls.exe 'C:\\d')[0]", 0, "C:\\d WIN-TEST\\plain:(OI)(CI)(RD,WD)", "", icaclsDoc},
		// Refusals.
		{"unknown-principal", "admin", "icacls.exe 'C:\\k' /grant 'nosuchuser:F'\n$LASTEXITCODE", 0, "1332", "nosuchuser: No mapping between account names and security IDs was done.", "https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--1300-1699- (ERROR_NONE_MAPPED)"},
		{"bad-grant", "admin", "icacls.exe 'C:\\k' /grant 'Administrators=F'\n$LASTEXITCODE", 0, "87", "Invalid parameter", icaclsDoc},
		{"missing-file", "admin", "icacls.exe 'C:\\nope' /grant 'SYSTEM:F'\n$LASTEXITCODE", 0, "2", "The system cannot find the file specified.", icaclsDoc},
		{"deny-not-modelled", "admin", "icacls.exe 'C:\\k' /deny 'plain:W'\n$LASTEXITCODE", 0, "1", "does not model the icacls argument /deny", icaclsDoc + " (deny ACEs are real; not modelled)"},
		{"recursion-not-modelled", "admin", "icacls.exe 'C:\\k' /grant 'SYSTEM:F' /t\n$LASTEXITCODE", 0, "1", "does not model the icacls argument /t", icaclsDoc + " (/T is real; not modelled)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stdout, stderr, code, err := clients[tc.as].RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d stdout %q stderr %q\nwant exit %d, stdout containing %q, stderr containing %q (source: %s)", code, stdout, stderr, tc.code, tc.stdout, tc.stderr, tc.source)
			}
		})
	}
}
