package pwsh

import (
	"fmt"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh/grammar"
)

// Node is one node of a parsed script: the tree-sitter PowerShell grammar's
// node, copied out of C memory once so the interpreter walks plain Go values.
// Wrapper nodes with a single child and no token of their own (the grammar's
// precedence ladder: logical_expression > bitwise_expression > ... >
// unary_expression) are collapsed into that child.
type Node struct {
	Kind  string
	Field string // the field name this node has in its parent ("" for none)
	Text  string // the source text it spans
	Line  int    // 1-based line of its first character
	Col   int    // 1-based column (in bytes) of its first character
	Named bool
	Kids  []*Node // every child, tokens included (operators are tokens)
}

// Script is a parsed script.
type Script struct {
	Source string
	Root   *Node
	lines  []string
}

// line returns the source line n (1-based), for error positions.
func (s *Script) line(n int) string {
	if n < 1 || n > len(s.lines) {
		return ""
	}
	return strings.TrimRight(s.lines[n-1], "\r")
}

// ParseError is a script the grammar rejects: powershell.exe reports it as a
// ParserError and runs none of the script.
type ParseError struct {
	Line, Col int
	Token     string // the text tree-sitter could not place
	Missing   string // for a missing token: its kind
	Source    string // the line
	// Message and ID, when set, are a semantic check's error (the parser's
	// ReportError): its text and FullyQualifiedErrorId.
	Message, ID string
}

func (e *ParseError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("At line:%d char:%d: %s", e.Line, e.Col, e.Message)
	}
	if e.Missing != "" {
		return fmt.Sprintf("At line:%d char:%d: missing %s", e.Line, e.Col, e.Missing)
	}
	return fmt.Sprintf("At line:%d char:%d: unexpected token '%s'", e.Line, e.Col, e.Token)
}

// parsers are reused: a tree-sitter parser is not safe for concurrent use but
// is cheap to keep.
var parsers = sync.Pool{New: func() any {
	p := sitter.NewParser()
	if err := p.SetLanguage(sitter.NewLanguage(grammar.Language())); err != nil {
		panic("pwsh: loading the tree-sitter PowerShell grammar: " + err.Error())
	}
	return p
}}

// Parse checks a script with the tree-sitter PowerShell grammar (the syntax
// gate) and returns its tree. A syntax error returns a *ParseError.
func Parse(src string) (*Script, error) {
	p := parsers.Get().(*sitter.Parser)
	defer parsers.Put(p)
	b := []byte(src)
	tree := p.Parse(b, nil)
	if tree == nil {
		return nil, &ParseError{Line: 1, Col: 1, Token: src}
	}
	defer tree.Close()
	root := tree.RootNode()
	s := &Script{Source: src, lines: strings.Split(src, "\n")}
	if root.HasError() {
		pe := firstError(root, b)
		pe.Source = s.line(pe.Line)
		return nil, pe
	}
	s.Root = convert(root, "", src)
	if strings.Contains(src, "@{") {
		if pe := checkHashKeys(s.Root); pe != nil {
			pe.Source = s.line(pe.Line)
			return nil, pe
		}
	}
	if strings.ContainsAny(src, typography) {
		if pe := checkQuotes(s.Root); pe != nil {
			pe.Source = s.line(pe.Line)
			return nil, pe
		}
	}
	return s, nil
}

// firstError finds the first ERROR or MISSING node.
func firstError(n *sitter.Node, src []byte) *ParseError {
	if n.IsError() || n.IsMissing() {
		pos := n.StartPosition()
		pe := &ParseError{Line: int(pos.Row) + 1, Col: int(pos.Column) + 1, Token: n.Utf8Text(src)}
		if n.IsMissing() {
			pe.Missing = n.Kind()
		}
		return pe
	}
	for i := uint(0); i < n.ChildCount(); i++ {
		c := n.Child(i)
		if c.HasError() || c.IsError() || c.IsMissing() {
			return firstError(c, src)
		}
	}
	pos := n.StartPosition()
	return &ParseError{Line: int(pos.Row) + 1, Col: int(pos.Column) + 1, Token: n.Utf8Text(src)}
}

// collapsible are the grammar's precedence levels: with a single child they
// add nothing.
var collapsible = map[string]bool{
	"logical_expression": true, "bitwise_expression": true, "comparison_expression": true,
	"additive_expression": true, "multiplicative_expression": true, "format_expression": true,
	"range_expression": true, "array_literal_expression": true, "unary_expression": true,
	"argument_expression": true, "logical_argument_expression": true, "bitwise_argument_expression": true,
	"comparison_argument_expression": true, "additive_argument_expression": true,
	"multiplicative_argument_expression": true, "format_argument_expression": true,
	"range_argument_expression": true, "left_assignment_expression": true,
	"expression_with_unary_operator": false,
}

// convert copies a node and its children. Text is a slice of the source
// string (no copy: copying each node's text made the walk quadratic).
func convert(n *sitter.Node, field string, src string) *Node {
	count := n.ChildCount()
	kind := n.Kind()
	if count == 1 && collapsible[kind] {
		return convert(n.Child(0), field, src)
	}
	pos := n.StartPosition()
	start, end := n.ByteRange()
	out := &Node{Kind: kind, Field: field, Text: src[start:end], Line: int(pos.Row) + 1, Col: int(pos.Column) + 1, Named: n.IsNamed()}
	if count > 0 {
		out.Kids = make([]*Node, 0, count)
		// One cursor walk per node's children: fewer cgo calls than Child(i).
		cur := n.Walk()
		defer cur.Close()
		for ok := cur.GotoFirstChild(); ok; ok = cur.GotoNextSibling() {
			c := cur.Node()
			if c.Kind() == "comment" {
				continue // comments are not statements
			}
			out.Kids = append(out.Kids, convert(c, cur.FieldName(), src))
		}
	}
	return out
}

// named returns the named children.
func (n *Node) named() []*Node {
	var out []*Node
	for _, k := range n.Kids {
		if k.Named {
			out = append(out, k)
		}
	}
	return out
}

// child returns the first child of a kind, or nil.
func (n *Node) child(kind string) *Node {
	for _, k := range n.Kids {
		if k.Kind == kind {
			return k
		}
	}
	return nil
}

// field returns the first child with a field name, or nil.
func (n *Node) field(name string) *Node {
	for _, k := range n.Kids {
		if k.Field == name {
			return k
		}
	}
	return nil
}

// Dump renders a tree for debugging and tests.
func (n *Node) Dump() string {
	var b strings.Builder
	var walk func(*Node, int)
	walk = func(n *Node, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.Kind)
		if n.Field != "" {
			fmt.Fprintf(&b, " [%s]", n.Field)
		}
		if len(n.Kids) == 0 {
			fmt.Fprintf(&b, " %q", n.Text)
		}
		b.WriteByte('\n')
		for _, k := range n.Kids {
			walk(k, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}
