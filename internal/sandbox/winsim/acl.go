package winsim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The file system's security model: every file and directory has an owner
// and a DACL, read and written by icacls (programs_icacls.go) and
// Get-Acl/Set-Acl (pscmdlets_acl.go), and checked on every read and write a
// logon's token makes (accounts.go, uac.go).
//
// What is modelled, with its source:
//   - ACEs are access-allowed ACEs: a SID, an access mask and the
//     inheritance flags OI, CI, IO, NP ("ACE_HEADER",
//     learn.microsoft.com/windows/win32/api/winnt/ns-winnt-ace_header).
//     Deny ACEs are not modelled: icacls /deny and a Deny rule of Set-Acl are
//     refused.
//   - Inheritance ("ACE inheritance rules", learn.microsoft.com/windows/win32/
//     secauthz/ace-inheritance-rules; "Automatic propagation of inheritable
//     ACEs", .../secauthz/automatic-propagation-of-inheritable-aces): a file
//     inherits its parent's OI ACEs as effective ACEs; a directory inherits
//     CI ACEs as effective (inheritable on unless NP) and OI-only ACEs as
//     inherit-only (unless NP); CREATOR OWNER in an effective inherited ACE
//     is the object's owner. Windows copies the inherited ACEs into each
//     child and re-propagates them whenever a parent's DACL changes
//     (SetNamedSecurityInfo, which icacls and Set-Acl call); the simulator
//     computes them from the parent at every read, which is the same result.
//     A protected DACL (icacls /inheritance:d|r, SetAccessRuleProtection)
//     inherits nothing.
//   - Access checks ("How DACLs control access to an object",
//     learn.microsoft.com/windows/win32/secauthz/how-dacls-control-access-to-an-object):
//     the rights of every ACE whose SID the token holds enabled add up; the
//     owner holds READ_CONTROL and WRITE_DAC implicitly. A filtered token
//     holds Administrators deny-only: no allow ACE for it applies. Traversal
//     is not checked (every account holds SeChangeNotifyPrivilege, "Bypass
//     traverse checking", learn.microsoft.com/previous-versions/windows/
//     it-pro/windows-10/security/threat-protection/security-policy-settings/
//     bypass-traverse-checking).
//   - Default DACLs of a Windows Server 2022 system drive (icacls output of a
//     stock install, as Microsoft's "icacls" reference prints its format):
//     C:\ gives SYSTEM and Administrators full control, Users read and
//     execute, Users "create folders / append data" (CI)(AD) and "create
//     files" (CI)(IO)(WD) beneath, CREATOR OWNER full control of what a user
//     creates; a folder made at C:\ (C:\k, C:\etc) inherits all of it. So
//     before hardening, any local user reads files under C:\k and creates
//     files in it. C:\Windows, C:\Program Files (x86), C:\Program Files and
//     C:\ProgramData are protected: SYSTEM and Administrators full control,
//     Users read and execute (TrustedInstaller's ownership of system files,
//     and ProgramData's "Users may create folders" ACE, are not modelled:
//     a user is refused there). C:\Windows\Temp lets Users create files and
//     folders (CI)(S,WD,AD,X); C:\Users gives Users and Everyone read and
//     execute; a profile C:\Users\<name> gives its user, SYSTEM and
//     Administrators full control, nobody else anything.
//   - Owners: objects an administrator's elevated token or LocalSystem
//     creates belong to BUILTIN\Administrators ("System objects: Default
//     owner for objects created by members of the Administrators group",
//     learn.microsoft.com/previous-versions/windows/it-pro/windows-10/
//     security/threat-protection/security-policy-settings/system-objects-
//     default-owner-for-objects-created-by-members-of-the-administrators-group);
//     any other token's objects belong to its user.
//
//   - Changing an owner: icacls /setowner with an elevated token (the
//     restore privilege; programs_icacls.go), to any account.
//
// Not modelled (refused where a command asks for them): deny ACEs, SACLs
// and integrity labels, icacls /save /restore /substitute /findsid /verify
// /setintegritylevel, /setowner by a token that is not elevated, Set-Acl
// changing an owner.

// Access rights of files and directories (winnt.h; icacls' abbreviations).
const (
	rightRD   uint32 = 0x1      // FILE_READ_DATA / FILE_LIST_DIRECTORY
	rightWD   uint32 = 0x2      // FILE_WRITE_DATA / FILE_ADD_FILE
	rightAD   uint32 = 0x4      // FILE_APPEND_DATA / FILE_ADD_SUBDIRECTORY
	rightREA  uint32 = 0x8      // FILE_READ_EA
	rightWEA  uint32 = 0x10     // FILE_WRITE_EA
	rightX    uint32 = 0x20     // FILE_EXECUTE / FILE_TRAVERSE
	rightDC   uint32 = 0x40     // FILE_DELETE_CHILD
	rightRA   uint32 = 0x80     // FILE_READ_ATTRIBUTES
	rightWA   uint32 = 0x100    // FILE_WRITE_ATTRIBUTES
	rightDE   uint32 = 0x10000  // DELETE
	rightRC   uint32 = 0x20000  // READ_CONTROL
	rightWDAC uint32 = 0x40000  // WRITE_DAC
	rightWO   uint32 = 0x80000  // WRITE_OWNER
	rightS    uint32 = 0x100000 // SYNCHRONIZE

	maskF  uint32 = 0x1F01FF // FILE_ALL_ACCESS
	maskM  uint32 = 0x1301BF // modify: read, write, execute, delete
	maskRX uint32 = 0x1200A9 // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE
	maskR  uint32 = 0x120089 // FILE_GENERIC_READ
	maskW  uint32 = 0x100116 // FILE_GENERIC_WRITE without READ_CONTROL
	maskD  uint32 = rightDE
)

// simpleRights are icacls' simple rights, as it prints and parses them.
var simpleRights = []struct {
	name string
	mask uint32
}{{"F", maskF}, {"M", maskM}, {"RX", maskRX}, {"R", maskR}, {"W", maskW}, {"D", maskD}}

// specificRights are icacls' specific rights, in the order it prints them.
var specificRights = []struct {
	name string
	mask uint32
}{{"DE", rightDE}, {"RC", rightRC}, {"WDAC", rightWDAC}, {"WO", rightWO}, {"S", rightS},
	{"RD", rightRD}, {"WD", rightWD}, {"AD", rightAD}, {"REA", rightREA}, {"WEA", rightWEA},
	{"X", rightX}, {"DC", rightDC}, {"RA", rightRA}, {"WA", rightWA}}

// ACE flags (ACE_HEADER.AceFlags).
const (
	aceOI uint8 = 0x1 // OBJECT_INHERIT_ACE
	aceCI uint8 = 0x2 // CONTAINER_INHERIT_ACE
	aceNP uint8 = 0x4 // NO_PROPAGATE_INHERIT_ACE
	aceIO uint8 = 0x8 // INHERIT_ONLY_ACE
)

// Well-known SIDs ("Well-known SIDs", learn.microsoft.com/windows/win32/secauthz/well-known-sids).
const (
	sidSystem           = "S-1-5-18"
	sidAdministrators   = "S-1-5-32-544"
	sidUsers            = "S-1-5-32-545"
	sidAuthenticated    = "S-1-5-11"
	sidEveryone         = "S-1-1-0"
	sidCreatorOwner     = "S-1-3-0"
	sidTrustedInstaller = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
	// machineSID is the simulated computer's account domain: its local
	// accounts are machineSID-<RID> (the built-in Administrator 500, the
	// others from 1000 as Windows numbers them).
	machineSID = "S-1-5-21-3623811015-3361044348-30300820"
)

var wellKnownNames = map[string]string{
	sidSystem: `NT AUTHORITY\SYSTEM`, sidAdministrators: `BUILTIN\Administrators`, sidUsers: `BUILTIN\Users`,
	sidAuthenticated: `NT AUTHORITY\Authenticated Users`, sidEveryone: "Everyone", sidCreatorOwner: "CREATOR OWNER",
	sidTrustedInstaller: `NT SERVICE\TrustedInstaller`,
}

// ace is one access-allowed ACE.
type ace struct {
	SID       string `json:"sid"`
	Mask      uint32 `json:"mask"`
	Flags     uint8  `json:"flags,omitempty"`
	Inherited bool   `json:"inherited,omitempty"`
}

// secDesc is an object's owner and DACL. A stored one holds the explicit
// ACEs only; an effective one (Host.security) the inherited ones too.
type secDesc struct {
	Owner     string `json:"owner,omitempty"`
	Protected bool   `json:"protected,omitempty"`
	ACEs      []ace  `json:"aces,omitempty"`
}

func (s *secDesc) clone() *secDesc {
	c := *s
	c.ACEs = append([]ace(nil), s.ACEs...)
	return &c
}

// aclStore keeps the security descriptors set on the disk (by icacls,
// Set-Acl, or an owner recorded at creation), by lower-case clean path, in
// <Dir>/fs/acl.json: beside the drives, so a clone's disk copy takes it along.
type aclStore struct {
	mu   sync.Mutex
	path string
	sd   map[string]*secDesc
}

func loadACLStore(root string) *aclStore {
	s := &aclStore{path: filepath.Join(root, "acl.json"), sd: map[string]*secDesc{}}
	if b, err := os.ReadFile(s.path); err == nil {
		_ = json.Unmarshal(b, &s.sd) // a damaged file: the defaults
	}
	return s
}

func (s *aclStore) get(clean string) (*secDesc, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sd, ok := s.sd[strings.ToLower(clean)]
	if !ok {
		return nil, false
	}
	return sd.clone(), true
}

func (s *aclStore) set(clean string, sd *secDesc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sd[strings.ToLower(clean)] = sd.clone()
	return s.saveLocked()
}

// forget drops what was stored for clean and everything beneath it (the
// objects were deleted), or moves it to newPath (renamed).
func (s *aclStore) forget(clean, newPath string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := strings.ToLower(clean)
	changed := false
	for k, sd := range s.sd {
		if k == l || strings.HasPrefix(k, l+`\`) {
			delete(s.sd, k)
			if newPath != "" {
				s.sd[strings.ToLower(newPath)+k[len(l):]] = sd
			}
			changed = true
		}
	}
	if changed {
		_ = s.saveLocked()
	}
}

func (s *aclStore) saveLocked() error {
	b, err := json.MarshalIndent(s.sd, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(s.path, b, 0o644)
}

// builtinSecurity is the DACL Windows Server ships on the folders named
// in this file's comment, for a lower-case clean path.
func (h *Host) builtinSecurity(l string) (*secDesc, bool) {
	full := func(sid string) ace { return ace{SID: sid, Mask: maskF, Flags: aceOI | aceCI} }
	creator := ace{SID: sidCreatorOwner, Mask: maskF, Flags: aceOI | aceCI | aceIO}
	switch l {
	case `c:\`:
		return &secDesc{Owner: sidTrustedInstaller, Protected: true, ACEs: []ace{
			full(sidSystem), full(sidAdministrators), {SID: sidUsers, Mask: maskRX, Flags: aceOI | aceCI},
			{SID: sidUsers, Mask: rightAD, Flags: aceCI}, {SID: sidUsers, Mask: rightWD, Flags: aceCI | aceIO}, creator}}, true
	case `c:\windows`, `c:\program files`, `c:\program files (x86)`, `c:\programdata`:
		return &secDesc{Owner: sidTrustedInstaller, Protected: true, ACEs: []ace{
			full(sidSystem), full(sidAdministrators), {SID: sidUsers, Mask: maskRX, Flags: aceOI | aceCI}, creator}}, true
	case `c:\windows\temp`:
		return &secDesc{Owner: sidSystem, Protected: true, ACEs: []ace{
			creator, full(sidSystem), full(sidAdministrators), {SID: sidUsers, Mask: rightS | rightWD | rightAD | rightX, Flags: aceCI}}}, true
	case `c:\users`:
		return &secDesc{Owner: sidSystem, Protected: true, ACEs: []ace{
			full(sidSystem), full(sidAdministrators), {SID: sidUsers, Mask: maskRX, Flags: aceOI | aceCI},
			{SID: sidEveryone, Mask: maskRX, Flags: aceOI | aceCI}}}, true
	}
	if rest, ok := strings.CutPrefix(l, `c:\users\`); ok && !strings.Contains(rest, `\`) {
		if sid, ok := h.accountSID(rest); ok {
			return &secDesc{Owner: sid, Protected: true, ACEs: []ace{full(sidSystem), full(sidAdministrators), full(sid)}}, true
		}
	}
	return nil, false
}

// security is the effective security descriptor of a clean path: its
// explicit ACEs, then (unless protected) those its parent passes on.
func (h *Host) security(clean string) *secDesc {
	l := strings.ToLower(clean)
	stored, ok := h.fs.acls.get(clean)
	if builtin, bok := h.builtinSecurity(l); bok {
		if !ok {
			stored, ok = builtin, true
		} else if stored.Owner == "" {
			stored.Owner = builtin.Owner
		}
	}
	if l == `c:\` {
		return stored
	}
	if !ok {
		stored = &secDesc{}
	}
	if stored.Owner == "" {
		stored.Owner = sidAdministrators
	}
	if stored.Protected {
		return stored
	}
	_, dir := h.fs.Stat(clean)
	parent := h.security(parentOf(clean))
	stored.ACEs = append(stored.ACEs, inheritedACEs(parent.ACEs, dir, stored.Owner)...)
	return stored
}

// inheritedACEs are the ACEs a child (a directory or a file) owned by owner
// inherits from its parent's ACEs (ACE inheritance rules).
func inheritedACEs(parent []ace, dir bool, owner string) []ace {
	var out []ace
	for _, a := range parent {
		if a.Flags&(aceOI|aceCI) == 0 {
			continue
		}
		np := a.Flags&aceNP != 0
		var effective, inheritOnly *ace
		switch {
		case !dir && a.Flags&aceOI != 0:
			effective = &ace{SID: a.SID, Mask: a.Mask}
		case dir && a.Flags&aceCI != 0:
			if np {
				effective = &ace{SID: a.SID, Mask: a.Mask}
			} else {
				effective = &ace{SID: a.SID, Mask: a.Mask, Flags: a.Flags &^ aceIO}
			}
		case dir && a.Flags&aceOI != 0 && !np:
			inheritOnly = &ace{SID: a.SID, Mask: a.Mask, Flags: a.Flags | aceIO}
		}
		if effective != nil && effective.SID == sidCreatorOwner {
			// The creator's ACE applies to the owner; an inheritable one
			// stays CREATOR OWNER, inherit-only, for the children.
			if effective.Flags&(aceOI|aceCI) != 0 {
				inheritOnly = &ace{SID: sidCreatorOwner, Mask: a.Mask, Flags: effective.Flags | aceIO}
			}
			effective = &ace{SID: owner, Mask: a.Mask}
		}
		for _, e := range []*ace{effective, inheritOnly} {
			if e != nil {
				e.Inherited = true
				out = append(out, *e)
			}
		}
	}
	return out
}

// tokenSIDs are the SIDs enabled in ctx's token (for allow ACEs): a
// context without a logon is LocalSystem's.
func (h *Host) tokenSIDs(ctx context.Context) []string {
	t, ok := ctx.Value(tokenKey{}).(token)
	if !ok {
		return []string{sidSystem, sidAdministrators, sidEveryone, sidAuthenticated}
	}
	sids := []string{sidEveryone, sidAuthenticated, sidUsers}
	if sid, ok := h.accountSID(t.user); ok {
		sids = append(sids, sid)
	}
	if t.elevated {
		sids = append(sids, sidAdministrators)
	}
	return sids
}

// ownerFor is the owner of an object ctx's token creates.
func (h *Host) ownerFor(ctx context.Context) string {
	t, ok := ctx.Value(tokenKey{}).(token)
	if !ok || t.elevated {
		return sidAdministrators
	}
	if sid, ok := h.accountSID(t.user); ok {
		return sid
	}
	return sidAdministrators
}

// granted is the access mask ctx's token holds on a clean path.
func (h *Host) granted(ctx context.Context, clean string) uint32 {
	sd := h.security(clean)
	sids := h.tokenSIDs(ctx)
	var mask uint32
	if containsFold(sids, sd.Owner) {
		mask |= rightRC | rightWDAC
	}
	for _, a := range sd.ACEs {
		if a.Flags&aceIO == 0 && containsFold(sids, a.SID) {
			mask |= a.Mask
		}
	}
	return mask
}

// allowed reports whether ctx's token holds every right of want on clean.
func (h *Host) allowed(ctx context.Context, clean string, want uint32) bool {
	return h.granted(ctx, clean)&want == want
}

// checkRead refuses reading a file (or listing a directory) the token may
// not read; a missing path is the caller's to report.
func (h *Host) checkRead(ctx context.Context, path string) error {
	clean := h.fs.Clean(path)
	if ok, _ := h.fs.Stat(clean); ok && !h.allowed(ctx, clean, rightRD) {
		return &pathDenied{path: clean}
	}
	return nil
}

// checkFileWrite judges writing a file: an existing one needs
// FILE_WRITE_DATA on it (a directory: FILE_ADD_FILE, something is written
// into it); a new one FILE_ADD_FILE on its directory, or
// FILE_ADD_SUBDIRECTORY on the nearest existing ancestor when directories
// are created on the way.
func (h *Host) checkFileWrite(ctx context.Context, clean string) error {
	if ok, _ := h.fs.Stat(clean); ok {
		if !h.allowed(ctx, clean, rightWD) {
			return &pathDenied{path: clean}
		}
		return nil
	}
	return h.checkCreate(ctx, clean, false)
}

// checkCreate judges creating clean (a directory when dir), which does not
// exist yet, and records the owner a non-administrator's object gets.
func (h *Host) checkCreate(ctx context.Context, clean string, dir bool) error {
	if ok, _ := h.fs.Stat(clean); ok {
		return nil
	}
	parent := parentOf(clean)
	want := rightWD
	if dir {
		want = rightAD
	}
	created := []string{clean} // and the missing directories above it
	for {
		if ok, _ := h.fs.Stat(parent); ok || len(parent) <= 3 {
			break
		}
		created = append(created, parent)
		parent, want = parentOf(parent), rightAD
	}
	if !h.allowed(ctx, parent, want) {
		return &pathDenied{path: clean}
	}
	// Each object created is its creator's, the missing directories above
	// it too (New-Item -Force, MkdirAll).
	if owner := h.ownerFor(ctx); owner != sidAdministrators {
		for _, c := range created {
			_ = h.fs.acls.set(c, &secDesc{Owner: owner})
		}
	}
	return nil
}

// checkDelete judges deleting clean: DELETE on it, or FILE_DELETE_CHILD on
// its directory.
func (h *Host) checkDelete(ctx context.Context, clean string) error {
	if ok, _ := h.fs.Stat(clean); !ok {
		return nil
	}
	if h.allowed(ctx, clean, rightDE) || h.allowed(ctx, parentOf(clean), rightDC) {
		return nil
	}
	return &pathDenied{path: clean}
}

// accountSID is a local account's SID, by a logon or principal name.
func (h *Host) accountSID(name string) (string, bool) {
	n := accountName(name)
	if equalFold(n, h.cfg.AdminUser) {
		return machineSID + "-500", true
	}
	for i, a := range h.cfg.LocalAccounts {
		if equalFold(n, a.Name) {
			return machineSID + "-" + strconv.Itoa(1000+i), true
		}
	}
	return "", false
}

// sidName is how icacls and Get-Acl name a SID: DOMAIN\name, or the SID
// itself when no account has it.
func (h *Host) sidName(sid string) string {
	if n, ok := wellKnownNames[sid]; ok {
		return n
	}
	if rid, ok := strings.CutPrefix(sid, machineSID+"-"); ok {
		if rid == "500" {
			return h.cfg.ComputerName + `\` + h.cfg.AdminUser
		}
		if i, err := strconv.Atoi(rid); err == nil && i >= 1000 && i-1000 < len(h.cfg.LocalAccounts) {
			return h.cfg.ComputerName + `\` + h.cfg.LocalAccounts[i-1000].Name
		}
	}
	return sid
}

var sidPattern = regexp.MustCompile(`^S-1-\d+(-\d+)*$`)

// lookupPrincipal is LookupAccountName for the names the simulator knows
// (well-known groups by their names with or without their domain, local
// accounts bare, .\name or COMPUTER\name) and "*S-1-..." SIDs.
func (h *Host) lookupPrincipal(name string) (string, bool) {
	if s, ok := strings.CutPrefix(name, "*"); ok {
		s = strings.ToUpper(s)
		return s, sidPattern.MatchString(s)
	}
	for sid, full := range wellKnownNames {
		_, short, _ := strings.Cut(full, `\`)
		if equalFold(name, full) || (short != "" && equalFold(name, short)) {
			return sid, true
		}
	}
	dom, user, ok := strings.Cut(name, `\`)
	if ok && dom != "." && !equalFold(dom, h.cfg.ComputerName) {
		return "", false
	}
	if !ok {
		user = name
	}
	return h.accountSID(user)
}

// setSecurity stores the explicit part of an effective descriptor and
// tells watchers nothing: a DACL is no content.
func (h *Host) setSecurity(clean string, sd *secDesc) error {
	var explicit []ace
	for _, a := range sd.ACEs {
		if !a.Inherited {
			explicit = append(explicit, a)
		}
	}
	return h.fs.acls.set(clean, &secDesc{Owner: sd.Owner, Protected: sd.Protected, ACEs: canonical(explicit)})
}

// canonical orders explicit ACEs as icacls keeps them (grants in the order
// given; there are no denials to put first) and merges an ACE into an
// earlier one for the same SID and flags.
func canonical(aces []ace) []ace {
	var out []ace
	for _, a := range aces {
		merged := false
		for i := range out {
			if out[i].SID == a.SID && out[i].Flags == a.Flags {
				out[i].Mask |= a.Mask
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, a)
		}
	}
	return out
}

// rightsText is icacls' display of a mask: one simple right when the mask is
// exactly one, else the specific rights.
func rightsText(mask uint32) string {
	if mask == 0 {
		return "(N)"
	}
	for _, s := range simpleRights {
		if s.mask == mask {
			return "(" + s.name + ")"
		}
	}
	var names []string
	for _, s := range specificRights {
		if mask&s.mask != 0 {
			names = append(names, s.name)
		}
	}
	return "(" + strings.Join(names, ",") + ")"
}

// flagsText is icacls' display of an ACE's flags: (I) first, then OI CI IO NP.
func flagsText(a ace) string {
	var b strings.Builder
	if a.Inherited {
		b.WriteString("(I)")
	}
	for _, f := range []struct {
		bit  uint8
		name string
	}{{aceOI, "OI"}, {aceCI, "CI"}, {aceIO, "IO"}, {aceNP, "NP"}} {
		if a.Flags&f.bit != 0 {
			b.WriteString("(" + f.name + ")")
		}
	}
	return b.String()
}

// aceText is one ACE as icacls prints it.
func (h *Host) aceText(a ace) string {
	return h.sidName(a.SID) + ":" + flagsText(a) + rightsText(a.Mask)
}

// parseRights reads icacls' <perm>: a simple right (N F M RX R W D), or a
// parenthesised comma-separated list of specific rights.
func parseRights(s string) (uint32, bool) {
	inner := strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	if inner == "N" {
		return 0, true
	}
	for _, r := range simpleRights {
		if inner == r.name {
			return r.mask, true
		}
	}
	if !strings.HasPrefix(s, "(") {
		return 0, false
	}
	var mask uint32
	for _, n := range strings.Split(inner, ",") {
		found := false
		for _, r := range append(append([]struct {
			name string
			mask uint32
		}{}, specificRights...), simpleRights...) {
			if strings.EqualFold(n, r.name) {
				mask |= r.mask
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return mask, true
}
