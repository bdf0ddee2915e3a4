package pwsh

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// System.Security.AccessControl.FileSystemAccessRule, as far as a script
// builds one for Set-Acl: the constructors (identity, rights, type) and
// (identity, rights, inheritanceFlags, propagationFlags, type) with a string
// identity (an NTAccount name, translated to a SID only when a security
// descriptor takes the rule, as .NET does), and the rule's properties.
// https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemaccessrule.-ctor
//
// The access mask is FileSystemSecurity.AccessMaskFromRights: an Allow rule
// gains Synchronize, a Deny rule loses it unless it is FullControl
// (referencesource.microsoft.com, mscorlib/system/security/accesscontrol/filesecurity.cs),
// which is why Get-Acl shows "Modify, Synchronize" for a Modify grant.

// FileSystemAccessRule is the rule behind a FileSystemAccessRule object
// (Object.Native).
type FileSystemAccessRule struct {
	Identity string // the NTAccount name as given
	Mask     uint32 // the access mask
	// Inheritance is InheritanceFlags (ContainerInherit 1, ObjectInherit 2),
	// Propagation PropagationFlags (NoPropagateInherit 1, InheritOnly 2).
	Inheritance, Propagation uint8
	Deny                     bool
}

type enumValue struct {
	name  string
	value uint32
}

// fileSystemRights is System.Security.AccessControl.FileSystemRights in
// declaration order (learn.microsoft.com/dotnet/api/system.security.accesscontrol.filesystemrights).
var fileSystemRights = []enumValue{
	{"ListDirectory", 1}, {"ReadData", 1}, {"WriteData", 2}, {"CreateFiles", 2}, {"CreateDirectories", 4}, {"AppendData", 4},
	{"ReadExtendedAttributes", 8}, {"WriteExtendedAttributes", 16}, {"Traverse", 32}, {"ExecuteFile", 32},
	{"DeleteSubdirectoriesAndFiles", 64}, {"ReadAttributes", 128}, {"WriteAttributes", 256}, {"Write", 278},
	{"Delete", 65536}, {"ReadPermissions", 131072}, {"Read", 131209}, {"ReadAndExecute", 131241}, {"Modify", 197055},
	{"ChangePermissions", 262144}, {"TakeOwnership", 524288}, {"Synchronize", 1048576}, {"FullControl", 2032127},
}

// rightsDisplayName is the one name Enum.ToString gives a value that two
// names share. Get-Acl of C:\ on Windows Server shows BUILTIN\Users'
// (CI)(AD) and (CI)(IO)(WD) ACEs as AppendData and CreateFiles; the choice
// for 1 and 32 follows the same (second declared) name.
var rightsDisplayName = map[uint32]string{1: "ReadData", 2: "CreateFiles", 4: "AppendData", 32: "ExecuteFile"}

var inheritanceFlags = []enumValue{{"None", 0}, {"ContainerInherit", 1}, {"ObjectInherit", 2}}
var propagationFlags = []enumValue{{"None", 0}, {"NoPropagateInherit", 1}, {"InheritOnly", 2}}

// flagsText is Enum.ToString of a [Flags] value: from the largest value
// down, each whose bits are all still set is taken; the names are listed
// from the smallest up, joined by ", "; bits no name covers leave the
// number (.NET Framework Enum.InternalFlagsFormat).
func flagsText(vals []enumValue, display map[uint32]string, v uint32) string {
	if v == 0 {
		for _, e := range vals {
			if e.value == 0 {
				return e.name
			}
		}
		return "0"
	}
	uniq := map[uint32]string{}
	for _, e := range vals {
		if e.value == 0 {
			continue
		}
		if _, ok := uniq[e.value]; !ok {
			uniq[e.value] = e.name
		}
		if d, ok := display[e.value]; ok {
			uniq[e.value] = d
		}
	}
	keys := make([]uint32, 0, len(uniq))
	for k := range uniq {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] > keys[j] })
	rem := v
	var names []string
	for _, k := range keys {
		if rem&k == k {
			rem -= k
			names = append([]string{uniq[k]}, names...)
		}
	}
	if rem != 0 {
		return strconv.FormatUint(uint64(v), 10)
	}
	return strings.Join(names, ", ")
}

// parseFlags converts a script's value to a [Flags] enum as PowerShell
// does: an integer, or names separated by commas.
func parseFlags(typ string, vals []enumValue, v any) (uint32, error) {
	switch n := v.(type) {
	case int:
		if n >= 0 {
			return uint32(n), nil
		}
	case int64:
		if n >= 0 && n <= 0xFFFFFFFF {
			return uint32(n), nil
		}
	}
	var out uint32
	for _, part := range strings.Split(toString(v), ",") {
		found := false
		for _, e := range vals {
			if strings.EqualFold(e.name, strings.TrimSpace(part)) {
				out |= e.value
				found = true
				break
			}
		}
		if !found {
			names := make([]string, len(vals))
			for i, e := range vals {
				names[i] = e.name
			}
			return 0, dotnetErr("System.Management.Automation.PSInvalidCastException",
				fmt.Sprintf("Cannot convert value \"%s\" to type \"%s\". Error: \"Unable to match the identifier name %s to a valid enumerator name. Specify one of the following enumerator names and try again:\r\n%s\"",
					toString(v), typ, strings.TrimSpace(part), strings.Join(names, ", ")))
		}
	}
	return out, nil
}

const fsRightsType = "System.Security.AccessControl.FileSystemRights"

// FileSystemRightsText is a mask as Get-Acl shows FileSystemRights.
func FileSystemRightsText(mask uint32) string {
	return flagsText(fileSystemRights, rightsDisplayName, mask)
}

// NewAccessRuleObject is the FileSystemAccessRule object of a rule:
// identity is the NTAccount's name as shown, inherited its IsInherited.
func NewAccessRuleObject(rule FileSystemAccessRule, identity string, inherited bool) *Object {
	o := NewObject("System.Security.AccessControl.FileSystemAccessRule")
	o.Str = "System.Security.AccessControl.FileSystemAccessRule"
	o.Native = rule
	id := NewObject("System.Security.Principal.NTAccount")
	id.Str = identity
	id.Set("Value", identity)
	typ := "Allow"
	if rule.Deny {
		typ = "Deny"
	}
	return o.Set("FileSystemRights", FileSystemRightsText(rule.Mask)).Set("AccessControlType", typ).Set("IdentityReference", id).
		Set("IsInherited", inherited).Set("InheritanceFlags", flagsText(inheritanceFlags, nil, uint32(rule.Inheritance))).
		Set("PropagationFlags", flagsText(propagationFlags, nil, uint32(rule.Propagation)))
}

func newFileSystemAccessRule(_ *Runtime, a []any) (any, error) {
	if len(a) != 3 && len(a) != 5 {
		return nil, NotModelled(fmt.Sprintf("[System.Security.AccessControl.FileSystemAccessRule]::new with %d arguments (only (identity, rights, type) and (identity, rights, inheritanceFlags, propagationFlags, type))", len(a)))
	}
	id, ok := a[0].(string)
	if !ok {
		return nil, NotModelled("a FileSystemAccessRule identity that is not a string (" + typeName(a[0]) + ")")
	}
	rights, err := parseFlags(fsRightsType, fileSystemRights, a[1])
	if err != nil {
		return nil, err
	}
	var rule FileSystemAccessRule
	rule.Identity = id
	if len(a) == 5 {
		inh, err := parseFlags("System.Security.AccessControl.InheritanceFlags", inheritanceFlags, a[2])
		if err != nil {
			return nil, err
		}
		prop, err := parseFlags("System.Security.AccessControl.PropagationFlags", propagationFlags, a[3])
		if err != nil {
			return nil, err
		}
		rule.Inheritance, rule.Propagation = uint8(inh), uint8(prop)
	}
	typ := toString(a[len(a)-1])
	switch {
	case strings.EqualFold(typ, "Allow"):
		rights |= 1048576 // Synchronize
	case strings.EqualFold(typ, "Deny"):
		rule.Deny = true
		if rights != 2032127 {
			rights &^= 1048576
		}
	default:
		return nil, dotnetErr("System.Management.Automation.PSInvalidCastException",
			fmt.Sprintf("Cannot convert value \"%s\" to type \"System.Security.AccessControl.AccessControlType\". Error: \"Unable to match the identifier name %s to a valid enumerator name. Specify one of the following enumerator names and try again:\r\nAllow, Deny\"", typ, typ))
	}
	if rights == 0 {
		// .NET refuses a zero access mask (ArgumentException); its text
		// is not modelled.
		return nil, NotModelled("a FileSystemAccessRule with no rights")
	}
	rule.Mask = rights
	return NewAccessRuleObject(rule, id, false), nil
}

func init() {
	registerType(&dotnetType{Full: "System.Security.AccessControl.FileSystemAccessRule", Names: []string{"Security.AccessControl.FileSystemAccessRule"},
		Source:  "https://learn.microsoft.com/en-us/dotnet/api/system.security.accesscontrol.filesystemaccessrule",
		Methods: []string{"new", "equals", "referenceequals"},
		Static:  map[string]func(*Runtime, []any) (any, error){"new": newFileSystemAccessRule}})
}
