// Command platformcheck type-checks the provider, with every package it
// imports, for each platform the release builds, from source and without
// compiling: what `go build` would reject on a platform before it links.
//
//	go run ./tools/platformcheck $(go run ./tools/releasecheck -platforms)
//
// `make release-platforms` compiles and links each platform as GoReleaser
// does; from an empty build cache that costs about 275 CPU-seconds a
// platform (the compiler's back end run over the whole module graph), which
// CI's cold budget cannot hold thirteen times. Type-checking is the part of
// a build that differs between platforms for a pure-Go program
// (CGO_ENABLED=0): which files build constraints select, which symbols each
// platform's files declare, the sizes of int and uintptr that decide a
// constant's overflow. It runs go/types, the checker the compiler's own
// (types2) is kept equal to, over the packages `go list` selects for
// GOOS/GOARCH, with that platform's sizes (golang.org/x/tools/go/packages).
//
// The compiler also refuses a function declared without a body in a package
// that has no assembly or other non-Go file to provide it (cmd/go passes it
// -complete; cmd/compile reports "missing function body" unless the
// function is //go:linkname'd): checked here too, since go/types accepts it.
//
// What it does not prove, and only a link does: that an assembly file
// declares every symbol the Go files expect on that architecture, and that
// the linker accepts the result. `make release-platforms` and the release
// itself do.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: platformcheck [-pkg PATTERN] GOOS_GOARCH...")
		flag.PrintDefaults()
	}
	pattern := flag.String("pkg", ".", "the package to check, with everything it imports")
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed := 0
	for _, platform := range flag.Args() {
		began := time.Now()
		problems, count, err := check(platform, "", *pattern)
		if err != nil {
			fmt.Fprintf(os.Stderr, "== %s: %v\n", platform, err)
			failed++
			continue
		}
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "%s: %s\n", platform, p)
		}
		if len(problems) > 0 {
			fmt.Printf("== %s: does not build (%d problems)\n", platform, len(problems))
			failed++
			continue
		}
		fmt.Printf("== %s: %d packages type-check (%.0fs)\n", platform, count, time.Since(began).Seconds())
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "platformcheck: %d of %d platforms do not build\n", failed, flag.NArg())
		os.Exit(1)
	}
}

// check loads pattern and everything it imports for platform (os_arch, as
// GoReleaser and the registry name it) from source, type-checked, and
// returns what the compiler would refuse.
func check(platform, dir, pattern string) (problems []string, packageCount int, err error) {
	goos, goarch, ok := strings.Cut(platform, "_")
	if !ok || goos == "" || goarch == "" {
		return nil, 0, fmt.Errorf("%q is not os_arch", platform)
	}
	cfg := &packages.Config{
		// Syntax and deps: every package is type-checked from source, none
		// read from export data (which would mean compiling it).
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax,
		// As .goreleaser.yml builds: CGO_ENABLED=0, -trimpath.
		Dir:        dir,
		Env:        append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
		BuildFlags: []string{"-trimpath"},
	}
	roots, err := packages.Load(cfg, pattern)
	if err != nil {
		return nil, 0, err
	}
	if len(roots) == 0 {
		return nil, 0, fmt.Errorf("%s matches no package", pattern)
	}
	seen := 0
	packages.Visit(roots, nil, func(p *packages.Package) {
		seen++
		if len(p.Syntax) == 0 && len(p.GoFiles) > 0 && p.PkgPath != "unsafe" {
			// Read from export data, that is compiled: not what this checks.
			problems = append(problems, p.PkgPath+": not type-checked from source")
		}
		for _, e := range p.Errors {
			problems = append(problems, e.Error())
		}
		problems = append(problems, missingBodies(p)...)
	})
	if seen < 2 {
		// The provider imports hundreds of packages: fewer means the load
		// went wrong in a way that reported no error.
		return nil, seen, fmt.Errorf("only %d package loaded for %s", seen, pattern)
	}
	runtime.GC() // the next platform's graph is as large; let this one go first
	return problems, seen, nil
}

// completeExempt are the standard library's packages cmd/go does not
// compile with -complete although they have no assembly (cmd/go/internal/work
// gc.go: their bodiless functions are provided by the runtime).
var completeExempt = map[string]bool{
	"bytes": true, "internal/poll": true, "net": true, "os": true,
	"runtime/metrics": true, "runtime/pprof": true, "runtime/trace": true,
	"sync": true, "syscall": true, "time": true,
}

// missingBodies reports the functions declared without a body that the
// compiler refuses (cmd/compile/internal/noder writer.go): in a package
// cmd/go calls complete, with no non-Go file (assembly, .syso) for this
// platform, or a bodyless init anywhere; unless //go:linkname names it. That is
// how a dependency whose assembly exists for some architectures only fails
// on the others.
func missingBodies(p *packages.Package) []string {
	complete := !completeExempt[p.PkgPath]
	for _, f := range p.OtherFiles {
		if !strings.HasSuffix(f, ".h") { // cmd/go counts no header files
			complete = false
		}
	}
	linknamed := map[string]bool{}
	for _, f := range p.Syntax {
		linknames(f, linknamed)
	}
	var out []string
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body != nil || linknamed[fn.Name.Name] {
				continue
			}
			// A bodyless init is refused even with assembly beside it.
			if !complete && !(fn.Recv == nil && fn.Name.Name == "init") {
				continue
			}
			out = append(out, fmt.Sprintf("%s: missing function body (%s)", p.Fset.Position(fn.Pos()), fn.Name.Name))
		}
	}
	return out
}

// linknames adds to names the local names a file's //go:linkname
// directives name (the compiler collects them across the package).
func linknames(f *ast.File, names map[string]bool) {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if rest, ok := strings.CutPrefix(c.Text, "//go:linkname "); ok {
				if fields := strings.Fields(rest); len(fields) > 0 {
					names[fields[0]] = true
				}
			}
		}
	}
}
