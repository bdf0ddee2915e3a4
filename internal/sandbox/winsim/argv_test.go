package winsim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

func TestCommandLineToArgv(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:                 `[a b c]`,
		`"a b" c`:                `[a b c]`,
		`a\\b "c\"d" e\\\"f`:     `[a\\b c"d e\"f]`,
		`--config="C:\x y\z"`:    `[--config=C:\x y\z]`,
		`"C:\dir\\" next`:        `[C:\dir\ next]`,
		`--flag "two words"`:     `[--flag two words]`,
		`"in ""quoted"" string"`: `[in "quoted" string]`,
	} {
		if got := fmt.Sprintf("%s", CommandLineToArgv(in)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// argSeeds are FuzzEscapeArg's seeds: psquote's FuzzArg seeds and the
// shapes the hosts' command lines take.
var argSeeds = []string{
	"C:\\k\\kubelet.exe", "--node-labels=a=b", "", "C:\\Program Files\\k\\", `say "hi"`, `\\"`,
	`a\`, `\"`, "\t", `C:\Program Files\containerd\bin\containerd.exe`, `--config=C:\x y\z`, `a\\b c`, `""`,
}

// checkEscapeArg: the simulator's escapeArg writes what the provider's
// psquote.Arg writes (the simulator may not import psquote: this test holds
// the two copies together), and CommandLineToArgv reads it back as s.
func checkEscapeArg(t *testing.T, s string) {
	t.Helper()
	if psquote.CheckArg(s) != nil {
		return // no command line holds it; both refuse it before quoting
	}
	got := escapeArg(s)
	if want := psquote.Arg(s); got != want {
		t.Errorf("escapeArg(%q) = %s, psquote.Arg %s", s, got, want)
	}
	if back := CommandLineToArgv("x " + got); !slices.Equal(back, []string{"x", s}) {
		t.Errorf("escapeArg(%q) = %s reads back as %q", s, got, back[1:])
	}
}

// TestEscapeArgMatchesPsquote runs checkEscapeArg on the seeds and on
// every value of the fuzz corpora: this package's and psquote's
// testdata/fuzz (none when they do not exist).
func TestEscapeArgMatchesPsquote(t *testing.T) {
	values := append([]string{}, argSeeds...)
	values = append(values, fuzzCorpus(t, "testdata/fuzz")...)
	values = append(values, fuzzCorpus(t, filepath.Join("..", "..", "psquote", "testdata", "fuzz"))...)
	for _, s := range values {
		checkEscapeArg(t, s)
	}
}

// FuzzEscapeArg: checkEscapeArg for any value.
func FuzzEscapeArg(f *testing.F) {
	for _, s := range argSeeds {
		f.Add(s)
	}
	f.Fuzz(checkEscapeArg)
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
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if lit, ok := strings.CutPrefix(line, "string("); ok && strings.HasSuffix(lit, ")") {
				v, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				out = append(out, v)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading the fuzz corpus %s: %v", dir, err)
	}
	return out
}
