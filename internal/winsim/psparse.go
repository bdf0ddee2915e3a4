package winsim

import (
	"strings"
)

// The parsing here is deliberately small: it only has to split the statement
// shapes listed in doc.go, not PowerShell at large.

// splitStatements splits a script at newlines and semicolons outside quotes and
// brackets, drops comments, and glues else/elseif/catch/finally clauses to the
// statement they continue.
func splitStatements(script string) []string {
	var (
		out   []string
		cur   strings.Builder
		depth int
		quote byte
	)
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if s == "" {
			return
		}
		lower := strings.ToLower(s)
		if len(out) > 0 && (strings.HasPrefix(lower, "else") || strings.HasPrefix(lower, "catch") || strings.HasPrefix(lower, "finally")) {
			out[len(out)-1] += " " + s
			return
		}
		out = append(out, s)
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case quote == '\'':
			cur.WriteByte(c)
			if c == '\'' {
				if i+1 < len(script) && script[i+1] == '\'' {
					cur.WriteByte('\'')
					i++
				} else {
					quote = 0
				}
			}
			continue
		case quote == '"':
			cur.WriteByte(c)
			if c == '`' && i+1 < len(script) {
				cur.WriteByte(script[i+1])
				i++
			} else if c == '"' {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
			cur.WriteByte(c)
		case '#':
			if i > 0 && script[i-1] == '<' { // block comment <# ... #>
				s := cur.String()
				cur.Reset()
				cur.WriteString(s[:len(s)-1])
				end := strings.Index(script[i:], "#>")
				if end < 0 {
					i = len(script)
				} else {
					i += end + 1
				}
				continue
			}
			if end := strings.IndexByte(script[i:], '\n'); end < 0 {
				i = len(script)
			} else {
				i += end - 1
			}
		case '`':
			if i+1 < len(script) && (script[i+1] == '\n' || script[i+1] == '\r') { // line continuation
				for i+1 < len(script) && (script[i+1] == '\n' || script[i+1] == '\r') {
					i++
				}
				cur.WriteByte(' ')
				continue
			}
			cur.WriteByte(c)
		case '(', '{', '[':
			depth++
			cur.WriteByte(c)
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
			cur.WriteByte(c)
		case '\n', ';':
			if depth == 0 {
				flush()
			} else {
				cur.WriteByte(c)
			}
		case '\r':
			if depth > 0 {
				cur.WriteByte(' ')
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// stepName returns the name in the script's first "# step: <name>" comment.
func stepName(script string) string {
	i := strings.Index(script, StepComment)
	if i < 0 {
		return ""
	}
	rest := script[i+len(StepComment):]
	if j := strings.IndexAny(rest, "\r\n"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// tokens splits a statement at whitespace and pipes outside quotes and brackets.
// A pipe becomes its own "|" token.
func tokens(stmt string) []string {
	var (
		out   []string
		cur   strings.Builder
		depth int
		quote byte
	)
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		if quote != 0 {
			cur.WriteByte(c)
			switch {
			case quote == '\'' && c == '\'':
				if i+1 < len(stmt) && stmt[i+1] == '\'' {
					cur.WriteByte('\'')
					i++
				} else {
					quote = 0
				}
			case quote == '"' && c == '`' && i+1 < len(stmt):
				cur.WriteByte(stmt[i+1])
				i++
			case quote == '"' && c == '"':
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
			cur.WriteByte(c)
		case '(', '{', '[':
			depth++
			cur.WriteByte(c)
		case ')', '}', ']':
			depth--
			cur.WriteByte(c)
		case ' ', '\t', '\r', '\n':
			if depth > 0 {
				cur.WriteByte(c)
			} else {
				flush()
			}
		case '|':
			if depth > 0 {
				cur.WriteByte(c)
			} else {
				flush()
				out = append(out, "|")
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// closing returns the index of the bracket closing the one at s[open], skipping
// quoted text, or -1.
func closing(s string, open int) int {
	depth := 0
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == quote {
				if quote == '\'' && i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				quote = 0
			} else if quote == '"' && c == '`' {
				i++
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// unquoteSingle reads a PowerShell single-quoted literal ('it”s').
func unquoteSingle(s string) string {
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

// QuotePS returns s as a PowerShell single-quoted literal. Single-quoted
// strings expand nothing, which is why scripts should pass paths and values
// this way.
func QuotePS(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// splitPipeline splits tokens at "|".
func splitPipeline(toks []string) [][]string {
	var out [][]string
	start := 0
	for i, t := range toks {
		if t == "|" {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

// switchParams are the parameters that take no value in the supported cmdlets.
var switchParams = map[string]bool{
	"force": true, "recurse": true, "nonewline": true, "raw": true, "passthru": true,
	"confirm": true, "whatif": true, "wait": true, "asjob": true, "noprofile": true,
}

// cmdArgs is a parsed cmdlet invocation: -Name value pairs, switches, positionals.
type cmdArgs struct {
	named      map[string]string
	switches   map[string]bool
	positional []string
}

func parseArgs(toks []string) cmdArgs {
	a := cmdArgs{named: map[string]string{}, switches: map[string]bool{}}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if len(t) > 1 && t[0] == '-' && isIdentStart(t[1]) {
			name := strings.ToLower(t[1:])
			if j := strings.IndexByte(name, ':'); j >= 0 { // -Force:$true / -Path:'x'
				val := t[1+j+1:]
				name = name[:j]
				if switchParams[name] {
					a.switches[name] = !strings.EqualFold(val, "$false")
				} else {
					a.named[name] = val
				}
				continue
			}
			if switchParams[name] || i+1 >= len(toks) || (len(toks[i+1]) > 1 && toks[i+1][0] == '-' && isIdentStart(toks[i+1][1])) {
				a.switches[name] = true
				continue
			}
			a.named[name] = toks[i+1]
			i++
			continue
		}
		a.positional = append(a.positional, t)
	}
	return a
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// get returns the first of the named parameters present (PowerShell accepts any
// unambiguous prefix; the bootstrap uses full names, plus the common aliases).
func (a cmdArgs) get(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := a.named[n]; ok {
			return v, true
		}
	}
	return "", false
}

// getOrPos returns a named parameter or the positional at index pos.
func (a cmdArgs) getOrPos(pos int, names ...string) (string, bool) {
	if v, ok := a.get(names...); ok {
		return v, true
	}
	if pos < len(a.positional) {
		return a.positional[pos], true
	}
	return "", false
}
