package winsim

import (
	"errors"
	"reflect"
	"testing"
)

// TestCmdRedirections: cmd.exe's output redirections outside quotes; input
// redirection, pipes and separators refused as not modelled.
func TestCmdRedirections(t *testing.T) {
	cases := []struct {
		line string
		cmd  string
		reds []redirection
	}{
		{`powershell.exe -File "C:\a b.ps1" > "C:\t\o.txt" 2> "C:\t\e.txt"`, `powershell.exe -File "C:\a b.ps1"`,
			[]redirection{{fd: 1, path: `C:\t\o.txt`}, {fd: 2, path: `C:\t\e.txt`}}},
		{`echo 1>C:\o.txt 2>&1`, `echo`, []redirection{{fd: 1, path: `C:\o.txt`}, {fd: 2, dup: true}}},
		{`x.exe >>C:\log.txt`, `x.exe`, []redirection{{fd: 1, path: `C:\log.txt`, append: true}}},
		{`echo "a > b"`, `echo "a > b"`, nil},
		{`x.exe arg2>C:\e.txt`, `x.exe arg2`, []redirection{{fd: 1, path: `C:\e.txt`}}},
	}
	for _, tc := range cases {
		cmd, reds, err := cmdRedirections(tc.line)
		if err != nil || cmd != tc.cmd || !reflect.DeepEqual(reds, tc.reds) {
			t.Errorf("cmdRedirections(%q) = %q, %+v, %v; want %q, %+v", tc.line, cmd, reds, err, tc.cmd, tc.reds)
		}
	}
	for _, line := range []string{`a.exe < in.txt`, `a.exe | b.exe`, `a.exe & b.exe`} {
		if _, _, err := cmdRedirections(line); !errors.Is(err, ErrGuestNotModelled) {
			t.Errorf("cmdRedirections(%q) = %v, want not modelled", line, err)
		}
	}
}
