// Command vulngate reads govulncheck's JSON output (-format json) on stdin and
// fails when the code calls a known vulnerability, with one exception: a
// vulnerability of the Go standard library that the release toolchain
// (go.mod's toolchain directive) fixes. Release builds run with GOTOOLCHAIN
// at its default (auto), so the go command builds them with that toolchain
// (https://go.dev/doc/toolchain); the Go on these machines is pinned
// (GOTOOLCHAIN=local) and may lag it, which makes the standard library's
// fixes a question for the release, not for the local build. Each finding it
// lets through is printed, so the exception stays visible.
//
// Usage: govulncheck -format json ./... | go run ./tools/vulngate go.mod
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// message is one value of govulncheck's JSON stream
// (golang.org/x/vuln/internal/govulncheck: Message, Finding, Frame).
type message struct {
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: govulncheck -format json ./... | vulngate go.mod")
		os.Exit(2)
	}
	release, err := releaseToolchain(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(2)
	}
	called, err := calledFindings(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(2)
	}
	allowed, failed := gate(called, release)
	for _, a := range allowed {
		fmt.Println("vulngate:", a)
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "vulngate: the code calls %d known vulnerabilities; upgrade the modules named:\n  %s\n", len(failed), strings.Join(failed, "\n  "))
		os.Exit(1)
	}
	fmt.Printf("vulngate: no called vulnerability outside what the release toolchain fixes (%d findings read)\n", len(called))
}

type finding struct{ id, module, version, pkg, fixed string }

// gate splits the called findings into those the release toolchain fixes
// (standard library ones fixed at or before it) and the rest, which fail.
func gate(called []finding, release string) (allowed, failed []string) {
	for _, f := range called {
		if f.module == "stdlib" && release != "" && f.fixed != "" && semver.Compare(f.fixed, release) <= 0 {
			allowed = append(allowed, fmt.Sprintf("%s in the standard library (%s), fixed in %s: the release toolchain %s has the fix", f.id, f.pkg, f.fixed, release))
			continue
		}
		failed = append(failed, fmt.Sprintf("%s in %s %s (%s), fixed in %s: https://pkg.go.dev/vuln/%s", f.id, f.module, f.version, f.pkg, orNone(f.fixed), f.id))
	}
	return allowed, failed
}

// calledFindings returns one finding per vulnerability whose trace reaches
// a function: govulncheck reports the others (a vulnerable module or package
// that the code never calls into) without a function in the first frame.
func calledFindings(r io.Reader) ([]finding, error) {
	seen := map[string]finding{}
	dec := json.NewDecoder(r)
	for {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading govulncheck's output: %w", err)
		}
		if m.Finding == nil || len(m.Finding.Trace) == 0 || m.Finding.Trace[0].Function == "" {
			continue
		}
		t := m.Finding.Trace[0]
		seen[m.Finding.OSV] = finding{id: m.Finding.OSV, module: t.Module, version: t.Version, pkg: t.Package, fixed: m.Finding.FixedVersion}
	}
	out := make([]finding, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// releaseToolchain is go.mod's toolchain directive as a semver ("v1.26.10"),
// or "" without one.
func releaseToolchain(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		return "", err
	}
	if f.Toolchain == nil {
		return "", nil
	}
	return "v" + strings.TrimPrefix(f.Toolchain.Name, "go"), nil
}

func orNone(v string) string {
	if v == "" {
		return "no release yet"
	}
	return v
}
