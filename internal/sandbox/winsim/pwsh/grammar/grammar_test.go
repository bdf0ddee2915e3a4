package grammar_test

import (
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh/grammar"
)

// TestLanguage loads the grammar into a parser (which checks its ABI version
// against go-tree-sitter's) and parses one statement without an error.
func TestLanguage(t *testing.T) {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(sitter.NewLanguage(grammar.Language())); err != nil {
		t.Fatal(err)
	}
	tree := p.Parse([]byte("Get-Item -Path 'C:\\k' | Out-Null\n"), nil)
	defer tree.Close()
	if root := tree.RootNode(); root.HasError() || root.Kind() != "program" {
		t.Fatalf("parsed as %s", root.ToSexp())
	}
}
