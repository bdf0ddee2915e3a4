package winsim

import (
	"fmt"
	"testing"
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
