package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage: ARCHITECTURE.md is the map a newcomer
// checks against the tree, so every directory holding Go files (a package
// or a test-only one) must appear in it by its whole path (internal/x, in
// the layers' drawing or a table), not only as the parent of another.
// A package added, moved or renamed without the map fails here.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "build") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			dirs[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found only %d directories with Go files: is the test running from the module root?", len(dirs))
	}
	for dir := range dirs {
		if dir == "." {
			continue // main.go, named as such
		}
		named := regexp.MustCompile("(?m)(^|[\\s`(])" + regexp.QuoteMeta(dir) + "($|[\\s`).,:])")
		if !named.Match(doc) {
			t.Errorf("ARCHITECTURE.md does not name %s: add it where it belongs (its layer, the sandbox's table or the test harnesses)", dir)
		}
	}
}
