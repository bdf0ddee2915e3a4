package bootstrap

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/bootstrap -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./internal/bootstrap -update after checking the change):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func joinSteps(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString("########## " + s.Name + "\n" + s.Script + "\n")
	}
	return b.String()
}
