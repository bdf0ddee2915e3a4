package pwsh

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/wincluster/terraform-provider-windows/internal/goldenfile"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// TestQuoteTableMatchesPsquote holds the simulator's quote table (quotes.go,
// copied from PowerShell's CharTraits.cs) against the provider's
// (internal/psquote), which the simulator must not import: a character one
// of them reads as a quote and the other does not fails here. Both are
// asked about every character, and every value of the fuzz corpora (this
// package's and psquote's testdata/fuzz) and of the seeds of
// FuzzSingleQuote, written by psquote.Single, must read back by the
// simulator's rules (verbatimValue) as exactly that value.
func TestQuoteTableMatchesPsquote(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isSingleQuote(r) != psquote.IsSingleQuote(r) {
			t.Errorf("%U: the simulator's single quote %v, psquote's %v", r, isSingleQuote(r), psquote.IsSingleQuote(r))
		}
		isDouble := r == '"' || strings.ContainsRune(typographicDoubleQuotes, r)
		if isDouble != psquote.IsDoubleQuote(r) {
			t.Errorf("%U: the simulator's double quote %v, psquote's %v", r, isDouble, psquote.IsDoubleQuote(r))
		}
	}
	values := append([]string{}, singleQuoteSeeds...)
	values = append(values, goldenfile.FuzzStrings(t, "testdata/fuzz")...)
	values = append(values, goldenfile.FuzzStrings(t, filepath.Join("..", "..", "..", "psquote", "testdata", "fuzz"))...)
	for _, s := range values {
		if !utf8.ValidString(s) {
			continue // no script can hold it (FuzzSingleQuote)
		}
		q := psquote.Single(s)
		if got, ok := verbatimValue(q); !ok || got != s {
			t.Errorf("psquote.Single(%q) = %q reads back as %q (whole token: %v)", s, q, got, ok)
		}
	}
}
