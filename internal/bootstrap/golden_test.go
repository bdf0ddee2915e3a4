package bootstrap

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/goldenfile"
)

// golden compares got with testdata/<name> (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func joinSteps(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString("########## " + s.Name + "\n" + s.Script + "\n")
		for _, f := range s.Files {
			// As comments, so the file still parses (TestScriptsParse).
			b.WriteString("# ---------- " + s.Name + " uploads " + f.Path + ":\n")
			for _, l := range strings.SplitAfter(strings.TrimSuffix(string(f.Content), "\n"), "\n") {
				b.WriteString("# | " + l)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
