package winsim

import (
	"fmt"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// Get-Acl and Set-Acl on the file system's ACL model (acl.go), with the
// methods of the security object a script changes between them.
// Sources:
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/get-acl?view=powershell-5.1
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/set-acl?view=powershell-5.1
// https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemsecurity
//
// Get-Acl's object (FileSecurity or DirectorySecurity) has Path, Owner,
// Access (the DACL's rules, explicit first, then inherited, as the DACL
// orders them), AreAccessRulesProtected; its Group, Sddl, AccessToString,
// Audit and the other members are refused as not modelled. Its methods:
//   - SetAccessRuleProtection(isProtected, preserveInheritance): protected
//     with preserve copies the inherited rules as explicit ones, without
//     drops them; "preserveInheritance ... is ignored if isProtected is
//     false" (ObjectSecurity.SetAccessRuleProtection, learn.microsoft.com).
//   - AddAccessRule(rule): an Allow rule merges with an explicit rule of the
//     same identity and inheritance, else is added (CommonAcl.AddQualifiedAce,
//     referencesource.microsoft.com mscorlib/system/security/accesscontrol/acl.cs).
//   - SetAccessRule(rule): removes the explicit Allow rules of the rule's
//     identity, whatever their rights and inheritance, then adds it
//     (CommonAcl.SetQualifiedAce, same file; Microsoft's remarks on
//     FileSystemSecurity.SetAccessRule describe it less precisely).
//   - RemoveAccessRuleAll(rule): "Removes all access control list (ACL)
//     permissions associated with the specified user"
//     (FileSystemSecurity.RemoveAccessRuleAll, learn.microsoft.com).
// An identity no account has is IdentityNotMappedException ("Some or all
// identity references could not be translated.", NTAccount.Translate). A
// Deny rule, inheritance flags on a file's rule and propagation flags
// without inheritance flags are refused as not modelled (deny ACEs are
// not in the model; what .NET answers to the others is not either).
//
// Set-Acl -Path P -AclObject A writes A's DACL and its protection to P:
// it needs WRITE_DAC there, as icacls does; without it "Attempted to
// perform an unauthorized operation." (UnauthorizedAccessException). Set-Acl
// writes the owner too (FileSystemProvider.SetSecurityDescriptor): the
// simulator models no owner change, so an object whose owner differs from
// P's, and a token without WRITE_OWNER on P, are refused as not modelled.
// P's inherited rules come from its own parent (SetNamedSecurityInfo
// propagates them), not from A.

// aclState is the security descriptor behind a Get-Acl object.
type aclState struct {
	path string // the clean path it was read from
	dir  bool
	sd   *secDesc // effective: explicit ACEs, then inherited
}

const (
	secDocs  = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/"
	fsSecAPI = "https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemsecurity"
)

func aclCmdlets() []*Cmdlet {
	return []*Cmdlet{getAcl(), setAcl()}
}

func aclPathParams() []*Param {
	return []*Param{P("Path", "System.String[]", 0, In("ByPath")), P("LiteralPath", "System.String[]", -1, Alias("PSPath"), In("ByLiteralPath"), Mandatory),
		P("InputObject", "System.Management.Automation.PSObject", -1, In("ByInputObject"), Mandatory, Unmodelled),
		P("Filter", "System.String", -1, Unmodelled), P("Include", "System.String[]", -1, Unmodelled), P("Exclude", "System.String[]", -1, Unmodelled)}
}

func aclItemPaths(c *Call) []string {
	if c.Set == "ByLiteralPath" {
		return c.Strs("LiteralPath")
	}
	return c.Strs("Path")
}

func getAcl() *Cmdlet {
	return &Cmdlet{Name: "Get-Acl", Class: "Microsoft.PowerShell.Commands.GetAclCommand", DefaultSet: "ByPath",
		Source:    secDocs + "get-acl?view=powershell-5.1",
		Behaviour: "the security object of a file or directory (READ_CONTROL needed): Path, Owner, Access (FileSystemAccessRule objects: IdentityReference, FileSystemRights, AccessControlType, IsInherited, InheritanceFlags, PropagationFlags), AreAccessRulesProtected, and the methods SetAccessRuleProtection, AddAccessRule, SetAccessRule, RemoveAccessRuleAll (pscmdlets_acl.go); Group, Sddl and the rest refused",
		Params: append(aclPathParams(), P("Audit", "SwitchParameter", -1, Unmodelled), P("AllCentralAccessPolicies", "SwitchParameter", -1, Unmodelled),
			P("UseTransaction", "SwitchParameter", -1, Unmodelled)),
		Run: func(c *Call) error {
			paths := aclItemPaths(c)
			if len(paths) == 0 {
				return c.Unmodelled("Get-Acl of the current location (no -Path)")
			}
			h := ps(c).h
			return eachSecuredPath(c, "Get-Acl", paths, rightRC, func(clean string, dir bool) error {
				c.Write(h.aclObject(&aclState{path: clean, dir: dir, sd: h.security(clean)}))
				return nil
			})
		}}
}

// eachSecuredPath runs fn for each path the session holds right on (READ_CONTROL
// for Get-Acl, WRITE_DAC for Set-Acl): a missing path is PathNotFound and a
// refused one UnauthorizedAccessException, each non-terminating as the
// cmdlets report them; wildcards, the registry and other drives are refused
// as not modelled.
func eachSecuredPath(c *Call, cmdlet string, paths []string, right uint32, fn func(clean string, dir bool) error) error {
	h, ctx := ps(c).h, ps(c).ctx
	for _, p := range paths {
		if c.Set != "ByLiteralPath" && strings.ContainsAny(p, "*?[") {
			return c.Unmodelled("wildcards in -Path")
		}
		if isRegistry(p) {
			return c.Unmodelled(cmdlet + " on the registry")
		}
		if _, ok := missingDrive(p); ok {
			return c.Unmodelled(cmdlet + " on a drive other than C:")
		}
		exists, dir := h.fs.Stat(p)
		clean := h.fs.Clean(p)
		if !exists {
			if err := pathNotFound(c, clean); err != nil {
				return err
			}
			continue
		}
		if !h.allowed(ctx, clean, right) {
			if err := c.Error(unauthorizedOp(c, clean)); err != nil {
				return err
			}
			continue
		}
		if err := fn(clean, dir); err != nil {
			return err
		}
	}
	return nil
}

// unauthorizedOp is UnauthorizedAccessException's default message, which
// Get-Acl and Set-Acl report for ERROR_ACCESS_DENIED.
func unauthorizedOp(c *Call, path string) *pwsh.ErrorRecord {
	return c.Fail("Attempted to perform an unauthorized operation.", "PermissionDenied", path, "UnauthorizedAccessException",
		"System.UnauthorizedAccessException", "System.UnauthorizedAccessException")
}

func setAcl() *Cmdlet {
	return &Cmdlet{Name: "Set-Acl", Class: "Microsoft.PowerShell.Commands.SetAclCommand", ShouldProcess: true, DefaultSet: "ByPath",
		Source:    secDocs + "set-acl?view=powershell-5.1",
		Behaviour: "writes a Get-Acl object's DACL and protection to the path; needs WRITE_DAC (else \"Attempted to perform an unauthorized operation.\"); an owner change, a token without WRITE_OWNER and an -AclObject Get-Acl did not make are refused",
		Params: append([]*Param{P("Path", "System.String[]", 0, In("ByPath"), Mandatory), aclPathParams()[1], aclPathParams()[2]}, P("AclObject", "System.Object", 1, Mandatory), P("Passthru", "SwitchParameter", -1, Unmodelled),
			P("CentralAccessPolicy", "System.String", -1, Unmodelled), P("ClearCentralAccessPolicy", "SwitchParameter", -1, Unmodelled),
			P("Filter", "System.String", -1, Unmodelled), P("Include", "System.String[]", -1, Unmodelled), P("Exclude", "System.String[]", -1, Unmodelled),
			P("UseTransaction", "SwitchParameter", -1, Unmodelled)),
		Run: func(c *Call) error {
			obj, ok := c.Value("AclObject").(*pwsh.Object)
			var st *aclState
			if ok {
				st, ok = obj.Native.(*aclState)
			}
			if !ok {
				return c.Unmodelled("an -AclObject that Get-Acl did not make")
			}
			paths := aclItemPaths(c)
			if len(paths) == 0 {
				return c.Unmodelled("Set-Acl without -Path")
			}
			h, ctx := ps(c).h, ps(c).ctx
			return eachSecuredPath(c, "Set-Acl", paths, rightWDAC, func(clean string, _ bool) error {
				if cur := h.security(clean); cur.Owner != st.sd.Owner {
					return c.Unmodelled(fmt.Sprintf("changing the owner of %s (to %s)", clean, h.sidName(st.sd.Owner)))
				}
				if !h.allowed(ctx, clean, rightWO) {
					return c.Unmodelled("Set-Acl by a token without WRITE_OWNER on " + clean + " (whether it writes the owner then is not modelled)")
				}
				if err := h.setSecurity(clean, st.sd.clone()); err != nil {
					return c.Throw(c.Fail(err.Error(), "WriteError", clean, "IOException", "System.IO.IOException", "System.IO.IOException"))
				}
				return nil
			})
		}}
}

// aclObject is the FileSecurity or DirectorySecurity object of a state.
func (h *Host) aclObject(st *aclState) *pwsh.Object {
	typ := "System.Security.AccessControl.FileSecurity"
	if st.dir {
		typ = "System.Security.AccessControl.DirectorySecurity"
	}
	o := pwsh.NewObject(typ)
	o.Str = typ
	o.Native = st
	h.refreshACLObject(o, st)
	o.Methods["setaccessruleprotection"] = func(a []any) (any, error) {
		if len(a) != 2 {
			return nil, pwsh.NotModelled(fmt.Sprintf("SetAccessRuleProtection with %d arguments", len(a)))
		}
		isProtected, ok1 := a[0].(bool)
		preserve, ok2 := a[1].(bool)
		if !ok1 || !ok2 {
			return nil, pwsh.NotModelled("SetAccessRuleProtection with arguments that are not $true or $false")
		}
		switch {
		case !isProtected:
			st.sd.Protected = false
		case preserve:
			for i := range st.sd.ACEs {
				st.sd.ACEs[i].Inherited = false
			}
			st.sd.ACEs = canonical(st.sd.ACEs)
			st.sd.Protected = true
		default:
			st.sd.ACEs = explicitOnly(st.sd.ACEs)
			st.sd.Protected = true
		}
		h.refreshACLObject(o, st)
		return nil, nil
	}
	modify := func(method string, fn func(a ace)) pwsh.Method {
		return func(args []any) (any, error) {
			if len(args) != 1 {
				return nil, pwsh.NotModelled(fmt.Sprintf("%s with %d arguments", method, len(args)))
			}
			a, err := h.ruleACE(method, args[0], st.dir)
			if err != nil {
				return nil, err
			}
			fn(a)
			h.refreshACLObject(o, st)
			return nil, nil
		}
	}
	o.Methods["addaccessrule"] = modify("AddAccessRule", func(a ace) { st.sd.ACEs = insertExplicit(st.sd.ACEs, a) })
	o.Methods["setaccessrule"] = modify("SetAccessRule", func(a ace) {
		st.sd.ACEs = insertExplicit(removeExplicit(st.sd.ACEs, a.SID), a)
	})
	o.Methods["removeaccessruleall"] = func(args []any) (any, error) {
		if len(args) != 1 {
			return nil, pwsh.NotModelled(fmt.Sprintf("RemoveAccessRuleAll with %d arguments", len(args)))
		}
		rule, ok := ruleOf(args[0])
		if !ok {
			return nil, pwsh.NotModelled("RemoveAccessRuleAll of a " + pwsh.Text(args[0]))
		}
		sid, ok := h.lookupPrincipal(rule.Identity)
		if !ok {
			return nil, identityNotMapped()
		}
		st.sd.ACEs = removeExplicit(st.sd.ACEs, sid)
		h.refreshACLObject(o, st)
		return nil, nil
	}
	return o
}

func ruleOf(v any) (pwsh.FileSystemAccessRule, bool) {
	o, ok := v.(*pwsh.Object)
	if !ok {
		return pwsh.FileSystemAccessRule{}, false
	}
	r, ok := o.Native.(pwsh.FileSystemAccessRule)
	return r, ok
}

func identityNotMapped() error {
	return &pwsh.DotNetError{Type: "System.Security.Principal.IdentityNotMappedException", Message: "Some or all identity references could not be translated."}
}

// ruleACE is the ACE a FileSystemAccessRule adds (InheritanceFlags and
// PropagationFlags to ACE flags: ContainerInherit CI, ObjectInherit OI,
// NoPropagateInherit NP, InheritOnly IO; "ACE_HEADER", learn.microsoft.com).
func (h *Host) ruleACE(method string, v any, dir bool) (ace, error) {
	rule, ok := ruleOf(v)
	if !ok {
		return ace{}, pwsh.NotModelled(method + " of a " + pwsh.Text(v) + " (only a FileSystemAccessRule)")
	}
	if rule.Deny {
		return ace{}, pwsh.NotModelled(method + " of a Deny rule (deny ACEs)")
	}
	if rule.Inheritance != 0 && !dir {
		return ace{}, pwsh.NotModelled(method + " of a rule with inheritance flags on a file")
	}
	if rule.Inheritance == 0 && rule.Propagation != 0 {
		return ace{}, pwsh.NotModelled(method + " of a rule with propagation flags and no inheritance flags")
	}
	sid, ok := h.lookupPrincipal(rule.Identity)
	if !ok {
		return ace{}, identityNotMapped()
	}
	var flags uint8
	if rule.Inheritance&1 != 0 {
		flags |= aceCI
	}
	if rule.Inheritance&2 != 0 {
		flags |= aceOI
	}
	if rule.Propagation&1 != 0 {
		flags |= aceNP
	}
	if rule.Propagation&2 != 0 {
		flags |= aceIO
	}
	return ace{SID: sid, Mask: rule.Mask, Flags: flags}, nil
}

// refreshACLObject sets the object's properties from its descriptor.
func (h *Host) refreshACLObject(o *pwsh.Object, st *aclState) {
	access := make([]any, 0, len(st.sd.ACEs))
	for _, a := range st.sd.ACEs {
		r := pwsh.FileSystemAccessRule{Identity: h.sidName(a.SID), Mask: a.Mask}
		if a.Flags&aceCI != 0 {
			r.Inheritance |= 1
		}
		if a.Flags&aceOI != 0 {
			r.Inheritance |= 2
		}
		if a.Flags&aceNP != 0 {
			r.Propagation |= 1
		}
		if a.Flags&aceIO != 0 {
			r.Propagation |= 2
		}
		access = append(access, pwsh.NewAccessRuleObject(r, r.Identity, a.Inherited))
	}
	o.Set("Path", `Microsoft.PowerShell.Core\FileSystem::`+st.path).Set("Owner", h.sidName(st.sd.Owner)).
		Set("Access", access).Set("AreAccessRulesProtected", st.sd.Protected)
}
