package pwsh

import (
	"os"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// BenchmarkTreeSitterOnly is the grammar's parse without copying the tree.
func BenchmarkTreeSitterOnly(b *testing.B) {
	raw, err := os.ReadFile("../../bootstrap/testdata/image-steps.ps1")
	if err != nil {
		b.Fatal(err)
	}
	p := parsers.Get().(*sitter.Parser)
	defer parsers.Put(p)
	b.SetBytes(int64(len(raw)))
	for i := 0; i < b.N; i++ {
		p.Parse(raw, nil).Close()
	}
}
