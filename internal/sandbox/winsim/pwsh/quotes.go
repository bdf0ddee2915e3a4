package pwsh

import (
	"strings"
	"unicode/utf8"
)

// PowerShell's tokenizer reads the typographic quotes U+2018 to U+201B as
// single quotes and U+201C to U+201E as double quotes (CharTraits.cs
// IsSingleQuote and IsDoubleQuote, github.com/PowerShell/PowerShell
// src/System.Management.Automation/engine/parser): one opens, closes or
// (doubled) escapes a string as ' and " do (tokenizer.cs ScanStringLiteral,
// ScanStringExpandable, ScanHereStringLiteral). The tree-sitter grammar knows
// only the ASCII quotes, so for a script with typographic quotes the two can
// read different strings, and a value that tree-sitter sees inside a string
// would, on Windows, end it and run as a statement. checkQuotes reads every
// token with PowerShell's rules and refuses a script where they disagree;
// verbatimValue evaluates single-quoted strings by the same rules.
//
// Modelled: typographic quotes inside a single-quoted string (a doubled pair
// is one quote, the second; a lone one ends the string on Windows, so it is
// refused here), typographic single quotes inside double-quoted strings and
// here-strings (plain text on Windows too). Refused as not modelled: a
// typographic quote anywhere else (a bare word, a command name, a variable
// name: PowerShell starts a string there), a typographic double quote inside
// a double-quoted string or here-string (it closes or escapes the string on
// Windows), and a here-string line that Windows would read as its end.

// PowerShell's quote characters: the simulator's own table, copied from
// the tokenizer (github.com/PowerShell/PowerShell
// src/System.Management.Automation/engine/parser/CharTraits.cs: the
// SpecialChars constants and CharExtensions.IsSingleQuote and
// IsDoubleQuote), never from the provider's psquote, which the simulator
// judges. quote_table_test.go holds the two against each other.
const (
	quoteSingleLeft    = '\u2018' // left single quotation mark
	quoteSingleRight   = '\u2019' // right single quotation mark
	quoteSingleBase    = '\u201a' // single low-9 quotation mark
	quoteReversed      = '\u201b' // single high-reversed-9 quotation mark
	quoteDoubleLeft    = '\u201c' // left double quotation mark
	quoteDoubleRight   = '\u201d' // right double quotation mark
	quoteLowDoubleLeft = '\u201e' // low double left quote (German)
)

// isSingleQuote is CharExtensions.IsSingleQuote: ' and the four
// typographic single quotes.
func isSingleQuote(r rune) bool {
	switch r {
	case '\'', quoteSingleLeft, quoteSingleRight, quoteSingleBase, quoteReversed:
		return true
	}
	return false
}

const (
	typographicDoubleQuotes = string(quoteDoubleLeft) + string(quoteDoubleRight) + string(quoteLowDoubleLeft)
	typographicQuotes       = string(quoteSingleLeft) + string(quoteSingleRight) + string(quoteSingleBase) +
		string(quoteReversed) + typographicDoubleQuotes
	typographicDashes = "\u2013\u2014\u2015"
	// typography is every character checkQuotes looks for.
	typography = typographicQuotes + typographicDashes
)

// checkQuotes returns the first token that PowerShell and the grammar read
// differently (by their quotes or dashes), or nil.
func checkQuotes(n *Node) *ParseError {
	refuse := func() *ParseError { return &ParseError{Line: n.Line, Col: n.Col, Token: n.Text} }
	switch n.Kind {
	case "verbatim_string_characters":
		if _, ok := verbatimValue(n.Text); !ok {
			return refuse()
		}
		return nil
	case "verbatim_here_string_characters":
		if hereEndsEarly(n.Text, isSingleQuote) {
			return refuse()
		}
		return nil
	case "expandable_string_literal", "expandable_here_string_literal":
		// The literal text between the expanded parts is no node of its
		// own: read the gaps between the children.
		pos := 0
		for _, k := range n.Kids {
			start := indexOfChild(n, k)
			if start >= pos {
				if strings.ContainsAny(n.Text[pos:start], typographicDoubleQuotes) {
					return refuse()
				}
				pos = start + len(k.Text)
			}
		}
		if strings.ContainsAny(n.Text[min(pos, len(n.Text)):], typographicDoubleQuotes) {
			return refuse()
		}
	default:
		if len(n.Kids) == 0 && strings.ContainsAny(n.Text, typography) {
			return refuse()
		}
	}
	for _, k := range n.Kids {
		if pe := checkQuotes(k); pe != nil {
			return pe
		}
	}
	return nil
}

// verbatimValue reads a single-quoted string token as PowerShell's
// ScanStringLiteral does: any two single-quote characters in a row are one
// quote (the second), and the first lone one ends the string. ok is false
// when that end is not the token's last character (Windows would end the
// string earlier, or read on past it).
func verbatimValue(t string) (string, bool) {
	if !strings.ContainsAny(t, typographicQuotes) {
		return strings.ReplaceAll(t[1:len(t)-1], "''", "'"), true
	}
	var b strings.Builder
	rest := t[1:] // the opening quote
	for rest != "" {
		r, size := utf8.DecodeRuneInString(rest)
		rest = rest[size:]
		if isSingleQuote(r) {
			next, nsize := utf8.DecodeRuneInString(rest)
			if rest == "" || !isSingleQuote(next) {
				return b.String(), rest == ""
			}
			r, rest = next, rest[nsize:]
		}
		b.WriteRune(r)
	}
	return b.String(), false
}

// hereEndsEarly reports whether a here-string's body has a line that
// PowerShell reads as its end: a quote of the kind (any of them) followed
// by @ at the start of a line (tokenizer.cs ScanHereStringLiteral).
func hereEndsEarly(t string, isQuote func(rune) bool) bool {
	lines := strings.Split(t, "\n")
	for _, l := range lines[1 : len(lines)-1] {
		r, size := utf8.DecodeRuneInString(l)
		if isQuote(r) && strings.HasPrefix(l[size:], "@") {
			return true
		}
	}
	return false
}
