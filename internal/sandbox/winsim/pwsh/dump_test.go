package pwsh

import (
	"os"
	"testing"
)

// TestDump prints the tree of $PWSH_DUMP (a development aid).
func TestDump(t *testing.T) {
	src := os.Getenv("PWSH_DUMP")
	if src == "" {
		t.Skip("set PWSH_DUMP to a script")
	}
	s, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + s.Root.Dump())
}
