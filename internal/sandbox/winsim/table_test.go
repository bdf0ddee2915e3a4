package winsim

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the command table in doc.go")

const (
	tableStart = "// BEGIN COMMAND TABLE (generated from the cmdlet registry: go test ./internal/sandbox/winsim -run TestCommandTable -update-doc)\n"
	tableEnd   = "// End of the command table.\n"
)

// TestCommandTable keeps doc.go's table of modelled commands, parameters and
// .NET types identical to the registry the engine binds against.
func TestCommandTable(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatal("doc.go has no command table markers")
	}
	var want strings.Builder
	want.WriteString("//\n")
	for _, l := range commandTable() {
		if l == "" {
			want.WriteString("//\n")
			continue
		}
		want.WriteString("//\t" + l + "\n")
	}
	want.WriteString("//\n")
	got := doc[i+len(tableStart) : j]
	if got == want.String() {
		return
	}
	if *updateDoc {
		if err := os.WriteFile("doc.go", []byte(doc[:i+len(tableStart)]+want.String()+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("doc.go's command table differs from the cmdlet registry; run go test ./internal/sandbox/winsim -run TestCommandTable -update-doc and review the change")
}
