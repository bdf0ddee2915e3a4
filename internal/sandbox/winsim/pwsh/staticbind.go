package pwsh

import (
	"context"
	"strings"
)

// BindProblem is a command of a script that would not bind.
type BindProblem struct {
	Command string
	Line    int
	Message string // the binder's error (ParameterBindingException) or the refusal
}

// dynamicArg stands for an argument known only when the script runs (a
// variable, an expression, a subexpression): StaticBind binds it to its
// parameter without converting it.
type dynamicArg struct{ text string }

// StaticBind binds every command of a script whose name is a literal
// cmdlet name of cmds, before the script runs, as the binder does at run
// time (paramsets.go): named parameters by full name, alias or unique
// prefix, switches, a missing argument, a parameter named twice, positional
// arguments, the parameter set, the mandatory parameters (those the
// pipeline fills excepted, for a command that is not first in its
// pipeline), the parameters refused as not modelled, and each literal
// argument (a quoted string without expansions, a number, a bareword, a
// list of them) converted and validated against the parameter's type, enum
// and ValidateSet. An argument only known at run time binds to its
// parameter unconverted. It reports what would fail, so a script can be
// checked without running it (winsim's walk test).
func StaticBind(s *Script, cmds *Registry) []BindProblem {
	r := &Runtime{ctx: context.Background(), cmds: cmds, vars: map[string]any{}, lastOK: true}
	var out []BindProblem
	var walk func(n *Node, hasInput bool)
	walk = func(n *Node, hasInput bool) {
		if n.Kind == "command" {
			if p, ok := r.staticBind(n, hasInput); !ok {
				out = append(out, p)
			}
		}
		piped := false
		for _, k := range n.Kids {
			if !k.Named && k.Text == "|" {
				piped = true
				continue
			}
			walk(k, piped && k.Kind == "command")
		}
	}
	walk(s.Root, false)
	return out
}

// staticBind binds one command; ok is true when it binds (or is not a
// cmdlet of the registry by a literal name).
func (r *Runtime) staticBind(n *Node, hasInput bool) (BindProblem, bool) {
	nameNode := n.field("command_name")
	if nameNode == nil || nameNode.Kind != "command_name" || n.child("command_invokation_operator") != nil {
		return BindProblem{}, true
	}
	c, ok := r.cmds.Lookup(nameNode.Text)
	if !ok || strings.ContainsAny(nameNode.Text, `\/`) {
		return BindProblem{}, true
	}
	fail := func(rec *ErrorRecord) (BindProblem, bool) {
		return BindProblem{Command: c.Name, Line: n.Line, Message: rec.Message}, false
	}
	var elems []element
	if ce := n.field("command_elements"); ce != nil {
		for _, k := range ce.Kids {
			switch k.Kind {
			case "command_argument_sep", "redirection":
			case "command_parameter":
				t := strings.TrimPrefix(k.Text, "-")
				elems = append(elems, element{param: strings.TrimSuffix(t, ":"), colon: strings.HasSuffix(t, ":"), node: k})
			default:
				if asRedirection(k) != nil {
					continue
				}
				elems = append(elems, element{node: k})
			}
		}
	}
	var named []namedArg
	var positional []arg
	for i := 0; i < len(elems); i++ {
		e := elems[i]
		if e.param == "" {
			positional = append(positional, arg{value: r.staticValue(e.node), text: e.node.Text, node: e.node})
			continue
		}
		p, rec := c.findParam(e.param)
		if rec != nil {
			return fail(rec)
		}
		if p.Type == "SwitchParameter" && !e.colon {
			named = append(named, namedArg{p, arg{value: true, text: e.node.Text}})
			continue
		}
		if i+1 >= len(elems) || elems[i+1].param != "" {
			return fail(c.bindError("Missing an argument for parameter '"+p.Name+"'.", "MissingArgument"))
		}
		i++
		named = append(named, namedArg{p, arg{value: r.staticValue(elems[i].node), text: elems[i].node.Text, node: elems[i].node}})
	}
	if _, _, rec := c.bind(named, positional, hasInput); rec != nil {
		return fail(rec)
	}
	return BindProblem{}, true
}

// staticValue is an argument's value when the source alone gives it, else
// a dynamicArg.
func (r *Runtime) staticValue(n *Node) any {
	if !literalOnly(n) {
		return dynamicArg{text: n.Text}
	}
	v, err := r.argValue(n)
	if err != nil {
		return dynamicArg{text: n.Text}
	}
	return v
}

// literalOnly reports whether a node's value needs nothing but its source:
// no variable, expansion, subexpression, command, member or type.
func literalOnly(n *Node) bool {
	switch n.Kind {
	case "generic_token", "command_name", "path_command_name":
		return !strings.ContainsAny(n.Text, "$`(@{")
	case "string_literal", "integer_literal", "decimal_integer_literal", "verbatim_string_characters", "array_literal_expression",
		"unary_expression", "range_expression", "argument_expression_list", "logical_argument_expression", "bitwise_argument_expression",
		"comparison_argument_expression", "additive_argument_expression", "multiplicative_argument_expression", "format_argument_expression",
		"range_argument_expression", "array_literal_argument_expression":
	case "expandable_string_literal":
		if strings.ContainsAny(n.Text, "$`") {
			return false
		}
	default:
		if n.Named {
			return false
		}
	}
	for _, k := range n.Kids {
		if !literalOnly(k) {
			return false
		}
	}
	return true
}
