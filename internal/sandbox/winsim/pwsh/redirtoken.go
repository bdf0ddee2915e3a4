package pwsh

import (
	"regexp"
	"strings"
)

// redirToken matches a redirection written without a space before its
// target (2>$null, >out.txt, 2>&1, *>>log.txt). Grammar gap:
// tree-sitter-powershell reads "2>$null" among a command's arguments as one
// generic token, where PowerShell's tokenizer reads the redirection operator
// and its target (about_Redirection); the engine takes it as the redirection.
var redirToken = regexp.MustCompile(`^([*1-6]?>>?|[*1-6]>&[12])(.*)$`)

// asRedirection turns such a token into the redirection node the grammar
// would have given it; nil for any other token.
func asRedirection(k *Node) *Node {
	if k.Kind != "generic_token" {
		return nil
	}
	m := redirToken.FindStringSubmatch(k.Text)
	if m == nil {
		return nil
	}
	op := &Node{Kind: strings.TrimSpace(m[1]), Text: m[1], Line: k.Line, Col: k.Col}
	rd := &Node{Kind: "redirection", Text: k.Text, Line: k.Line, Col: k.Col, Named: true, Kids: []*Node{op}}
	if m[2] == "" {
		return rd
	}
	if strings.ContainsAny(m[2], "'\"`") {
		// A quoted target the grammar split at its spaces: refused (redirect).
		op.Text = k.Text
		return rd
	}
	kind := "generic_token"
	if strings.HasPrefix(m[2], "$") {
		kind = "variable"
	}
	target := &Node{Kind: kind, Text: m[2], Line: k.Line, Col: k.Col + len(m[1]), Named: true}
	rd.Kids = append(rd.Kids, &Node{Kind: "redirected_file_name", Text: m[2], Line: target.Line, Col: target.Col, Named: true, Kids: []*Node{target}})
	return rd
}
