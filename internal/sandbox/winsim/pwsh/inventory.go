package pwsh

import "strings"

// The inventory: what a script uses, read from its syntax tree, and whether
// the engine models it. The simulated host's walk test (winsim
// TestProviderScriptsModelled) parses every script the provider sends and
// shows each command, parameter, .NET type and static member, and program
// it names is modelled, so a script change that reaches for something new
// fails there instead of meeting "not modelled" in an acceptance run.

// UseKind is what a Use names.
type UseKind string

const (
	UseCommand   UseKind = "command"   // a command by a literal name: a cmdlet, alias or program
	UseParameter UseKind = "parameter" // -Name after a literal command name (Name: the command, Member: the parameter)
	UseType      UseKind = "type"      // a type literal: a cast, [T]::... or -is
	UseStatic    UseKind = "static"    // [T]::Member (Name: the type, Member: the member)
	UseDynamic   UseKind = "dynamic"   // & <expression>: the command is only known at run time
)

// Use is one thing a script names, with its line.
type Use struct {
	Kind   UseKind
	Name   string
	Member string
	Line   int
}

// Uses lists what a parsed script names, in source order.
func Uses(s *Script) []Use {
	var out []Use
	var walk func(n *Node)
	walk = func(n *Node) {
		switch n.Kind {
		case "command":
			out = append(out, commandUses(n)...)
		case "type_literal":
			out = append(out, Use{Kind: UseType, Name: typeLiteralName(n), Line: n.Line})
		case "member_access", "invokation_expression":
			if len(n.Kids) > 1 && n.Kids[0].Kind == "type_literal" && n.Kids[1].Text == "::" {
				out = append(out, Use{Kind: UseStatic, Name: typeLiteralName(n.Kids[0]), Member: memberName(n), Line: n.Line})
			}
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	walk(s.Root)
	return out
}

// commandUses is a command's name and the parameters written after it.
func commandUses(n *Node) []Use {
	nameNode := n.field("command_name")
	if nameNode == nil {
		return nil
	}
	name := ""
	switch {
	case nameNode.Kind == "command_name":
		name = nameNode.Text
	case nameNode.Kind == "command_name_expr" && len(nameNode.Kids) == 1 && nameNode.Kids[0].Kind == "string_literal":
		name = unquoteLiteral(nameNode.Kids[0].Text)
	default:
		return []Use{{Kind: UseDynamic, Name: nameNode.Text, Line: n.Line}}
	}
	out := []Use{{Kind: UseCommand, Name: name, Line: n.Line}}
	if ce := n.field("command_elements"); ce != nil {
		for _, k := range ce.Kids {
			if k.Kind == "command_parameter" {
				p := strings.TrimSuffix(strings.TrimPrefix(k.Text, "-"), ":")
				out = append(out, Use{Kind: UseParameter, Name: name, Member: p, Line: k.Line})
			}
		}
	}
	return out
}

// unquoteLiteral reads a single- or double-quoted literal without
// expansions ('C:\k\x.exe').
func unquoteLiteral(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return strings.ReplaceAll(s[1:len(s)-1], string(s[0])+string(s[0]), string(s[0]))
	}
	return s
}

// TypeModelled reports whether a type literal names a type the engine
// models, and its full name.
func TypeModelled(name string) (string, bool) {
	t, ok := lookupType(name)
	if !ok {
		return "", false
	}
	return t.Full, true
}

// StaticMemberModelled reports whether [typ]::member is a static property
// or method the engine models.
func StaticMemberModelled(typ, member string) bool {
	t, ok := lookupType(typ)
	if !ok {
		return false
	}
	m := strings.ToLower(member)
	_, prop := t.Props[m]
	_, method := t.Static[m]
	return prop || method
}

// Parameter finds a parameter as the binder would (full name, alias or
// unique prefix, the common parameters included). ok is false for a name
// the cmdlet does not have, an ambiguous prefix, or a real parameter the
// engine refuses as not modelled.
func (c *Cmdlet) Parameter(name string) (*Param, bool) {
	p, rec := c.findParam(name)
	if rec != nil || p.Unmodelled {
		return nil, false
	}
	return p, true
}
