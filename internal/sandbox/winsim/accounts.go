package winsim

import (
	"context"
	"errors"
	"strings"
)

// LocalAccount is a local user account other than the built-in Administrator
// (HostConfig.AdminUser, RID 500 whatever its name): what a template's disk
// carries when someone added users to it.
type LocalAccount struct {
	Name     string
	Password string
	Groups   []string // local groups, e.g. "Administrators"
}

// Local groups the simulator knows.
const groupAdministrators = "Administrators"

// PolicySystemKey holds UAC's policy values (LocalAccountTokenFilterPolicy,
// FilterAdministratorToken, EnableLUA).
const PolicySystemKey = `HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System`

// account is one local account as a logon sees it.
type account struct {
	name     string
	password string
	rid500   bool // the built-in Administrator
	admin    bool // member of Administrators
}

// account finds a local account by a logon name (a bare name, COMPUTER\name,
// .\name or name@domain). The built-in Administrator is whatever
// HostConfig.AdminUser names: renaming it keeps its RID.
func (h *Host) account(user string) (account, bool) {
	name := accountName(user)
	if name == "" {
		return account{}, false
	}
	if equalFold(name, h.cfg.AdminUser) {
		return account{name: h.cfg.AdminUser, password: h.cfg.AdminPassword, rid500: true, admin: true}, true
	}
	for _, a := range h.cfg.LocalAccounts {
		if equalFold(name, a.Name) {
			return account{name: a.Name, password: a.Password, admin: containsFold(a.Groups, groupAdministrators)}, true
		}
	}
	return account{}, false
}

// checkPassword reports whether user's password is password (Faults.FailAuth
// fails every check).
func (h *Host) checkPassword(user, password string) (account, bool) {
	a, ok := h.account(user)
	if !ok || h.authFails() || password != a.password {
		return account{}, false
	}
	return a, true
}

// token is the access token of a logon session: who, and whether it holds
// the Administrators group enabled (an elevated token) or filtered (UAC's
// standard-user token).
type token struct {
	user     string
	elevated bool
	// network: a network logon's (WinRM, SSH), which the Windows Update
	// Agent refuses its downloader and installer to (wua.go).
	network bool
}

type tokenKey struct{}

// withToken runs what ctx carries under t.
func withToken(ctx context.Context, t token) context.Context {
	return context.WithValue(ctx, tokenKey{}, t)
}

// elevated reports whether the session ctx runs in holds an elevated token.
// The operations the simulator models as administrative consult it (uac.go).
// A context without a logon is the system's own (a service started by the
// service control manager runs as LocalSystem): elevated.
func elevated(ctx context.Context) bool {
	t, ok := ctx.Value(tokenKey{}).(token)
	return !ok || t.elevated
}

// networkToken is the token a network logon (WinRM, SSH) of a gets. UAC
// remote restrictions: a local administrator other than the built-in
// Administrator gets a filtered token unless LocalAccountTokenFilterPolicy
// is 1; the built-in Administrator gets a full token unless
// FilterAdministratorToken is 1 (Admin Approval Mode for it; default 0).
// Sources in doc.go ("UAC remote restrictions").
func (h *Host) networkToken(a account) token {
	t := token{user: a.name, network: true}
	switch {
	case !a.admin:
	case h.policy("LocalAccountTokenFilterPolicy") == 1:
		t.elevated = true
	case a.rid500:
		t.elevated = h.policy("FilterAdministratorToken") != 1
	}
	return t
}

// policy reads a DWORD under PolicySystemKey (0 when absent).
func (h *Host) policy(name string) uint32 {
	v, ok := h.reg.get(PolicySystemKey, name)
	if !ok || v.Type != RegDWord {
		return 0
	}
	return v.DWord
}

// logonContext is ctx under the token of req's logon: WinRM and SSH are
// network logons. Other requests (a process a script started, a guest
// operation, whose logon GuestLogon admits) keep the token ctx has.
func (h *Host) logonContext(ctx context.Context, req execRequest) context.Context {
	switch req.Transport {
	case "winrm-http", "winrm-https", "ssh":
		a, ok := h.account(req.User)
		if !ok {
			return withToken(ctx, token{user: req.User, network: true})
		}
		return withToken(ctx, h.networkToken(a))
	}
	return ctx
}

// errAccessDenied is ERROR_ACCESS_DENIED (5, HRESULT 0x80070005).
var errAccessDenied = &ErrorCode{Code: 5, Message: "Access is denied."}

// protectedPath reports whether path is under C:\Windows, C:\Program
// Files, C:\Program Files (x86) or C:\ProgramData, whose default DACLs
// (acl.go) give a standard user read and execute only: what a program
// without its own access checks (tar.exe -C) is judged by.
func protectedPath(clean string) bool {
	l := strings.ToLower(clean)
	for _, p := range []string{`c:\windows`, `c:\program files`, `c:\program files (x86)`, `c:\programdata`} {
		if l == p || strings.HasPrefix(l, p+`\`) {
			return true
		}
	}
	return false
}

// checkWrite refuses a write of path (a file path or an HKLM key) that
// ctx's token may not make: nil when it may. An HKLM key needs an elevated
// token; a file is judged by its DACL (acl.go).
func (h *Host) checkWrite(ctx context.Context, path string) error {
	if isRegistry(path) || strings.HasPrefix(strings.ToUpper(normKey(path)), `HKLM`) {
		if elevated(ctx) {
			return nil
		}
		return errRegistryDenied
	}
	return h.checkFileWrite(ctx, h.fs.Clean(path))
}

// errRegistryDenied is .NET's SecurityException for a registry write the
// token may not make.
var errRegistryDenied = errors.New("Requested registry access is not allowed.")

// pathDenied is .NET's UnauthorizedAccessException for a file.
type pathDenied struct{ path string }

func (e *pathDenied) Error() string { return "Access to the path '" + e.path + "' is denied." }

// AccessDenied tells the PowerShell engine the error is
// UnauthorizedAccessException, not a missing file.
func (e *pathDenied) AccessDenied() bool { return true }

// userProfile moves a logon's environment (env, upper-case names, as the
// host's disk holds the built-in Administrator's) to the profile of the
// account ctx's token is for, C:\Users\<name>, made at its first logon.
func (h *Host) userProfile(ctx context.Context, env map[string]string) {
	t, ok := ctx.Value(tokenKey{}).(token)
	if !ok || t.user == "" || equalFold(t.user, h.cfg.AdminUser) {
		return
	}
	from, to := `C:\Users\`+h.cfg.AdminUser, `C:\Users\`+t.user
	for _, n := range []string{"USERPROFILE", "HOMEPATH", "TEMP", "TMP", "APPDATA", "LOCALAPPDATA"} {
		env[n] = strings.Replace(env[n], from, to, 1)
		env[n] = strings.Replace(env[n], `\Users\`+h.cfg.AdminUser, `\Users\`+t.user, 1)
	}
	env["USERNAME"] = t.user
	_ = h.fs.MkdirAll(env["TEMP"])
}
