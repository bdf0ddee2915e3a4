package pwsh

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// quoteContexts are the places a provider script puts a quoted value: an
// argument, an assignment, a concatenation inside parentheses, and a method
// argument (the script's own literals are double-quoted, so that only the
// value's is single-quoted), with the output Windows gives for value v.
var quoteContexts = []struct {
	name       string
	script     func(q string) string
	statements int
	want       func(v string) string
}{
	{"argument", func(q string) string { return "Write-Output " + q }, 1, func(v string) string { return v }},
	{"assignment", func(q string) string { return "$v = " + q + "\nWrite-Output $v" }, 2, func(v string) string { return v }},
	{"concatenation", func(q string) string { return `Write-Output ("<" + ` + q + ` + ">")` }, 1, func(v string) string { return "<" + v + ">" }},
	{"method", func(q string) string { return `Write-Output ("x".Replace("x", ` + q + `))` }, 1, func(v string) string { return v }},
}

// singleQuoteSeeds are FuzzSingleQuote's seeds; TestQuoteTableMatchesPsquote
// reads them too.
var singleQuoteSeeds = []string{"", "a", "it's", "x'; Start-Process calc; '", "x\u2019; Start-Process calc; \u2019",
	"\u2018\u2019\u201a\u201b", "\u201c$(calc)\u201d", "a\r\nb", "'@\n", "\u2019@", "$env:PATH `n", "''''", "\u2019'"}

// FuzzSingleQuote: for any string s, psquote.Single(s) in each context is
// read by the tree-sitter grammar (the outside parser the simulated hosts
// use) as the single string literal the script meant, no other statement
// appears, and the engine, which reads quotes as Windows does
// (quotes.go), evaluates it to exactly s.
func FuzzSingleQuote(f *testing.F) {
	for _, s := range singleQuoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// A script reaches Windows as UTF-16 (-EncodedCommand, a .ps1
			// with a BOM): invalid UTF-8 cannot be written there.
			t.Skip()
		}
		if strings.ContainsRune(s, 0) {
			// Windows reads a NUL inside a string (tokenizer.cs ends a string
			// only at a NUL at the end of input), tree-sitter ends its input
			// there: the simulator refuses such a script. No value reaches a
			// script with one: the validators refuse control characters.
			t.Skip()
		}
		q := psquote.Single(s)
		for _, c := range quoteContexts {
			script := c.script(q)
			parsed, err := Parse(script)
			if err != nil {
				t.Fatalf("%s: %q does not parse: %v", c.name, script, err)
			}
			lits := 0
			var walk func(n *Node)
			walk = func(n *Node) {
				if n.Kind == "verbatim_string_characters" && n.Text == q {
					lits++
				}
				for _, k := range n.Kids {
					walk(k)
				}
			}
			walk(parsed.Root)
			if lits != 1 {
				t.Fatalf("%s: %q: the quoted value is not one string literal:\n%s", c.name, script, parsed.Root.Dump())
			}
			if got := statements(parsed.Root); got != c.statements {
				t.Fatalf("%s: %q: %d statements:\n%s", c.name, script, got, parsed.Root.Dump())
			}
			h := newFakeHost()
			stdout, stderr, code := runFake(t, h, script, "")
			want := c.want(s)
			if code != 0 || stdout != want+"\r\n" {
				t.Fatalf("%s: %q: exit %d, stdout %q, want %q (stderr %q)", c.name, script, code, stdout, want+"\r\n", stderr)
			}
		}
	})
}

// statements counts the top-level statements of a program.
func statements(root *Node) int {
	n := 0
	for _, k := range root.Kids {
		if k.Kind == "statement_list" {
			n += len(k.named())
		}
	}
	return n
}

// TestTypographicQuotes: what Windows does with the typographic quotes
// (CharTraits.cs IsSingleQuote/IsDoubleQuote): the simulator reads a doubled
// one inside a single-quoted string as one quote, and refuses a script in
// which one would end a string or start one, as tree-sitter alone would not;
// and with the typographic dashes (IsDash), refused outside strings.
func TestTypographicQuotes(t *testing.T) {
	for _, tc := range []struct{ script, stdout, stderr string }{
		{"Write-Output 'it\u2019\u2019s'", "it\u2019s\r\n", ""},
		{"Write-Output 'a\u2018\u2018b\u201a\u201a\u201b\u201b'", "a\u2018b\u201a\u201b\r\n", ""},
		{"Write-Output \"it\u2019s\"", "it\u2019s\r\n", ""},
		{"Write-Output 'a\u201cb'", "a\u201cb\r\n", ""},
		// Windows: the string ends at ’ and Start-Process runs.
		{"Write-Output 'x\u2019; Start-Process calc; \u2019'", "", "ParserError"},
		{"Write-Output 'x\u2019'", "", "ParserError"},
		{"Write-Output \u2018x\u2019", "", "ParserError"},
		{"Write-Output \"a\u201d; calc; \u201c\"", "", "ParserError"},
		{"$s = @'\n\u2019@\nWrite-Output 1\n'@\n$s", "", "ParserError"},
		{"# it\u2019s a comment\nWrite-Output 1", "1\r\n", ""},
		// Dashes (CharTraits.cs IsDash): plain text in strings and comments;
		// elsewhere Windows reads them as '-', tree-sitter as letters.
		{"Write-Output 'a\u2013b\u2014c\u2015d'", "a\u2013b\u2014c\u2015d\r\n", ""},
		{"Write-Output \"a\u2013b $(1)\"", "a\u2013b 1\r\n", ""},
		{"# a \u2013 comment\nWrite-Output 1", "1\r\n", ""},
		{"Write-Output \u2013InputObject x", "", "ParserError"},
		{"Write-Output (1 \u2014eq 1)", "", "ParserError"},
		{"Write-Output \"$(1 \u2013eq 1)\"", "", "ParserError"},
	} {
		stdout, stderr, _ := runFake(t, newFakeHost(), tc.script, "")
		if stdout != tc.stdout || (tc.stderr == "") != (stderr == "") || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q: stdout %q stderr %q; want stdout %q stderr containing %q", tc.script, stdout, stderr, tc.stdout, tc.stderr)
		}
	}
}
