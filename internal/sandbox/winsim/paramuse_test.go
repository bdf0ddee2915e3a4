package winsim

import (
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// TestEveryParameterUsedOrRefused: every parameter a modelled cmdlet
// declares is either read by its implementation or marked Unmodelled (the
// binder then refuses it): a parameter the engine accepts and drops would
// be a silent yes. A parameter may also be NoEffect, with the reason it
// changes nothing on the simulated host (doc.go's command table shows it).
// The check reads the source: each cmdlet's Run function
// (found by its entry's file and line) and every function of the package it
// reaches that takes the *Call must read the parameter by name, through a
// Call accessor (Has, Str, Strs, Switch, Value) or Args[...]. A planted
// cmdlet that declares a parameter it never reads shows the check fails.
func TestEveryParameterUsedOrRefused(t *testing.T) {
	idx := newSourceIndex(t, ".", filepath.Join(".", "pwsh"))
	cmds := append(pwsh.BuiltinCmdlets(), hostCmdlets()...)
	checked := 0
	for _, c := range cmds {
		for _, problem := range idx.unread(c) {
			t.Error(problem)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("checked %d cmdlets; the registry has more", checked)
	}

	planted := &Cmdlet{Name: "Planted-Cmdlet", Params: []*Param{P("Used", "System.String", -1), P("Dropped", "System.String", -1), P("Refused", "System.String", -1, Unmodelled),
		P("Inert", "SwitchParameter", -1, NoEffect("the planted control's"))},
		Run: plantedRun}
	got := idx.unread(planted)
	if len(got) != 1 || !strings.Contains(got[0], "-Dropped") {
		t.Fatalf("the planted cmdlet gave %q; want exactly one problem naming -Dropped", got)
	}
}

// plantedRun reads -Used only (TestEveryParameterUsedOrRefused's control).
func plantedRun(c *Call) error {
	c.Write(c.Str("Used"))
	return nil
}

// sourceIndex is the parsed source of the packages that implement cmdlets.
type sourceIndex struct {
	fset *gotoken.FileSet
	// files by absolute path
	files map[string]*ast.File
	// callFuncs: package functions and methods (by name) with a *Call
	// parameter, the only ones that can read a cmdlet's parameters.
	// Local closures that take the Call (get := func(c *Call, ...)) are
	// there too, by their variable's name.
	callFuncs map[string][]ast.Node
}

func newSourceIndex(t *testing.T, dirs ...string) *sourceIndex {
	t.Helper()
	idx := &sourceIndex{fset: gotoken.NewFileSet(), files: map[string]*ast.File{}, callFuncs: map[string][]ast.Node{}}
	for _, d := range dirs {
		matches, err := filepath.Glob(filepath.Join(d, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			abs, err := filepath.Abs(m)
			if err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(idx.fset, abs, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			idx.files[abs] = f
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					if x.Body != nil && takesCall(x.Type) {
						idx.callFuncs[x.Name.Name] = append(idx.callFuncs[x.Name.Name], x.Body)
					}
				case *ast.AssignStmt:
					for i, rhs := range x.Rhs {
						if fl, ok := rhs.(*ast.FuncLit); ok && takesCall(fl.Type) && i < len(x.Lhs) {
							if id, ok := x.Lhs[i].(*ast.Ident); ok {
								idx.callFuncs[id.Name] = append(idx.callFuncs[id.Name], fl.Body)
							}
						}
					}
				}
				return true
			})
		}
	}
	return idx
}

// takesCall reports whether a function type has a *Call (or *pwsh.Call)
// parameter.
func takesCall(ft *ast.FuncType) bool {
	for _, f := range ft.Params.List {
		star, ok := f.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		switch x := star.X.(type) {
		case *ast.Ident:
			if x.Name == "Call" {
				return true
			}
		case *ast.SelectorExpr:
			if x.Sel.Name == "Call" {
				return true
			}
		}
	}
	return false
}

// callAccessors are the Call methods that read a bound parameter by name.
var callAccessors = map[string]bool{"Has": true, "Str": true, "Strs": true, "Switch": true, "Value": true}

// unread lists c's modelled parameters that its Run never reads.
func (idx *sourceIndex) unread(c *Cmdlet) []string {
	if c.Run == nil {
		return []string{c.Name + ": no Run function"}
	}
	fn := runtime.FuncForPC(reflect.ValueOf(c.Run).Pointer())
	file, line := fn.FileLine(fn.Entry())
	body := idx.funcAt(file, line)
	if body == nil {
		return []string{fmt.Sprintf("%s: cannot find its Run function (%s) at %s:%d", c.Name, fn.Name(), file, line)}
	}
	read := map[string]bool{}
	seen := map[ast.Node]bool{}
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		ast.Inspect(n, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && callAccessors[sel.Sel.Name] && len(x.Args) == 1 {
					if s, ok := stringLit(x.Args[0]); ok {
						read[s] = true
					}
				}
				// A helper that takes the Call and a parameter's name
				// (pipelineItems(c, "InputObject")) reads it.
				if idx.helper(x.Fun) {
					for _, a := range x.Args {
						if s, ok := stringLit(a); ok {
							read[s] = true
						}
					}
				}
			case *ast.IndexExpr:
				if sel, ok := x.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Args" {
					if s, ok := stringLit(x.Index); ok {
						read[s] = true
					}
				}
			case *ast.Ident:
				// A package function or method that takes the Call,
				// called or passed on (eachService(c, startOne)).
				for _, b := range idx.callFuncs[x.Name] {
					visit(b)
				}
			case *ast.SelectorExpr:
				for _, b := range idx.callFuncs[x.Sel.Name] {
					visit(b)
				}
			}
			return true
		})
	}
	visit(body)
	var out []string
	for _, p := range c.Params {
		if p.Unmodelled || p.Inert != "" || read[p.Name] {
			continue
		}
		out = append(out, fmt.Sprintf("%s -%s: declared as modelled, but its implementation never reads it (implement it, mark it Unmodelled so the binder refuses it, or NoEffect with the reason it changes nothing here)", c.Name, p.Name))
	}
	sort.Strings(out)
	return out
}

// helper reports whether a called function is one of the package's
// functions that take the Call.
func (idx *sourceIndex) helper(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return len(idx.callFuncs[f.Name]) > 0
	case *ast.SelectorExpr:
		return len(idx.callFuncs[f.Sel.Name]) > 0
	}
	return false
}

// funcAt is the body of the function literal or declaration that starts on
// file:line.
func (idx *sourceIndex) funcAt(file string, line int) ast.Node {
	f := idx.files[file]
	if f == nil {
		return nil
	}
	var found ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			if idx.fset.Position(x.Pos()).Line == line {
				found = x.Body
			}
		case *ast.FuncDecl:
			if idx.fset.Position(x.Pos()).Line == line && x.Body != nil {
				found = x.Body
			}
		}
		return found == nil
	})
	return found
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != gotoken.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}
