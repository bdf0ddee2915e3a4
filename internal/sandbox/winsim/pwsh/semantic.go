package pwsh

import (
	"fmt"
	"strings"
)

// The semantic checks Windows PowerShell's parser runs after the grammar
// (github.com/PowerShell/PowerShell,
// src/System.Management.Automation/engine/parser/SemanticChecks.cs): an
// error there is a ParserError like a syntax error, and none of the script
// runs.

// checkHashKeys is VisitHashtable: two constant keys of one hash literal
// that are equal ignoring case (StringComparer.OrdinalIgnoreCase on the
// keys' ToString()) are "Duplicate keys '<key>' are not allowed in hash
// literals." (DuplicateKeyInHashLiteral), reported at the second key.
func checkHashKeys(n *Node) *ParseError {
	if n.Kind == "hash_literal_body" {
		seen := map[string]bool{}
		for _, e := range n.named() {
			kn := e.child("key_expression")
			if e.Kind != "hash_entry" || kn == nil {
				continue
			}
			key, ok := constantKey(kn)
			if !ok {
				continue
			}
			if seen[strings.ToLower(key)] {
				return &ParseError{Line: kn.Line, Col: kn.Col, Token: kn.Text, ID: "DuplicateKeyInHashLiteral",
					Message: fmt.Sprintf("Duplicate keys '%s' are not allowed in hash literals.", key)}
			}
			seen[strings.ToLower(key)] = true
		}
	}
	for _, k := range n.Kids {
		if pe := checkHashKeys(k); pe != nil {
			return pe
		}
	}
	return nil
}

// constantKey is a hash key's value when the parser sees a constant: a
// bareword, a quoted string with nothing to expand, a number.
func constantKey(kn *Node) (string, bool) {
	named := kn.named()
	if len(named) != 1 {
		return "", false
	}
	k := named[0]
	switch k.Kind {
	case "simple_name":
		return k.Text, true
	case "string_literal":
		if len(k.Kids) != 1 {
			return "", false
		}
		s := k.Kids[0]
		switch s.Kind {
		case "verbatim_string_characters":
			v, _ := verbatimValue(s.Text)
			return v, true
		case "expandable_string_literal":
			if len(s.named()) == 0 && len(s.Text) >= 2 {
				return unescape(s.Text[1 : len(s.Text)-1]), true
			}
		}
	case "integer_literal":
		v, err := parseNumber(k)
		if err == nil {
			return toString(v), true
		}
	}
	return "", false
}

// errDuplicateKey is the same check at run time, for keys that are not
// constants (HashtableOps.AddKeyValuePair): a statement-terminating
// RuntimeException; the key's text is cut at 40 characters.
func errDuplicateKey(key string) *ErrorRecord {
	if len(key) > 40 {
		key = key[:40] + "..."
	}
	return scriptError(fmt.Sprintf("Duplicate keys '%s' are not allowed in hash literals.", key),
		"InvalidOperation", "", "", "RuntimeException", "DuplicateKeyInHashLiteral", "System.Management.Automation.RuntimeException")
}
