// Package psquote writes values into PowerShell scripts and Windows command
// lines so that no value can end a string or start a statement.
//
// PowerShell's tokenizer treats more than the ASCII quotes as quotes: the
// typographic single quotes U+2018, U+2019, U+201A and U+201B, and the
// typographic double quotes U+201C, U+201D and U+201E (CharTraits.cs,
// IsSingleQuote and IsDoubleQuote, in github.com/PowerShell/PowerShell
// src/System.Management.Automation/engine/parser). A value escaped by
// doubling ' alone can still close its string with ’ and run what follows.
// Single doubles every single-quote character, as PowerShell's own
// CodeGeneration.EscapeSingleQuotedStringContent (engine/lang/codegen.cs)
// does; the tokenizer (tokenizer.cs, ScanStringLiteral) reads any two
// single-quote characters in a row as an escaped quote and keeps the second.
//
// Every value goes into a script as a single-quoted literal: nothing in one
// expands ($, backticks and double quotes are plain text there), so there is
// no double-quoted or here-string form to get right. Text put together in a
// script is concatenated from literals: ('checksum mismatch for ' + $url).
package psquote

import (
	"errors"
	"fmt"
	"strings"
)

// The typographic quotes PowerShell's tokenizer reads as quotes
// (CharTraits.cs, SpecialChars).
const (
	QuoteSingleLeft    = '\u2018' // left single quotation mark
	QuoteSingleRight   = '\u2019' // right single quotation mark
	QuoteSingleBase    = '\u201a' // single low-9 quotation mark
	QuoteReversed      = '\u201b' // single high-reversed-9 quotation mark
	QuoteDoubleLeft    = '\u201c' // left double quotation mark
	QuoteDoubleRight   = '\u201d' // right double quotation mark
	QuoteLowDoubleLeft = '\u201e' // low double left quotation mark
)

// IsSingleQuote reports whether PowerShell reads r as a single quote
// (CharTraits.cs IsSingleQuote).
func IsSingleQuote(r rune) bool {
	switch r {
	case '\'', QuoteSingleLeft, QuoteSingleRight, QuoteSingleBase, QuoteReversed:
		return true
	}
	return false
}

// IsDoubleQuote reports whether PowerShell reads r as a double quote
// (CharTraits.cs IsDoubleQuote).
func IsDoubleQuote(r rune) bool {
	switch r {
	case '"', QuoteDoubleLeft, QuoteDoubleRight, QuoteLowDoubleLeft:
		return true
	}
	return false
}

// Single returns s as a PowerShell single-quoted string literal whose value
// is exactly s: every single-quote character is written twice, as
// EscapeSingleQuotedStringContent does. Any string can be quoted this way
// (PowerShell's tokenizer ends a single-quoted string only at an undoubled
// quote, never at a newline or a NUL).
func Single(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		b.WriteRune(r)
		if IsSingleQuote(r) {
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// ErrCommandLine is why a value cannot be one argument of a Windows command
// line: a NUL ends the command line (it is a C string), and a carriage return
// or line feed ends the line that the service control manager, sc.exe and
// cmd.exe read.
var ErrCommandLine = errors.New("a NUL, carriage return or line feed cannot be part of a Windows command line")

// CheckArg reports whether s can be one argument of a Windows command line.
func CheckArg(s string) error {
	if i := strings.IndexAny(s, "\x00\r\n"); i >= 0 {
		return fmt.Errorf("%q: %w", s, ErrCommandLine)
	}
	return nil
}

// Arg returns s as one argument of a Windows command line, as the Microsoft
// C runtime and Go's own os.Args (CommandLineToArgvW's rules) split it: a
// value with a space, tab or double quote is double-quoted, its double quotes
// escaped with a backslash and the backslashes before them doubled. A value
// without any is returned as it is. This is Go's syscall.EscapeArg
// (syscall/exec_windows.go, built for Windows only), which the services'
// Go programs (kube-log-runner, the kubelet) are read back by. The caller
// checks the value with CheckArg first.
func Arg(s string) string {
	if s == "" {
		return `""`
	}
	if !strings.ContainsAny(s, "\" \t") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}
