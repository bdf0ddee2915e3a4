package winsim

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// runIcacls is icacls.exe on the file system's ACL model (acl.go). Source:
// https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/icacls
//
//	icacls <file>                                 display the DACL
//	icacls <file> [/grant[:r] <sid>:<perm> ...] [/remove[:g|:d] <sid> ...]
//	              [/inheritance:e|d|r] [/reset] [/setowner <sid>] [/t] [/q] [/c]
//
// <sid> is a name (SYSTEM, Administrators, BUILTIN\Users, COMPUTER\user,
// .\user) or *S-1-...; <perm> is inheritance flags (OI)(CI)(IO)(NP), then a
// simple right N F M RX R W D (bare or in parentheses) or a parenthesised
// list of specific rights. The operations apply in the order given, to the
// file itself (changes to inheritable ACEs reach its children by
// inheritance); each needs WRITE_DAC on it, the display READ_CONTROL.
// /T applies them to the file and everything beneath it, the file first
// (each object checked on its own; a refused one fails the run's count and
// the exit code, as /C lets icacls go on). /setowner changes the owner to
// any account: icacls enables the restore privilege (SeRestorePrivilege,
// "Restore files and directories", which Administrators hold: learn.
// microsoft.com/previous-versions/windows/it-pro/windows-10/security/
// threat-protection/security-policy-settings/restore-files-and-directories),
// so it needs an elevated token and no right on the object; for any other
// token (which could make only itself the owner, with WRITE_OWNER) it is
// refused as not modelled. The owner is set before the DACL operations of
// the same run. Refused as not modelled: /deny, /L, /save, /restore,
// /findsid, /verify, /substitute, /setintegritylevel, wildcards.
func runIcacls(ctx context.Context, p *Process) int {
	if len(p.Args) == 0 {
		return refuse(p, "icacls without a file")
	}
	file := p.Args[0]
	if strings.ContainsAny(file, "*?") {
		return refuse(p, "icacls with a wildcard file name")
	}
	if strings.HasPrefix(file, "/") {
		return refuse(p, "icacls "+file+" without a file first")
	}
	h := p.Host
	var ops []func(sd *secDesc, dir bool)
	quiet, recurse := false, false
	newOwner := ""
	invalid := func(a string) int {
		fmt.Fprintf(p.Stderr, "Invalid parameter \"%s\"\r\n", a)
		return 87
	}
	for i := 1; i < len(p.Args); i++ {
		a := strings.ToLower(p.Args[i])
		// The arguments of an operation: up to the next switch.
		operands := func() []string {
			var out []string
			for i+1 < len(p.Args) && !strings.HasPrefix(p.Args[i+1], "/") {
				i++
				out = append(out, p.Args[i])
			}
			return out
		}
		switch {
		case a == "/grant" || a == "/grant:r":
			list := operands()
			if len(list) == 0 {
				return invalid(p.Args[i])
			}
			for _, g := range list {
				grant, ok := parseGrant(g)
				if !ok {
					return invalid(g)
				}
				sid, ok := h.lookupPrincipal(grant.principal)
				if !ok {
					return noMapping(p, grant.principal)
				}
				replace := a == "/grant:r"
				ops = append(ops, func(sd *secDesc, dir bool) {
					flags := grant.flags
					if !dir {
						flags = 0 // "applied only to directories"
					}
					if replace {
						sd.ACEs = removeExplicit(sd.ACEs, sid)
					}
					sd.ACEs = insertExplicit(sd.ACEs, ace{SID: sid, Mask: grant.mask, Flags: flags})
				})
			}
		case a == "/remove" || a == "/remove:g" || a == "/remove:d":
			list := operands()
			if len(list) == 0 {
				return invalid(p.Args[i])
			}
			for _, n := range list {
				sid, ok := h.lookupPrincipal(n)
				if !ok {
					return noMapping(p, n)
				}
				if a == "/remove:d" {
					continue // no deny ACEs exist to remove
				}
				ops = append(ops, func(sd *secDesc, _ bool) { sd.ACEs = removeExplicit(sd.ACEs, sid) })
			}
		case a == "/inheritance:e":
			ops = append(ops, func(sd *secDesc, _ bool) { sd.Protected = false })
		case a == "/inheritance:d":
			// Disables inheritance and copies the inherited ACEs.
			ops = append(ops, func(sd *secDesc, _ bool) {
				for i := range sd.ACEs {
					sd.ACEs[i].Inherited = false
				}
				sd.ACEs = canonical(sd.ACEs)
				sd.Protected = true
			})
		case a == "/inheritance:r":
			// Disables inheritance and removes the inherited ACEs.
			ops = append(ops, func(sd *secDesc, _ bool) {
				sd.ACEs = explicitOnly(sd.ACEs)
				sd.Protected = true
			})
		case a == "/reset":
			// The default inherited ACLs: no explicit ACE, inheritance on.
			ops = append(ops, func(sd *secDesc, _ bool) { sd.ACEs, sd.Protected = nil, false })
		case a == "/setowner":
			list := operands()
			if len(list) != 1 {
				return invalid(p.Args[i])
			}
			sid, ok := h.lookupPrincipal(list[0])
			if !ok {
				return noMapping(p, list[0])
			}
			if !elevated(ctx) {
				return refuse(p, "icacls /setowner without an elevated token (the restore privilege)")
			}
			newOwner = sid
		case a == "/t":
			recurse = true
		case a == "/q":
			quiet = true
		case a == "/c":
		default:
			return refuse(p, "the icacls argument "+p.Args[i])
		}
	}
	exists, _ := h.fs.Stat(file)
	if !exists {
		fmt.Fprintf(p.Stderr, "%s: The system cannot find the file specified.\r\n", file)
		fmt.Fprintf(p.Stdout, "Successfully processed 0 files; Failed processing 1 files\r\n")
		return 2
	}
	clean := h.fs.Clean(file)
	if len(ops) == 0 && newOwner == "" {
		if recurse {
			return refuse(p, "icacls /T without an operation (displaying a tree)")
		}
		if !h.allowed(ctx, clean, rightRC) {
			return icaclsDenied(p, file)
		}
		sd := h.security(clean)
		pad := strings.Repeat(" ", len(file)+1)
		for i, a := range sd.ACEs {
			prefix := pad
			if i == 0 {
				prefix = file + " "
			}
			fmt.Fprintf(p.Stdout, "%s%s\r\n", prefix, h.aceText(a))
		}
		fmt.Fprintf(p.Stdout, "\r\nSuccessfully processed 1 files; Failed processing 0 files\r\n")
		return 0
	}
	targets := []string{clean}
	if recurse {
		targets = append(targets, h.beneath(clean)...)
	}
	done, failed, code := 0, 0, 0
	for _, target := range targets {
		shown := file
		if target != clean {
			shown = target
		}
		if err := h.icaclsApply(ctx, target, newOwner, ops); err != nil {
			fmt.Fprintf(p.Stderr, "%s: %v\r\n", shown, err)
			failed++
			code = 5
			if !errors.Is(err, errAccessDenied) {
				code = 1
			}
			continue
		}
		done++
		if !quiet {
			fmt.Fprintf(p.Stdout, "processed file: %s\r\n", shown)
		}
	}
	fmt.Fprintf(p.Stdout, "Successfully processed %d files; Failed processing %d files\r\n", done, failed)
	return code
}

// icaclsApply sets owner (when not "") on one object, then runs the DACL
// operations, which need WRITE_DAC (an owner holds it implicitly).
func (h *Host) icaclsApply(ctx context.Context, clean, owner string, ops []func(*secDesc, bool)) error {
	_, dir := h.fs.Stat(clean)
	sd := h.security(clean)
	if owner != "" {
		sd.Owner = owner
		if err := h.setSecurity(clean, sd); err != nil {
			return err
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if !h.allowed(ctx, clean, rightWDAC) {
		return errAccessDenied
	}
	sd = h.security(clean)
	for _, o := range ops {
		o(sd, dir)
	}
	return h.setSecurity(clean, sd)
}

// beneath lists every object under a directory, parents before children.
func (h *Host) beneath(clean string) []string {
	var out []string
	entries, err := h.fs.List(clean)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		child := clean + `\` + e.Name()
		if strings.HasSuffix(clean, `\`) {
			child = clean + e.Name()
		}
		out = append(out, child)
		if e.IsDir() {
			out = append(out, h.beneath(child)...)
		}
	}
	return out
}

// noMapping is LookupAccountName's ERROR_NONE_MAPPED (1332) as icacls
// reports it.
func noMapping(p *Process, name string) int {
	fmt.Fprintf(p.Stderr, "%s: No mapping between account names and security IDs was done.\r\n", name)
	fmt.Fprintf(p.Stdout, "Successfully processed 0 files; Failed processing 1 files\r\n")
	return 1332
}

// icaclsDenied is ERROR_ACCESS_DENIED (5) as icacls reports it.
func icaclsDenied(p *Process, file string) int {
	fmt.Fprintf(p.Stderr, "%s: Access is denied.\r\n", file)
	fmt.Fprintf(p.Stdout, "Successfully processed 0 files; Failed processing 1 files\r\n")
	return 5
}

type icaclsGrant struct {
	principal string
	flags     uint8
	mask      uint32
}

var grantFlagRE = regexp.MustCompile(`^\((OI|CI|IO|NP)\)`)

// parseGrant reads <sid>:[(flag)...]<perm>.
func parseGrant(s string) (icaclsGrant, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return icaclsGrant{}, false
	}
	g := icaclsGrant{principal: s[:i]}
	rest := strings.ToUpper(s[i+1:])
	for {
		m := grantFlagRE.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		g.flags |= map[string]uint8{"OI": aceOI, "CI": aceCI, "IO": aceIO, "NP": aceNP}[m[1]]
		rest = rest[len(m[0]):]
	}
	mask, ok := parseRights(rest)
	if !ok || rest == "" {
		return icaclsGrant{}, false
	}
	g.mask = mask
	return g, true
}

func explicitOnly(aces []ace) []ace {
	var out []ace
	for _, a := range aces {
		if !a.Inherited {
			out = append(out, a)
		}
	}
	return out
}

func removeExplicit(aces []ace, sid string) []ace {
	var out []ace
	for _, a := range aces {
		if a.Inherited || a.SID != sid {
			out = append(out, a)
		}
	}
	return out
}

// insertExplicit adds an explicit ACE after the other explicit ones (before
// the inherited), merged into one for the same SID and flags.
func insertExplicit(aces []ace, a ace) []ace {
	explicit := canonical(append(explicitOnly(aces), a))
	for _, e := range aces {
		if e.Inherited {
			explicit = append(explicit, e)
		}
	}
	return explicit
}
