package pwsh

import (
	"fmt"
	"sort"
	"strings"
)

// Parameter binding as Windows PowerShell binds a cmdlet's arguments
// (CmdletParameterBinderController.BindCommandLineParameters in
// github.com/PowerShell/PowerShell, src/System.Management.Automation/engine;
// about_Parameter_Sets):
//
//  1. named arguments bind first, in order; naming a parameter twice is
//     ParameterAlreadyBound; each bound parameter narrows the valid
//     parameter sets to those it belongs to, and none left is
//     AmbiguousParameterSet (-Path with -LiteralPath);
//  2. positional arguments bind, lowest position first, to the unbound
//     parameters of the sets still valid (at a position two sets share,
//     the default set's parameter); one left over is
//     PositionalParameterNotFound;
//  3. the parameter set is resolved (ValidateParameterSets): the only valid
//     one; else the default set when it is valid; else the sets whose
//     mandatory parameters are all bound (with pipeline input: the sets
//     taking it), if that leaves one
//     (ResolveParameterSetAmbiguityBasedOnMandatoryParameters); else
//     AmbiguousParameterSet;
//  4. the chosen set's mandatory parameters must be bound
//     (MissingMandatoryParameter: powershell.exe -NonInteractive cannot
//     prompt), except those the pipeline input will fill.

// namedArg is a named argument: the parameter and what was written.
type namedArg struct {
	p *Param
	a arg
}

// allSets is __AllParameterSets: a cmdlet that declares no sets has this one.
const allSets = "__AllParameterSets"

// setNames are the cmdlet's parameter sets: the default one, then those its
// parameters name, in declaration order.
func (c *Cmdlet) setNames() []string {
	var out []string
	if c.DefaultSet != "" {
		out = append(out, c.DefaultSet)
	}
	for _, p := range c.Params {
		for _, s := range append(append([]string(nil), p.Sets...), p.MandatorySets...) {
			if !containsFold(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return []string{allSets}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// ParameterSets lists the cmdlet's parameter sets, the default first (for
// the package documentation); nil when it declares none.
func (c *Cmdlet) ParameterSets() []string {
	if s := c.setNames(); s[0] != allSets {
		return s
	}
	return nil
}

// inSet reports whether p belongs to set s.
func (p *Param) inSet(s string) bool { return len(p.Sets) == 0 || containsFold(p.Sets, s) }

// mandatoryIn reports whether p is mandatory in set s.
func (p *Param) mandatoryIn(s string) bool {
	return p.Mandatory && p.inSet(s) && (len(p.MandatorySets) == 0 || containsFold(p.MandatorySets, s))
}

// ambiguousSet is ParameterBinderStrings.AmbiguousParameterSet as Windows
// PowerShell 5.1 words it (7.x added a second sentence).
func (c *Cmdlet) ambiguousSet() *ErrorRecord {
	return c.bindError("Parameter set cannot be resolved using the specified named parameters.", "AmbiguousParameterSet")
}

// bind binds named and positional arguments, resolves the parameter set and
// checks types, enums, ValidateSets and mandatory parameters. It returns the
// bound values by canonical name and the set's name.
func (c *Cmdlet) bind(named []namedArg, positional []arg, hasInput bool) (map[string]any, string, *ErrorRecord) {
	out := map[string]any{}
	valid := c.setNames()
	narrow := func(p *Param) bool {
		var keep []string
		for _, s := range valid {
			if p.inSet(s) {
				keep = append(keep, s)
			}
		}
		valid = keep
		return len(valid) > 0
	}
	for _, na := range named {
		if _, bound := out[na.p.Name]; bound {
			return nil, "", c.bindError(fmt.Sprintf("Cannot bind parameter because parameter '%s' is specified more than once. To provide multiple values to parameters that can accept multiple values, use the array syntax. For example, \"-parameter value1,value2,value3\".", na.p.Name), "ParameterAlreadyBound")
		}
		v, rec := c.convertStatic(na.p, na.a.value)
		if rec != nil {
			return nil, "", rec
		}
		out[na.p.Name] = v
		if !narrow(na.p) {
			return nil, "", c.ambiguousSet()
		}
	}
	for i := 0; i < len(positional); i++ {
		a := positional[i]
		p := c.nextPositional(out, valid)
		if p == nil {
			return nil, "", c.bindError(fmt.Sprintf("A positional parameter cannot be found that accepts argument '%s'.", a.text), "PositionalParameterNotFound")
		}
		val := a.value
		if p.Remaining {
			var rest []any
			for _, b := range positional[i:] {
				rest = append(rest, b.value)
			}
			val = rest
			if len(rest) == 1 {
				val = rest[0]
			}
			i = len(positional)
		}
		v, rec := c.convertStatic(p, val)
		if rec != nil {
			return nil, "", rec
		}
		out[p.Name] = v
		narrow(p) // p was chosen from the valid sets: some remain
	}
	set, rec := c.resolveSet(valid, out, hasInput)
	if rec != nil {
		return nil, "", rec
	}
	var missing []string
	for _, p := range c.Params {
		if _, bound := out[p.Name]; !bound && p.mandatoryIn(set) && !(p.Pipeline && hasInput) {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) > 0 {
		// powershell.exe -NonInteractive cannot prompt for them.
		return nil, "", c.bindError("Cannot process command because of one or more missing mandatory parameters: "+strings.Join(missing, " ")+".", "MissingMandatoryParameter")
	}
	for name := range out {
		for _, p := range c.allParams() {
			if p.Name == name && p.Unmodelled {
				return nil, "", errUnsupported("the parameter -" + p.Name + " of " + c.Name)
			}
		}
	}
	// The common parameters that turn on a stream or a prompt the engine
	// does not have: -Verbose and -Debug show the verbose and debug
	// streams (-Debug also asks before going on, in 5.1), -Confirm asks
	// before each change (about_CommonParameters, about_Preference_Variables).
	// Their $false forms change nothing and bind.
	for _, n := range []string{"Verbose", "Debug", "Confirm"} {
		if v, ok := out[n]; ok && toBool(v) {
			if _, dyn := v.(dynamicArg); !dyn {
				return nil, "", errUnsupported("the common parameter -" + n + " (its stream or prompt) on " + c.Name)
			}
		}
	}
	return out, set, nil
}

// convertStatic is convert, except that an argument only known at run time
// (StaticBind's dynamicArg, in a list or alone) binds unconverted.
func (c *Cmdlet) convertStatic(p *Param, v any) (any, *ErrorRecord) {
	if _, dyn := v.(dynamicArg); dyn {
		return v, nil
	}
	if list, ok := v.([]any); ok {
		for _, e := range list {
			if _, dyn := e.(dynamicArg); dyn {
				return v, nil
			}
		}
	}
	return c.convert(p, v)
}

// nextPositional is the unbound positional parameter of a valid set with
// the lowest position; at a position held by parameters of different sets,
// the default set's.
func (c *Cmdlet) nextPositional(bound map[string]any, valid []string) *Param {
	var cands []*Param
	for _, p := range c.Params {
		if p.Position < 0 {
			continue
		}
		if _, ok := bound[p.Name]; ok {
			continue
		}
		for _, s := range valid {
			if p.inSet(s) {
				cands = append(cands, p)
				break
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Position != cands[j].Position {
			return cands[i].Position < cands[j].Position
		}
		return c.DefaultSet != "" && cands[i].inSet(c.DefaultSet) && !cands[j].inSet(c.DefaultSet)
	})
	return cands[0]
}

// resolveSet picks the parameter set from those still valid
// (ValidateParameterSets, ResolveParameterSetAmbiguityBasedOnMandatoryParameters).
func (c *Cmdlet) resolveSet(valid []string, bound map[string]any, hasInput bool) (string, *ErrorRecord) {
	if len(valid) == 1 {
		return valid[0], nil
	}
	if c.DefaultSet != "" && containsFold(valid, c.DefaultSet) {
		return c.DefaultSet, nil
	}
	if hasInput {
		// Only the sets that can take the pipeline's objects
		// (FilterParameterSetsTakingNoPipelineInput).
		var takes []string
		for _, s := range valid {
			for _, p := range c.Params {
				if _, ok := bound[p.Name]; !ok && p.Pipeline && p.inSet(s) {
					takes = append(takes, s)
					break
				}
			}
		}
		if len(takes) == 1 {
			return takes[0], nil
		}
		if len(takes) > 1 {
			valid = takes
		}
	}
	var complete []string
	for _, s := range valid {
		ok := true
		for _, p := range c.Params {
			if _, b := bound[p.Name]; !b && p.mandatoryIn(s) && !(p.Pipeline && hasInput) {
				ok = false
				break
			}
		}
		if ok {
			complete = append(complete, s)
		}
	}
	if len(complete) == 1 {
		return complete[0], nil
	}
	return "", c.ambiguousSet()
}
