package pwsh

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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
	values = append(values, fuzzCorpus(t, "testdata/fuzz")...)
	values = append(values, fuzzCorpus(t, filepath.Join("..", "..", "..", "psquote", "testdata", "fuzz"))...)
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

// fuzzCorpus reads every string value of the fuzz corpus files under dir
// (one directory per fuzz target, files in "go test fuzz v1" form); none
// when dir does not exist.
func fuzzCorpus(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }() // read only: nothing to lose on close
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if lit, ok := strings.CutPrefix(line, "string("); ok && strings.HasSuffix(lit, ")") {
				v, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				if err != nil {
					return err
				}
				out = append(out, v)
			}
		}
		return sc.Err()
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading the fuzz corpus %s: %v", dir, err)
	}
	return out
}
