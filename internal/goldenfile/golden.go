// Package goldenfile compares test output with files under testdata/, and
// rewrites them when the test binary runs with -update; it also reads the
// fuzz corpora kept there (FuzzStrings). Tests of the
// rendered PowerShell steps (internal/bootstrap) and of the node agents'
// manifests and scripts (internal/kube) share it.
package goldenfile

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Updating reports whether the run rewrites golden files.
func Updating() bool { return *update }

// Check compares got with testdata/<name>, or rewrites the file under -update.
func Check(t testing.TB, name, got string) {
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
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run the test with -update after checking the change):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}
