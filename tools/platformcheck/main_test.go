package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRefusesWhatTheCompilerRefuses: a module whose files break on some
// platforms only, each the way a dependency can: a type error in a file
// build constraints select for one GOOS, a constant that overflows a 32-bit
// int, a function whose assembly exists for one architecture only. Each
// platform fails for its own reasons and passes where the compiler would
// (`go build` of this module for each platform, run by hand, refused the
// same files; it stops at the first package that fails, so on 386 and arm
// it named asm.go, and big.go once asm was no longer imported).
func TestCheckRefusesWhatTheCompilerRefuses(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/canary\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(big) }\n",
		// Only windows builds this file.
		"bad_windows.go": "package main\n\nvar _ int = \"not an int\"\n",
		// 1<<40 overflows int where int has 32 bits (386, arm).
		"big.go": "package main\n\nvar big int = 1 << 40\n",
		// A package with assembly for amd64 only and no Go fallback: the
		// other architectures compile it without assembly, so -complete.
		"asm/asm.go":       "package asm\n\nfunc Add(a, b int) int\n",
		"asm/add_amd64.s":  "#include \"textflag.h\"\nTEXT ·Add(SB),NOSPLIT,$0-24\n\tRET\n",
		"asm/use.go":       "package asm\n\nvar _ = Add\n",
		"main_asm.go":      "package main\n\nimport _ \"example.com/canary/asm\"\n",
		"linkname/ln.go":   "package linkname\n\nimport _ \"unsafe\"\n\n//go:linkname nanotime runtime.nanotime\nfunc nanotime() int64\n\nvar Now = nanotime\n",
		"main_linkname.go": "package main\n\nimport _ \"example.com/canary/linkname\"\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for platform, want := range map[string][]string{
		"linux_amd64":   nil,
		"darwin_arm64":  {"missing function body (Add)"},
		"windows_amd64": {"bad_windows.go", "cannot use \"not an int\""},
		"linux_386":     {"big.go", "(overflows)", "missing function body (Add)"},
		"freebsd_arm":   {"big.go", "(overflows)", "missing function body (Add)"},
	} {
		problems, count, err := check(platform, dir, ".")
		if err != nil {
			t.Errorf("%s: %v", platform, err)
			continue
		}
		if count < 10 {
			t.Errorf("%s: %d packages checked, the standard library's among them: too few", platform, count)
		}
		got := strings.Join(problems, "\n")
		if want == nil && got != "" {
			t.Errorf("%s builds, but the check says:\n%s", platform, got)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: want a problem naming %q, got:\n%s", platform, w, got)
			}
		}
	}
}

func TestCheckRefusesAMalformedPlatform(t *testing.T) {
	if _, _, err := check("linux", t.TempDir(), "."); err == nil || !strings.Contains(err.Error(), "os_arch") {
		t.Errorf("check(linux) = %v, want an error naming os_arch", err)
	}
}
