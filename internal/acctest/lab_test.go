package acctest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// labPackages are the test packages `make testacc-lab` runs (LAB_PKGS).
var labPackages = []string{"../provider", "../functions", "../resources"}

// TestSandboxTestsSkipInLab: in the packages a lab runs, every test that
// reaches into the in-process sandbox (acctest.Sandbox: simulated hosts,
// vcsim, the artifact server's fixtures) says so with RequireSandbox, which
// skips it in lab mode; without it, a lab run fails on a nil sandbox (a
// whole package lost to one nil dereference, seen in a lab run), unless it
// asks whether the sandbox is there (acctest.Sandbox == nil). Helpers the
// test calls are not followed: a test that uses the sandbox only through
// one names it too.
func TestSandboxTestsSkipInLab(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range labPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "TestAcc") {
					continue
				}
				usesSandbox, requires := false, false
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					// A test that asks whether the sandbox is there
					// (acctest.Sandbox == nil) handles the lab itself.
					if cmp, ok := n.(*ast.BinaryExpr); ok && (isSandbox(cmp.X) || isSandbox(cmp.Y)) {
						requires = true
					}
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "acctest" {
						switch sel.Sel.Name {
						case "Sandbox":
							usesSandbox = true
						case "RequireSandbox":
							requires = true
						}
					}
					return true
				})
				if usesSandbox && !requires {
					t.Errorf("%s: %s uses acctest.Sandbox without acctest.RequireSandbox(t, why): a lab run fails on it instead of skipping it",
						fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
		}
	}
}

func isSandbox(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "acctest" && sel.Sel.Name == "Sandbox"
}
