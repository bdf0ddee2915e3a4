package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const (
	icaclsDoc = "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/icacls"
	getAclDoc = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/get-acl?view=powershell-5.1"
	setAclDoc = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/set-acl?view=powershell-5.1"
	fsSecDoc  = "https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemsecurity"
)

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
		// Get-Acl / Set-Acl (pscmdlets_acl.go).
		{"getacl-explicit-vs-inherited", "admin", "$a = Get-Acl -Path 'C:\\k\\pki'\n($a.Access | ForEach-Object { \"$($_.IdentityReference.Value);$($_.FileSystemRights);$($_.AccessControlType);$($_.IsInherited);$($_.InheritanceFlags);$($_.PropagationFlags)\" }) -join '|'\n\"$($a.AreAccessRulesProtected)|$($a.Owner)\"\n$f = Get-Acl -Path 'C:\\k\\pki\\node.key'\n($f.Access | ForEach-Object { \"$($_.IdentityReference.Value);$($_.IsInherited);$($_.InheritanceFlags)\" }) -join '|'\n$f.AreAccessRulesProtected", 0,
			"NT AUTHORITY\\SYSTEM;FullControl;Allow;False;ContainerInherit, ObjectInherit;None|BUILTIN\\Administrators;FullControl;Allow;False;ContainerInherit, ObjectInherit;None\r\nTrue|BUILTIN\\Administrators\r\nNT AUTHORITY\\SYSTEM;True;None|BUILTIN\\Administrators;True;None\r\nFalse", "",
			getAclDoc + "; https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.authorizationrule.isinherited"},
		{"getacl-default-rights-names", "admin", "((Get-Acl -Path 'C:\\k').Access | Where-Object { $_.IdentityReference.Value -eq 'BUILTIN\\Users' } | ForEach-Object { \"$($_.FileSystemRights);$($_.IsInherited);$($_.InheritanceFlags);$($_.PropagationFlags)\" }) -join '|'", 0,
			"ReadAndExecute, Synchronize;True;ContainerInherit, ObjectInherit;None|AppendData;True;ContainerInherit;None|CreateFiles;True;ContainerInherit;None", "",
			"https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemrights (flags: ReadAndExecute 131241 + Synchronize 1048576)"},
		{"user-getacl-refused-after", "plain", "Get-Acl -Path 'C:\\k\\pki'", 1, "", "Attempted to perform an unauthorized operation.", "READ_CONTROL: no ACE for Users after hardening"},
		{"user-setacl-refused", "plain", "$a = Get-Acl -Path 'C:\\k'\n$a.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule('plain', 'FullControl', 'ContainerInherit,ObjectInherit', 'None', 'Allow')))\nSet-Acl -Path 'C:\\k' -AclObject $a", 1, "", "Attempted to perform an unauthorized operation.", setAclDoc + " (WRITE_DAC, as icacls)"},
		{"user-setacl-changed-nothing", "admin", "[bool]((icacls.exe 'C:\\k') -match 'plain')", 0, "False", "", "the refused Set-Acl wrote nothing"},
		{"admin-setacl-protect-and-grant", "admin", "New-Item -ItemType Directory -Path 'C:\\k\\acl' | Out-Null\n$a = Get-Acl -Path 'C:\\k\\acl'\n$a.SetAccessRuleProtection($true, $false)\nforeach ($id in 'SYSTEM', 'Administrators') { $a.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule($id, 'FullControl', 'ContainerInherit,ObjectInherit', 'None', 'Allow'))) }\n$a.AddAccessRule([System.Security.AccessControl.FileSystemAccessRule]::new('plain', 'Modify', 'ContainerInherit,ObjectInherit', 'None', 'Allow'))\nSet-Acl -Path 'C:\\k\\acl' -AclObject $a\n(icacls.exe 'C:\\k\\acl') -join '|'", 0,
			"C:\\k\\acl NT AUTHORITY\\SYSTEM:(OI)(CI)(F)|         BUILTIN\\Administrators:(OI)(CI)(F)|         WIN-TEST\\plain:(OI)(CI)(M)|", "", setAclDoc + "; " + fsSecDoc + ".setaccessruleprotection"},
		{"user-writes-after-grant", "plain", "Set-Content -Path 'C:\\k\\acl\\p.txt' -Value 'p'\nGet-Content -Path 'C:\\k\\acl\\p.txt'", 0, "p", "", "plain:(OI)(CI)(M) from Set-Acl"},
		{"admin-setaccessrule-replaces", "admin", "$a = Get-Acl -Path 'C:\\k\\acl'\n$a.SetAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule('plain', 'Read', 'ContainerInherit,ObjectInherit', 'None', 'Allow')))\nSet-Acl -Path 'C:\\k\\acl' -AclObject $a\n(icacls.exe 'C:\\k\\acl')[2]", 0, "WIN-TEST\\plain:(OI)(CI)(R)", "", fsSecDoc + ".setaccessrule (CommonAcl.SetQualifiedAce)"},
		{"user-write-refused-after-setaccessrule", "plain", "Set-Content -Path 'C:\\k\\acl\\q.txt' -Value 'q'", 1, "", "Access to the path 'C:\\k\\acl\\q.txt' is denied.", "plain:(OI)(CI)(R) only"},
		{"admin-removeaccessruleall", "admin", "$a = Get-Acl -Path 'C:\\k\\acl'\n$a.RemoveAccessRuleAll((New-Object System.Security.AccessControl.FileSystemAccessRule('plain', 'Read', 'Allow')))\nSet-Acl -Path 'C:\\k\\acl' -AclObject $a\n\"$((icacls.exe 'C:\\k\\acl').Count)|$([bool]((icacls.exe 'C:\\k\\acl') -match 'plain'))\"", 0, "4|False", "", fsSecDoc + ".removeaccessruleall (two ACEs, a blank line, the summary)"},
		{"setacl-deny-not-modelled", "admin", "$a = Get-Acl -Path 'C:\\k\\acl'\n$a.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule('plain', 'Write', 'Deny')))", 1, "", "SimulatorNotModelled", fsSecDoc + ".addaccessrule (Deny is real; deny ACEs not modelled)"},
		{"setacl-unknown-identity", "admin", "$a = Get-Acl -Path 'C:\\k\\acl'\n$a.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule('nosuchuser', 'Read', 'Allow')))", 1, "", "Some or all identity references could not be translated.", "https://learn.microsoft.com/en-us/dotnet/api/system.security.principal.identitynotmappedexception"},
		{"getacl-sddl-not-modelled", "admin", "(Get-Acl -Path 'C:\\k').Sddl", 1, "", "SimulatorNotModelled", getAclDoc + " (Sddl is real; not modelled)"},
		{"rule-bad-rights", "admin", "New-Object System.Security.AccessControl.FileSystemAccessRule('plain', 'FullKontrol', 'Allow')", 1, "", "Unable to match the identifier name FullKontrol to a valid enumerator name.", "https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemrights"},
		{"new-object-unknown-type", "admin", "New-Object System.Security.AccessControl.NoSuchRule('a')", 1, "", "Cannot find type [System.Security.AccessControl.NoSuchRule]: verify that the assembly containing this type is loaded.", "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/new-object?view=powershell-5.1"},
		{"setacl-path-mandatory", "admin", "Set-Acl -AclObject (Get-Acl -Path 'C:\\k')", 1, "", "missing mandatory parameters: Path", setAclDoc + " (-Path mandatory in ByPath)"},
		{"setacl-not-getacl-object", "admin", "Set-Acl -Path 'C:\\k' -AclObject 'x'", 1, "", "SimulatorNotModelled", setAclDoc},
		{"inheritance-disable-copies", "admin", "New-Item -ItemType Directory -Path 'C:\\d' | Out-Null\nicacls.exe 'C:\\d' /inheritance:d | Out-Null\nicacls.exe 'C:\\d'", 0, "C:\\d NT AUTHORITY\\SYSTEM:(OI)(CI)(F)\r\n", "", icaclsDoc + " (/inheritance:d copies the ACEs)"},
		{"remove-and-reset", "admin", "icacls.exe 'C:\\d' /remove 'BUILTIN\\Users' | Out-Null\n(icacls.exe 'C:\\d') -join '|'\nicacls.exe 'C:\\d' /reset | Out-Null\n(icacls.exe 'C:\\d')[0]", 0, "C:\\d NT AUTHORITY\\SYSTEM:(I)(OI)(CI)(F)", "", icaclsDoc},
		{"grant-specific-rights", "admin", "icacls.exe 'C:\\d' /grant 'plain:(OI)(CI)(RD,WD)' | Out-Null\n(icacls.exe 'C:\\d')[0]", 0, "C:\\d WIN-TEST\\plain:(OI)(CI)(RD,WD)", "", icaclsDoc},
		// Refusals.
		{"unknown-principal", "admin", "icacls.exe 'C:\\k' /grant 'nosuchuser:F'\n$LASTEXITCODE", 0, "1332", "nosuchuser: No mapping between account names and security IDs was done.", "https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--1300-1699- (ERROR_NONE_MAPPED)"},
		{"bad-grant", "admin", "icacls.exe 'C:\\k' /grant 'Administrators=F'\n$LASTEXITCODE", 0, "87", "Invalid parameter", icaclsDoc},
		{"missing-file", "admin", "icacls.exe 'C:\\nope' /grant 'SYSTEM:F'\n$LASTEXITCODE", 0, "2", "The system cannot find the file specified.", icaclsDoc},
		{"deny-not-modelled", "admin", "icacls.exe 'C:\\k' /deny 'plain:W'\n$LASTEXITCODE", 0, "1", "does not model the icacls argument /deny", icaclsDoc + " (deny ACEs are real; not modelled)"},
		{"display-tree-not-modelled", "admin", "icacls.exe 'C:\\k' /t\n$LASTEXITCODE", 0, "1", "does not model icacls /T without an operation", icaclsDoc + " (displaying a tree is real; not modelled)"},
		// A standard user plants a folder before an administrator hardens it:
		// the user owns it (an owner holds WRITE_DAC implicitly), gave itself
		// an explicit ACE and planted a file; /grant:r replaces the named
		// SIDs' ACEs only, so the user keeps both.
		{"user-plants", "plain", "New-Item -ItemType Directory -Path 'C:\\planted' | Out-Null\nicacls.exe 'C:\\planted' /grant 'plain:(OI)(CI)F' | Out-Null\nSet-Content -Path 'C:\\planted\\conf' -Value 'mine'\n$LASTEXITCODE", 0, "0", "", "CREATOR OWNER; the owner's implicit WRITE_DAC"},
		{"grant-r-keeps-the-planter", "admin", "icacls.exe 'C:\\planted' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' | Out-Null\n(icacls.exe 'C:\\planted') -join '|'", 0, "WIN-TEST\\plain:(OI)(CI)(F)", "", icaclsDoc + " (/grant:r replaces the named SIDs' grants)"},
		{"planter-still-writes", "plain", "Set-Content -Path 'C:\\planted\\conf' -Value 'still mine'\nGet-Content -Path 'C:\\planted\\conf'", 0, "still mine", "", "the explicit ACE the user set"},
		// Owner first (icacls uses the restore privilege), then every
		// explicit ACE beneath dropped, then the protected DACL.
		{"user-setowner-not-modelled", "plain", "icacls.exe 'C:\\planted' /setowner 'plain'\n$LASTEXITCODE", 0, "1", "does not model icacls /setowner without an elevated token", icaclsDoc},
		{"reset-owner-and-dacl", "admin", "icacls.exe 'C:\\planted' /setowner '*S-1-5-32-544' /t /c /q | Out-Null\nicacls.exe 'C:\\planted' /reset /t /c /q | Out-Null\nicacls.exe 'C:\\planted' /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' | Out-Null\n(icacls.exe 'C:\\planted\\conf') -join '|'\n(Get-Acl -Path 'C:\\planted\\conf').Owner", 0, "C:\\planted\\conf NT AUTHORITY\\SYSTEM:(I)(F)|                BUILTIN\\Administrators:(I)(F)||Successfully processed 1 files; Failed processing 0 files\r\nBUILTIN\\Administrators", "", icaclsDoc + " (/setowner, /reset, /t)"},
		{"planter-refused-after-reset", "plain", "Set-Content -Path 'C:\\planted\\conf' -Value 'x'", 1, "", "Access to the path 'C:\\planted\\conf' is denied.", "no ACE for the user, not its owner"},
		{"planter-regrant-refused", "plain", "icacls.exe 'C:\\planted\\conf' /grant 'plain:F'\n$LASTEXITCODE", 0, "5", "Access is denied.", "WRITE_DAC: no longer the owner"},
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
