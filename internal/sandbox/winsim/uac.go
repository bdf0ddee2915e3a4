package winsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// What a filtered token (UAC, accounts.go) may not do. Every administrative
// operation the host models asks elevated(ctx) here, in one file: the
// cmdlets (guardCmdlets), the native programs (guardProgram), and the file
// writes of PowerShell, cmd.exe and SFTP (Host.checkWrite). A cmdlet or
// program this file does not classify is refused to a filtered token: the
// simulator never lets one succeed that Windows might refuse.

// cmdletNeeds says what a host cmdlet needs of the token. A cmdlet missing
// from it is refused to a filtered token (TestUACClassifiesEveryCmdlet
// keeps it complete).
var cmdletNeeds = map[string]cmdletNeed{
	// Reads.
	"Get-Content": needNothing, "Test-Path": needNothing, "Get-FileHash": needNothing, "Join-Path": needNothing,
	// HNS's readers need an administrator (HNS's API refuses others).
	"Get-HnsNetwork": needAdmin, "Get-HnsEndpoint": needAdmin, "Get-HnsPolicyList": needAdmin,
	"Get-Service": needNothing, "Get-HotFix": needNothing, "Get-ItemProperty": needNothing, "Get-ItemPropertyValue": needNothing,
	"Get-WindowsFeature": needNothing, "Get-NetFirewallRule": needNothing, "Get-NetFirewallPortFilter": needNothing,
	"Test-NetConnection": needNothing,
	// Start-Process starts a program with the caller's token: guardProgram
	// judges the program.
	"Start-Process": needNothing,
	// Writes of paths: a filtered token may write its profile, C:\k...,
	// not C:\Windows, C:\Program Files or C:\ProgramData.
	"Set-Content": needPathWrite, "Add-Content": needPathWrite, "New-Item": needPathWrite, "Remove-Item": needPathWrite,
	"Move-Item": needPathWrite, "Copy-Item": needPathWrite, "Expand-Archive": needPathWrite, "Invoke-WebRequest": needPathWrite,
	// The service control manager: creating, changing, starting and
	// stopping a service needs an administrator (the default service
	// security descriptor; see doc.go).
	"New-Service": needAdmin, "Set-Service": needAdmin, "Start-Service": needAdmin, "Stop-Service": needAdmin, "Restart-Service": needAdmin,
	// Features, capabilities, the firewall, restarts.
	"Install-WindowsFeature": needAdmin, "Add-WindowsCapability": needAdmin, "New-NetFirewallRule": needAdmin, "Set-NetFirewallRule": needAdmin,
	"Restart-Computer": needAdmin, "Stop-Computer": needAdmin,
	// The machine's certificate store and the WinRM configuration: both
	// need an administrator (Cert:\LocalMachine\My's private keys, and
	// winrm/config's default security descriptor, Administrators only).
	"New-SelfSignedCertificate": needAdmin, "Get-WSManInstance": needAdmin, "New-WSManInstance": needAdmin, "Set-WSManInstance": needAdmin, "Remove-WSManInstance": needAdmin,
	// The security descriptor's own checks: Get-Acl needs READ_CONTROL,
	// Set-Acl WRITE_DAC on the object, for any token (pscmdlets_acl.go),
	// as icacls.exe is left to its own checks (guardProgram below).
	"Get-Acl": needNothing, "Set-Acl": needNothing,
	// The time zone: Set-TimeZone needs SeTimeZonePrivilege, which the
	// "Change the time zone" user right grants Administrators and Users by
	// default, so a filtered token has it too
	// (https://learn.microsoft.com/previous-versions/windows/it-pro/windows-10/security/threat-protection/security-policy-settings/change-the-time-zone).
	"Get-TimeZone": needNothing, "Set-TimeZone": needNothing,
}

type cmdletNeed int

const (
	needUnclassified cmdletNeed = iota
	needNothing
	needPathWrite
	needAdmin
)

// pathParams are the parameters naming what a path-writing cmdlet writes.
var writtenPathParams = []string{"Path", "LiteralPath", "Destination", "DestinationPath", "OutFile"}

// guardCmdlets makes every host cmdlet (not the engine's own, which touch no
// host state but through psHost) consult the session's token first.
func guardCmdlets(cmds []*Cmdlet) []*Cmdlet {
	for _, c := range cmds {
		run, need := c.Run, cmdletNeeds[c.Name]
		c.Run = func(call *Call) error {
			ctx := ps(call).ctx
			if elevated(ctx) || need == needNothing {
				return run(call)
			}
			if need == needPathWrite {
				h := ps(call).h
				for _, n := range writtenPathParams {
					for _, s := range pathStrings(call.Value(n)) {
						if err := h.checkPathWrite(ctx, call, n, s); err != nil {
							return call.Error(deniedRecord(call, s, err))
						}
					}
				}
				return run(call)
			}
			return call.Error(deniedRecord(call, "", errAccessDenied))
		}
	}
	return cmds
}

// checkPathWrite judges what a path-writing cmdlet does to the path its
// parameter param names: New-Item -ItemType Directory creates a directory,
// Remove-Item deletes, the others write a file (acl.go).
func (h *Host) checkPathWrite(ctx context.Context, call *Call, param, path string) error {
	if isRegistry(path) {
		return h.checkWrite(ctx, path)
	}
	clean := h.fs.Clean(path)
	switch {
	case call.Cmd.Name == "New-Item" && strings.EqualFold(pwsh.Text(call.Value("ItemType")), "Directory"):
		if err := h.checkCreate(ctx, clean, true); err != nil {
			return err
		}
		return nil
	case call.Cmd.Name == "Remove-Item":
		return h.checkDelete(ctx, clean)
	}
	return h.checkWrite(ctx, path)
}

// pathStrings are the paths a path parameter's value names.
func pathStrings(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, pathStrings(e)...)
		}
		return out
	}
	return []string{pwsh.Text(v)}
}

// deniedRecord is the error record Windows PowerShell writes when a cmdlet
// is refused access: UnauthorizedAccessException for a path, the registry's
// SecurityException, ServiceCommandException for a service cmdlet, and the
// COM E_ACCESSDENIED (0x80070005) otherwise.
func deniedRecord(c *Call, target string, err error) *pwsh.ErrorRecord {
	if e := (*pathDenied)(nil); errors.As(err, &e) {
		return c.Fail(e.Error(), "PermissionDenied", e.path, "UnauthorizedAccessException", c.Cmd.Name[:strings.IndexByte(c.Cmd.Name, '-')]+"ItemUnauthorizedAccessError", "System.UnauthorizedAccessException")
	}
	if errors.Is(err, errRegistryDenied) {
		return c.Fail(err.Error(), "PermissionDenied", target, "SecurityException", "System.Security.SecurityException", "System.Security.SecurityException")
	}
	if strings.HasSuffix(c.Cmd.Name, "-Service") {
		name := pwsh.Text(c.Value("Name"))
		verb := map[string]string{"New": "created", "Set": "configured", "Start": "started", "Stop": "stopped", "Restart": "stopped"}[c.Cmd.Name[:strings.IndexByte(c.Cmd.Name, '-')]]
		return c.Fail(fmt.Sprintf("Service '%s' cannot be %s due to the following error: Access is denied", name, verb),
			"PermissionDenied", name, "ServiceCommandException", "CouldNotAccessService", "Microsoft.PowerShell.Commands.ServiceCommandException")
	}
	return c.Fail("Access is denied. (Exception from HRESULT: 0x80070005 (E_ACCESSDENIED))", "PermissionDenied", target,
		"UnauthorizedAccessException", "System.UnauthorizedAccessException", "System.UnauthorizedAccessException")
}

// programNeeds says, for a program's identity and arguments, whether it
// needs an administrator's token. A program missing from it is refused to
// a filtered token.
var programNeeds = map[string]func(h *Host, args []string) bool{
	// The token passes on to the child: what it runs is judged there.
	"powershell.exe": func(*Host, []string) bool { return false },
	"cmd.exe":        func(*Host, []string) bool { return false },
	"hostname.exe":   func(*Host, []string) bool { return false },
	// sc.exe's queries need SC_MANAGER_CONNECT and SERVICE_QUERY_*, which
	// Authenticated Users hold; everything else needs an administrator.
	"sc.exe": func(_ *Host, args []string) bool {
		return len(args) == 0 || !containsFold([]string{"query", "queryex", "qc", "qdescription", "qfailure", "getdisplayname", "getkeyname"}, args[0])
	},
	// tar.exe writes where -C points (or the working directory).
	"tar.exe": func(h *Host, args []string) bool {
		for i, a := range args {
			if a == "-C" && i+1 < len(args) {
				return protectedPath(h.fs.Clean(args[i+1]))
			}
		}
		return false
	},
	// icacls judges each change against the object's DACL itself
	// (WRITE_DAC, programs_icacls.go).
	"icacls.exe": func(*Host, []string) bool { return false },
}

// guardProgram refuses to start a program a filtered token may not run, as
// the program itself fails: sysprep.exe's manifest requires an
// administrator (CreateProcess fails with ERROR_ELEVATION_REQUIRED, 740),
// sc.exe reports its failed OpenSCManager/OpenService, anything else
// "Access is denied." with exit code 5. ok is true when it may run.
func (h *Host) guardProgram(ctx context.Context, identity string, args []string, stderr io.Writer) (code int, ok bool) {
	if elevated(ctx) {
		return 0, true
	}
	if need, known := programNeeds[identity]; known && !need(h, args) {
		return 0, true
	}
	switch identity {
	case "sysprep.exe":
		_, _ = io.WriteString(stderr, "The requested operation requires elevation.\r\n")
		return 740, false
	case "sc.exe":
		call := "OpenService"
		if len(args) > 0 && strings.EqualFold(args[0], "create") {
			call = "OpenSCManager"
		}
		fmt.Fprintf(stderr, "[SC] %s FAILED 5:\r\n\r\nAccess is denied.\r\n\r\n", call)
		return 5, false
	case "reg.exe":
		_, _ = io.WriteString(stderr, "ERROR: Access is denied.\r\n")
		return 1, false
	}
	_, _ = io.WriteString(stderr, "Access is denied.\r\n")
	return 5, false
}
