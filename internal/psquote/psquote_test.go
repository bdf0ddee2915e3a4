package psquote

import (
	"slices"
	"strings"
	"testing"
)

func TestSingle(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "''",
		"C:\\k\\a b.exe":     "'C:\\k\\a b.exe'",
		"it's":               "'it''s'",
		"it\u2019s":          "'it\u2019\u2019s'",
		"\u2018\u201a\u201b": "'\u2018\u2018\u201a\u201a\u201b\u201b'",
		"\u201c$(x)\u201d`n": "'\u201c$(x)\u201d`n'", // nothing expands in a single-quoted string
	} {
		if got := Single(in); got != want {
			t.Errorf("Single(%q) = %q, want %q", in, got, want)
		}
	}
}

// readNextArg and commandLineToArgv are Go's own reading of a Windows
// command line (os/exec_windows.go, go1.26), which builds os.Args of the
// services' Go programs: copied here because they are built for Windows only.
func readNextArg(cmd string) (arg []byte, rest string) {
	var b []byte
	var inquote bool
	var nslash int
	for ; len(cmd) > 0; cmd = cmd[1:] {
		c := cmd[0]
		switch c {
		case ' ', '\t':
			if !inquote {
				return append(b, strings.Repeat(`\`, nslash)...), cmd[1:]
			}
		case '"':
			b = append(b, strings.Repeat(`\`, nslash/2)...)
			if nslash%2 == 0 {
				if inquote && len(cmd) > 1 && cmd[1] == '"' {
					b = append(b, c)
					cmd = cmd[1:]
				}
				inquote = !inquote
			} else {
				b = append(b, c)
			}
			nslash = 0
			continue
		case '\\':
			nslash++
			continue
		}
		b = append(b, strings.Repeat(`\`, nslash)...)
		nslash = 0
		b = append(b, c)
	}
	return append(b, strings.Repeat(`\`, nslash)...), ""
}

func commandLineToArgv(cmd string) []string {
	var args []string
	for len(cmd) > 0 {
		if cmd[0] == ' ' || cmd[0] == '\t' {
			cmd = cmd[1:]
			continue
		}
		var arg []byte
		arg, cmd = readNextArg(cmd)
		args = append(args, string(arg))
	}
	return args
}

// FuzzArg: any arguments CheckArg accepts, each written with Arg and joined
// by spaces, are read back by Windows' rules as exactly those arguments.
func FuzzArg(f *testing.F) {
	f.Add("C:\\k\\kubelet.exe", "--node-labels=a=b", "")
	f.Add("C:\\Program Files\\k\\", `say "hi"`, `\\"`)
	f.Add(`a\`, `\"`, "\t")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		args := []string{a, b, c}
		var line []string
		for _, s := range args {
			if err := CheckArg(s); err != nil {
				if !strings.ContainsAny(s, "\x00\r\n") {
					t.Fatalf("CheckArg(%q): %v", s, err)
				}
				t.Skip()
			}
			line = append(line, Arg(s))
		}
		if got := commandLineToArgv(strings.Join(line, " ")); !slices.Equal(got, args) {
			t.Fatalf("%q reads back as %q, want %q", strings.Join(line, " "), got, args)
		}
	})
}
