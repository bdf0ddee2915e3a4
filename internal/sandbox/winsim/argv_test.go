package winsim

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/goldenfile"
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
	values = append(values, goldenfile.FuzzStrings(t, "testdata/fuzz")...)
	values = append(values, goldenfile.FuzzStrings(t, filepath.Join("..", "..", "psquote", "testdata", "fuzz"))...)
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
