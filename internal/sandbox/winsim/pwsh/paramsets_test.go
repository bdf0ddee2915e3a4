package pwsh

import (
	"strings"
	"testing"
)

// TestParameterSetBinding binds arguments to a cmdlet declared as Windows
// PowerShell declares its parameters and checks the set chosen, the values
// bound, or the ParameterBindingException, as
// CmdletParameterBinderController binds them (about_Parameter_Sets;
// github.com/PowerShell/PowerShell src/System.Management.Automation/engine/
// CmdletParameterBinderController.cs: BindCommandLineParameters,
// ValidateParameterSets, ResolveParameterSetAmbiguityBasedOnMandatoryParameters).
func TestParameterSetBinding(t *testing.T) {
	const src = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_parameter_sets?view=powershell-5.1"
	// Remove-Item's shape: -Path (position 0) and -LiteralPath, each mandatory
	// in its own set, "Path" the default.
	items := &Cmdlet{Name: "Remove-Item", Class: "Microsoft.PowerShell.Commands.RemoveItemCommand", DefaultSet: "Path",
		Params: []*Param{P("Path", "System.String[]", 0, In("Path"), Mandatory), P("LiteralPath", "System.String[]", -1, Alias("PSPath"), In("LiteralPath"), Mandatory),
			P("Kind", "System.String[]", -1, Set("File", "Directory")), P("Mode", "System.String", -1, Set("A", "B"))}}
	// No default set: two sets told apart only by their mandatory parameters.
	nodefault := &Cmdlet{Name: "Test-Sets", Class: "X",
		Params: []*Param{P("A", "System.String", -1, In("One"), Mandatory), P("B", "System.String", -1, In("Two"), Mandatory), P("C", "System.String", -1, In("One", "Two"))}}
	// New-Item's shape: -Path in both sets, mandatory only in pathSet.
	newItem := &Cmdlet{Name: "New-Item", Class: "Microsoft.PowerShell.Commands.NewItemCommand", DefaultSet: "pathSet",
		Params: []*Param{P("Path", "System.String[]", 0, MandatoryIn("pathSet")), P("Name", "System.String", -1, In("nameSet"), Mandatory)}}
	named := func(c *Cmdlet, kv ...any) []namedArg {
		var out []namedArg
		for i := 0; i < len(kv); i += 2 {
			p, rec := c.findParam(kv[i].(string))
			if rec != nil {
				t.Fatalf("findParam %v: %s", kv[i], rec.Message)
			}
			out = append(out, namedArg{p, arg{value: kv[i+1]}})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		cmd        *Cmdlet
		named      []namedArg
		positional []any
		hasInput   bool
		set        string // the set chosen ("" when an error is wanted)
		check      func(map[string]any) bool
		errID      string // FullyQualifiedErrorId's first part
		message    string // fragment of the message
	}{
		{name: "positional-is-path", cmd: items, positional: []any{`C:\a`}, set: "Path",
			check: func(m map[string]any) bool { return strings.Join(m["Path"].([]string), "|") == `C:\a` }},
		{name: "array-binds-each-element", cmd: items, named: named(items, "Path", []any{`C:\a`, `C:\b`}), set: "Path",
			check: func(m map[string]any) bool { return len(m["Path"].([]string)) == 2 }},
		{name: "literalpath-set", cmd: items, named: named(items, "PSPath", `C:\[x]`), set: "LiteralPath"},
		{name: "path-and-literalpath", cmd: items, named: named(items, "Path", "a", "LiteralPath", "b"),
			errID: "AmbiguousParameterSet", message: "Parameter set cannot be resolved using the specified named parameters."},
		{name: "positional-after-literalpath", cmd: items, named: named(items, "LiteralPath", "b"), positional: []any{"a"},
			errID: "PositionalParameterNotFound", message: "A positional parameter cannot be found that accepts argument 'a'."},
		{name: "default-set-mandatory", cmd: items, errID: "MissingMandatoryParameter", message: "missing mandatory parameters: Path."},
		{name: "named-twice", cmd: items, named: named(items, "Path", "a", "Path", "b"),
			errID: "ParameterAlreadyBound", message: "Cannot bind parameter because parameter 'Path' is specified more than once."},
		{name: "alias-then-name-twice", cmd: items, named: named(items, "PSPath", "a", "LiteralPath", "b"), errID: "ParameterAlreadyBound"},
		{name: "validateset-each-element", cmd: items, named: named(items, "Path", "a", "Kind", []any{"File", "Dir"}),
			errID: "ParameterArgumentValidationError", message: `The argument "Dir" does not belong to the set "File,Directory"`},
		{name: "validateset-elements-ok", cmd: items, named: named(items, "Path", "a", "Kind", []any{"file", "DIRECTORY"}), set: "Path",
			check: func(m map[string]any) bool { return strings.Join(m["Kind"].([]string), ",") == "file,DIRECTORY" }},
		{name: "array-to-scalar-string", cmd: items, named: named(items, "Path", "a", "Mode", []any{"A", "B"}),
			errID: "CannotConvertArgument", message: "Cannot convert 'System.Object[]' to the type 'System.String' required by parameter 'Mode'. Specified method is not supported."},
		{name: "no-default-resolved-by-mandatory", cmd: nodefault, named: named(nodefault, "B", "x"), set: "Two"},
		{name: "no-default-ambiguous", cmd: nodefault, named: named(nodefault, "C", "x"), errID: "AmbiguousParameterSet"},
		{name: "no-default-nothing-bound", cmd: nodefault, errID: "AmbiguousParameterSet"},
		{name: "new-item-path", cmd: newItem, named: named(newItem, "Path", `C:\k`), set: "pathSet"},
		{name: "new-item-name-without-path", cmd: newItem, named: named(newItem, "Name", "k"), set: "nameSet"},
		{name: "new-item-nothing", cmd: newItem, errID: "MissingMandatoryParameter", message: "parameters: Path."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// source: src
			var pos []arg
			for _, v := range tc.positional {
				pos = append(pos, arg{value: v, text: toString(v)})
			}
			got, set, rec := tc.cmd.bind(tc.named, pos, tc.hasInput)
			if tc.errID != "" {
				if rec == nil {
					t.Fatalf("bound set %q %v; want %s (%s)", set, got, tc.errID, src)
				}
				if !strings.HasPrefix(rec.ErrorID, tc.errID) || !strings.Contains(rec.Message, tc.message) {
					t.Fatalf("error %s %q; want %s containing %q", rec.ErrorID, rec.Message, tc.errID, tc.message)
				}
				return
			}
			if rec != nil {
				t.Fatalf("error %s %q; want set %s", rec.ErrorID, rec.Message, tc.set)
			}
			if set != tc.set {
				t.Fatalf("set %q; want %q", set, tc.set)
			}
			if tc.check != nil && !tc.check(got) {
				t.Fatalf("bound %v", got)
			}
		})
	}
}
