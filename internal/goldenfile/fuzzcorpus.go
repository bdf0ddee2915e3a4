package goldenfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzStrings reads every string value of the fuzz corpus files under dir
// (testdata/fuzz: one directory per fuzz target, each file in the
// "go test fuzz v1" form, one value a line), so a test can hold two
// implementations together on every input the fuzzers kept; none when dir
// does not exist.
func FuzzStrings(t testing.TB, dir string) []string {
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
			lit, ok := strings.CutPrefix(strings.TrimSpace(line), "string(")
			if !ok || !strings.HasSuffix(lit, ")") {
				continue
			}
			v, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading the fuzz corpus %s: %v", dir, err)
	}
	return out
}
