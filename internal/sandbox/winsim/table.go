package winsim

import (
	"sort"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// commandTable renders the modelled cmdlets and .NET types as doc.go lists
// them between its "Command table" markers; TestCommandTable keeps the two
// identical, so a cmdlet, parameter or type added without its doc row fails.
func commandTable() []string {
	var out []string
	cmds := Commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	for _, c := range cmds {
		head := c.Name
		if len(c.Aliases) > 0 {
			head += " (aliases " + strings.Join(c.Aliases, ", ") + ")"
		}
		out = append(out, head)
		var params, refused, inert []string
		for _, p := range c.Params {
			if p.Unmodelled {
				refused = append(refused, "-"+p.Name)
				continue
			}
			if p.Inert != "" {
				inert = append(inert, "-"+p.Name+" ("+p.Inert+")")
			}
			s := "-" + p.Name + " <" + p.Type[strings.LastIndexByte(p.Type, '.')+1:] + ">"
			if p.Position >= 0 {
				s = "[" + s + "]"
			}
			switch {
			case len(p.Enum) > 0:
				s += " {" + strings.Join(p.Enum, "|") + "}"
			case len(p.Set) > 0:
				s += " {" + strings.Join(p.Set, "|") + "}"
			}
			if len(p.Sets) > 0 {
				s += " (set " + strings.Join(p.Sets, ", ") + ")"
			}
			switch {
			case p.Mandatory && len(p.MandatorySets) > 0:
				s += " (mandatory in " + strings.Join(p.MandatorySets, ", ") + ")"
			case p.Mandatory:
				s += " (mandatory)"
			}
			params = append(params, s)
		}
		if sets := c.ParameterSets(); len(sets) > 0 {
			out = append(out, "    parameter sets: "+sets[0]+" (default), "+strings.Join(sets[1:], ", "))
		}
		if len(params) > 0 {
			out = append(out, "    parameters: "+strings.Join(params, ", "))
		}
		if len(refused) > 0 {
			out = append(out, "    refused (real, not modelled): "+strings.Join(refused, ", "))
		}
		if len(inert) > 0 {
			out = append(out, "    accepted, no effect here: "+strings.Join(inert, "; "))
		}
		out = append(out, "    does: "+c.Behaviour, "    source: "+c.Source)
	}
	out = append(out, "", ".NET types (casts, -is, static members):")
	for _, t := range pwsh.TypeDoc() {
		out = append(out, "    "+t)
	}
	return out
}
