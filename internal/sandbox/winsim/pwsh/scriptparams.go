package pwsh

import (
	"fmt"
	"strings"
)

// bindScriptParams binds a script file's param() block (about_Scripts,
// "Script parameters"; about_Functions_Advanced_Parameters) from the
// arguments it was invoked with: -Name value pairs by each parameter's
// name (case-insensitive), the rest by position, then the defaults of the
// parameters left unbound. What is modelled: type constraints [string],
// [bool], [int] and [switch] (a switch takes no value), and
// [Parameter(Mandatory = ...)]; any other attribute, and a mandatory
// parameter left unbound (PowerShell would prompt), are refused. An
// argument that names no parameter is ParameterBinderStrings'
// NamedParameterNotFound, as powershell.exe reports it.
func (r *Runtime) bindScriptParams(child *Runtime, block *Node, args []any) error {
	type param struct {
		name, typ string
		mandatory bool
		def       *Node
		bound     bool
	}
	var params []*param
	list := block.child("parameter_list")
	if list != nil {
		for _, sp := range list.named() {
			if sp.Kind != "script_parameter" {
				continue
			}
			p := &param{typ: "System.Object"}
			if v := sp.child("variable"); v != nil {
				p.name = strings.TrimPrefix(v.Text, "$")
			}
			if d := sp.child("script_parameter_default"); d != nil {
				if named := d.named(); len(named) > 0 {
					p.def = named[len(named)-1]
				}
			}
			if attrs := sp.child("attribute_list"); attrs != nil {
				for _, a := range attrs.named() {
					if tl := a.child("type_literal"); tl != nil {
						switch strings.ToLower(typeLiteralName(tl)) {
						case "string":
							p.typ = "System.String"
						case "bool":
							p.typ = "System.Boolean"
						case "int":
							p.typ = "System.Int32"
						case "switch":
							p.typ = "switch"
						default:
							return r.terminate(tl, errUnsupported("the script parameter type "+tl.Text), true)
						}
						continue
					}
					if !strings.EqualFold(strings.TrimSpace(a.child("attribute_name").Text), "parameter") {
						return r.terminate(a, errUnsupported("the script parameter attribute "+a.Text), true)
					}
					if argsNode := a.child("attribute_arguments"); argsNode != nil {
						for _, arg := range argsNode.named() {
							kids := arg.named()
							if len(kids) != 2 || !strings.EqualFold(kids[0].Text, "Mandatory") {
								return r.terminate(arg, errUnsupported("the Parameter() argument "+arg.Text), true)
							}
							v, err := r.eval(kids[1])
							if err != nil {
								return err
							}
							p.mandatory = toBool(v)
						}
					}
				}
			}
			params = append(params, p)
		}
	}
	find := func(name string) *param {
		for _, p := range params {
			if strings.EqualFold(p.name, name) {
				return p
			}
		}
		return nil
	}
	bind := func(p *param, v any) error {
		if _, isString := v.(string); isString && p.typ == "System.Boolean" {
			return r.terminate(block, scriptError(fmt.Sprintf("Cannot process argument transformation on parameter '%s'. Cannot convert value \"System.String\" to type \"System.Boolean\". "+
				"Boolean parameters accept only Boolean values and numbers, such as $True, $False, 1 or 0.", p.name),
				"InvalidData", "", "", "ParameterBindingArgumentTransformationException", "ParameterArgumentTransformationError",
				"System.Management.Automation.ParameterBindingArgumentTransformationException"), true)
		}
		if p.typ != "System.Object" && p.typ != "switch" {
			out, rec := convertTo(v, p.typ)
			if rec != nil {
				return r.terminate(block, rec, true)
			}
			v = out
		}
		child.vars[strings.ToLower(p.name)] = v
		p.bound = true
		return nil
	}
	var positional []any
	for i := 0; i < len(args); i++ {
		s, isParam := args[i].(string)
		if !isParam || !strings.HasPrefix(s, "-") || len(s) < 2 {
			positional = append(positional, args[i])
			continue
		}
		name, colon := strings.TrimPrefix(s, "-"), false
		if strings.HasSuffix(name, ":") {
			name, colon = strings.TrimSuffix(name, ":"), true
		}
		p := find(name)
		if p == nil {
			return r.terminate(block, scriptError(fmt.Sprintf("A parameter cannot be found that matches parameter name '%s'.", name),
				"InvalidArgument", "", "", "ParameterBindingException", "NamedParameterNotFound", "System.Management.Automation.ParameterBindingException"), true)
		}
		if p.typ == "switch" && !colon {
			if err := bind(p, true); err != nil {
				return err
			}
			continue
		}
		if i+1 >= len(args) {
			return r.terminate(block, scriptError(fmt.Sprintf("Missing an argument for parameter '%s'. Specify a parameter of type '%s' and try again.", p.name, p.typ),
				"InvalidArgument", "", "", "ParameterBindingException", "MissingArgument", "System.Management.Automation.ParameterBindingException"), true)
		}
		i++
		if err := bind(p, args[i]); err != nil {
			return err
		}
	}
	for _, p := range params {
		if len(positional) == 0 {
			break
		}
		if p.bound || p.typ == "switch" {
			continue
		}
		if err := bind(p, positional[0]); err != nil {
			return err
		}
		positional = positional[1:]
	}
	for _, p := range params {
		if p.bound {
			continue
		}
		if p.mandatory {
			return r.terminate(block, errUnsupported("prompting for the mandatory script parameter "+p.name), true)
		}
		var v any
		if p.def != nil {
			d, err := r.eval(p.def)
			if err != nil {
				return err
			}
			v = d
		} else if p.typ == "switch" {
			v = false
		}
		if err := bind(p, v); err != nil {
			return err
		}
	}
	child.vars["args"] = positional
	return nil
}
