package winsim

import (
	"os"
	"strings"
	"testing"
)

// TestProgramsDocumented: every program the host runs is described, with its
// upstream source, in the package doc; a program added without its row fails.
func TestProgramsDocumented(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ToLower(string(b))
	programsMu.RLock()
	defer programsMu.RUnlock()
	if len(programs) == 0 {
		t.Fatal("no programs registered")
	}
	for name := range programs {
		if !strings.Contains(doc, name) {
			t.Errorf("program %q is registered but internal/sandbox/winsim/doc.go does not describe it", name)
		}
	}
}
