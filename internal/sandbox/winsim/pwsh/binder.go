package pwsh

import (
	"fmt"
	"strings"
)

// Cmdlet is one modelled command with its real parameter set (from
// Microsoft's cmdlet reference, Source).
type Cmdlet struct {
	Name    string
	Class   string   // the implementing class, for FullyQualifiedErrorId ("Microsoft.PowerShell.Commands.GetServiceCommand")
	Aliases []string // command aliases that exist in Windows PowerShell 5.1 (echo, rm, ...)
	Params  []*Param
	// ShouldProcess adds -WhatIf and -Confirm (SupportsShouldProcess).
	ShouldProcess bool
	// DefaultSet is CmdletBinding's DefaultParameterSetName: the set chosen
	// when the arguments leave more than one (paramsets.go).
	DefaultSet string
	Source     string // Microsoft's reference page
	Behaviour  string // what the simulated host does, for the doc table
	Run        func(c *Call) error
}

// Param is a parameter as the cmdlet reference declares it.
type Param struct {
	Name    string
	Aliases []string
	Type    string   // .NET type: System.String, System.String[], SwitchParameter, System.Int32, System.Object[], System.Management.Automation.ScriptBlock, or an enum type
	Enum    []string // an enum type's names
	// Flags marks Enum as a [Flags] enum whose first name is the zero
	// value: a comma-separated string or an array of names binds as their
	// bitwise OR (LanguagePrimitives.ConvertTo through
	// EnumSingleTypeConverter, "Enum.Parse ... a list of one or more named
	// constants delimited by commas": learn.microsoft.com/dotnet/api/system.enum.parse).
	Flags     bool
	Set       []string // ValidateSet
	Position  int      // -1: named only
	Mandatory bool
	Pipeline  bool // ValueFromPipeline
	Remaining bool // ValueFromRemainingArguments
	// Sets are the parameter sets the parameter belongs to (its
	// [Parameter(ParameterSetName = ...)] attributes); none: every set
	// (__AllParameterSets). Mandatory applies in each of them unless
	// MandatorySets names only some.
	Sets          []string
	MandatorySets []string
	// Unmodelled parameters exist on Windows; the simulated host refuses a
	// call that uses one.
	Unmodelled bool
	// Inert says why a parameter the implementation does not read changes
	// nothing Windows would show on the simulated host (Restart-Computer
	// -Force where no other user is logged on): accepted, and the reason
	// is in the command table. A parameter that is neither read, Inert
	// nor Unmodelled would be a silent yes (winsim
	// TestEveryParameterUsedOrRefused).
	Inert string
}

// P declares a parameter: P("Name", "System.String[]", 0) ... with options.
func P(name, typ string, pos int, opts ...func(*Param)) *Param {
	p := &Param{Name: name, Type: typ, Position: pos}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Parameter options.
var (
	Mandatory  = func(p *Param) { p.Mandatory = true }
	Pipeline   = func(p *Param) { p.Pipeline = true }
	Remaining  = func(p *Param) { p.Remaining = true }
	Unmodelled = func(p *Param) { p.Unmodelled = true }
)

// NoEffect marks a parameter Inert, with the reason it changes nothing
// on the simulated host.
func NoEffect(why string) func(*Param) { return func(p *Param) { p.Inert = why } }

func Alias(a ...string) func(*Param) { return func(p *Param) { p.Aliases = append(p.Aliases, a...) } }
func Enum(names ...string) func(*Param) {
	return func(p *Param) { p.Enum = names }
}

// FlagsEnum declares a [Flags] enum; names[0] is its zero value (as
// NetSecurity.Profile's Any), the others its bits in declaration order.
func FlagsEnum(names ...string) func(*Param) {
	return func(p *Param) { p.Enum, p.Flags = names, true }
}
func Set(names ...string) func(*Param) { return func(p *Param) { p.Set = names } }

// In puts a parameter in parameter sets (ParameterSetName).
func In(sets ...string) func(*Param) { return func(p *Param) { p.Sets = append(p.Sets, sets...) } }

// MandatoryIn makes a parameter mandatory in some of its sets only (a
// parameter declared with Mandatory = true in one [Parameter()] attribute and
// not in another, as New-Item's -Path).
func MandatoryIn(sets ...string) func(*Param) {
	return func(p *Param) { p.Mandatory, p.MandatorySets = true, sets }
}

// commonParams are the CommonParameters every cmdlet has
// (about_CommonParameters).
var commonParams = []*Param{
	P("Verbose", "SwitchParameter", -1, Alias("vb")),
	P("Debug", "SwitchParameter", -1, Alias("db")),
	P("ErrorAction", "System.Management.Automation.ActionPreference", -1, Alias("ea"), Enum(preferenceNames...)),
	P("WarningAction", "System.Management.Automation.ActionPreference", -1, Alias("wa"), Enum(preferenceNames...)),
	P("InformationAction", "System.Management.Automation.ActionPreference", -1, Alias("infa"), Enum(preferenceNames...)),
	P("ErrorVariable", "System.String", -1, Alias("ev"), Unmodelled),
	P("WarningVariable", "System.String", -1, Alias("wv"), Unmodelled),
	P("InformationVariable", "System.String", -1, Alias("iv"), Unmodelled),
	P("OutVariable", "System.String", -1, Alias("ov"), Unmodelled),
	P("OutBuffer", "System.Int32", -1, Alias("ob"), Unmodelled),
	P("PipelineVariable", "System.String", -1, Alias("pv"), Unmodelled),
}

var shouldProcessParams = []*Param{
	P("WhatIf", "SwitchParameter", -1, Alias("wi"), Unmodelled),
	P("Confirm", "SwitchParameter", -1, Alias("cf")),
}

// allParams is the cmdlet's parameters plus the common ones.
func (c *Cmdlet) allParams() []*Param {
	out := append(append([]*Param{}, c.Params...), commonParams...)
	if c.ShouldProcess {
		out = append(out, shouldProcessParams...)
	}
	return out
}

// findParam resolves a parameter name as PowerShell does: the full name or
// an alias, else a unique prefix.
func (c *Cmdlet) findParam(name string) (*Param, *ErrorRecord) {
	all := c.allParams()
	for _, p := range all {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		for _, a := range p.Aliases {
			if strings.EqualFold(a, name) {
				return p, nil
			}
		}
	}
	var matches []*Param
	for _, p := range all {
		if len(name) > 0 && strings.HasPrefix(strings.ToLower(p.Name), strings.ToLower(name)) {
			matches = append(matches, p)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, c.bindError(fmt.Sprintf("A parameter cannot be found that matches parameter name '%s'.", name), "NamedParameterNotFound")
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = "-" + m.Name
	}
	return nil, c.bindError(fmt.Sprintf("Parameter cannot be processed because the parameter name '%s' is ambiguous. Possible matches include: %s.", name, strings.Join(names, " ")), "AmbiguousParameter")
}

// bindError is a ParameterBindingException of this cmdlet.
func (c *Cmdlet) bindError(msg, id string) *ErrorRecord {
	return commandError(c.Name, c.Class, msg, "InvalidArgument", "", "", "ParameterBindingException", id,
		"System.Management.Automation.ParameterBindingException")
}

// arg is one argument as written: a value, and the parameter name it follows.
type arg struct {
	value any
	text  string // the source text, for messages
	node  *Node
}

// convert converts an argument to the parameter's type.
func (c *Cmdlet) convert(p *Param, v any) (any, *ErrorRecord) {
	cannot := func(detail string) *ErrorRecord {
		typ := p.Type
		return c.bindError(fmt.Sprintf("Cannot bind parameter '%s'. Cannot convert value \"%s\" to type \"%s\". Error: \"%s\"", p.Name, toString(v), typ, detail), "CannotConvertArgumentNoMessage")
	}
	switch {
	case p.Type == "SwitchParameter":
		return toBool(v), nil
	case p.Flags:
		// The value is the OR of the names: Enum.ToString of a [Flags]
		// value lists its set bits in declaration order joined by ", ",
		// and the zero value by its own name.
		set := map[string]bool{}
		for _, e := range items(v) {
			for _, s := range strings.Split(toString(e), ",") {
				name, ok := enumName(p.Enum, s)
				if !ok {
					return nil, cannot(fmt.Sprintf("Unable to match the identifier name %s to a valid enumerator name. Specify one of the following enumerator names and try again:\r\n%s", strings.TrimSpace(s), strings.Join(p.Enum, ", ")))
				}
				set[name] = true
			}
		}
		var on []string
		for _, n := range p.Enum[1:] {
			if set[n] {
				on = append(on, n)
			}
		}
		if len(on) == 0 {
			return p.Enum[0], nil
		}
		return strings.Join(on, ", "), nil
	case len(p.Enum) > 0:
		var names []any
		for _, e := range items(v) {
			s := toString(e)
			name, ok := enumName(p.Enum, s)
			if !ok {
				return nil, cannot(fmt.Sprintf("Unable to match the identifier name %s to a valid enumerator name. Specify one of the following enumerator names and try again:\r\n%s", s, strings.Join(p.Enum, ", ")))
			}
			names = append(names, name)
		}
		if strings.HasSuffix(p.Type, "[]") {
			return names, nil
		}
		if len(names) != 1 {
			return nil, cannot("Only one identifier name is allowed")
		}
		return names[0], nil
	case p.Type == "System.Int32" || p.Type == "System.Int32[]" || p.Type == "System.Double":
		var out []any
		for _, e := range items(v) {
			n, rec := convertTo(e, strings.TrimSuffix(p.Type, "[]"))
			if rec != nil {
				return nil, cannot("Input string was not in a correct format.")
			}
			out = append(out, n)
		}
		if strings.HasSuffix(p.Type, "[]") {
			return out, nil
		}
		if len(out) > 1 {
			return nil, c.cannotConvertArray(p)
		}
		if len(out) == 0 {
			return nil, cannot("Cannot convert the \"System.Object[]\" value of type \"System.Object[]\" to type \"" + p.Type + "\".")
		}
		return out[0], nil
	case p.Type == "System.String":
		if _, isSB := v.(*ScriptBlock); isSB {
			return toString(v), nil
		}
		if arr, ok := v.([]any); ok && len(arr) > 1 {
			return nil, c.cannotConvertArray(p)
		}
		s := toString(collapse(items(v)))
		if err := c.validateSet(p, s); err != nil {
			return nil, err
		}
		return s, nil
	case p.Type == "System.String[]":
		var out []string
		for _, e := range items(v) {
			s := toString(e)
			if err := c.validateSet(p, s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case p.Type == "System.Management.Automation.ScriptBlock":
		sb, ok := v.(*ScriptBlock)
		if !ok {
			return nil, cannot(fmt.Sprintf("Invalid cast from '%s' to 'System.Management.Automation.ScriptBlock'.", typeName(v)))
		}
		return sb, nil
	}
	return v, nil
}

// cannotConvertArray is an array bound to a parameter that takes one value
// (System.String, System.Int32, ...): ParameterBinderBase.CoerceTypeAsNeeded
// converts a collection only to a collection type and fails with
// CannotConvertArgument, "Specified method is not supported." (the
// NotSupportedException it raises); it does not join the elements as a cast
// to [string] would. Seen from Windows PowerShell 5.1 and 7 alike: "Cannot
// convert 'System.Object[]' to the type 'System.String' required by
// parameter 'Name'. Specified method is not supported."
func (c *Cmdlet) cannotConvertArray(p *Param) *ErrorRecord {
	return c.bindError(fmt.Sprintf("Cannot convert 'System.Object[]' to the type '%s' required by parameter '%s'. Specified method is not supported.", p.Type, p.Name), "CannotConvertArgument")
}

func (c *Cmdlet) validateSet(p *Param, s string) *ErrorRecord {
	if len(p.Set) == 0 {
		return nil
	}
	if _, ok := enumName(p.Set, s); ok {
		return nil
	}
	return commandError(c.Name, c.Class, fmt.Sprintf("Cannot validate argument on parameter '%s'. The argument \"%s\" does not belong to the set \"%s\" specified by the ValidateSet attribute. Supply an argument that is in the set and then try the command again.", p.Name, s, strings.Join(p.Set, ",")),
		"InvalidData", "", "", "ParameterBindingValidationException", "ParameterArgumentValidationError", "System.Management.Automation.ParameterBindingValidationException")
}

// enumName matches an enum or ValidateSet name case-insensitively and returns
// its canonical spelling.
func enumName(names []string, s string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(n, strings.TrimSpace(s)) {
			return n, true
		}
	}
	return "", false
}
