package winsim

import "strings"

// CommandLineToArgv splits a Windows command line into arguments by the
// rules of CommandLineToArgvW and the Microsoft C runtime
// (https://learn.microsoft.com/cpp/c-language/parsing-c-command-line-arguments):
// whitespace separates arguments outside double quotes; 2n backslashes
// before a quote become n backslashes and the quote toggles quoting; 2n+1
// backslashes before a quote become n backslashes and a literal quote;
// other backslashes are literal; inside quotes "" is a literal quote.
func CommandLineToArgv(s string) []string {
	var out []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
					inArg = true
					continue
				}
				i-- // the quote is handled below
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inArg = true
		case c == '"':
			inArg = true
			if quoted && i+1 < len(s) && s[i+1] == '"' {
				cur.WriteByte('"')
				i++
				continue
			}
			quoted = !quoted
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}

// escapeArg writes s as one argument of a Windows command line, so that
// CommandLineToArgv (the C runtime's and CommandLineToArgvW's rules,
// Microsoft's "Parsing C++ command-line arguments",
// https://learn.microsoft.com/cpp/cpp/main-function-command-line-args#parsing-c-command-line-arguments)
// reads it back unchanged; the same as Go's syscall.EscapeArg, which Go
// programs started with os/exec on Windows get their command line from. An
// empty value is "", a value without a space, tab or double quote stays as
// it is, any other is double-quoted with each double quote escaped by a
// backslash and the backslashes before it (or before the closing quote)
// doubled. This is the simulator's own copy, never the provider's
// (internal/psquote.Arg, which argv_test.go holds it against).
func escapeArg(s string) string {
	if s == "" {
		return `""`
	}
	if !strings.ContainsAny(s, "\" \t") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	backslashes := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			backslashes++
		case '"':
			// 2n+1 backslashes and the quote: n backslashes and a quote.
			b.WriteString(strings.Repeat(`\`, backslashes+1))
			backslashes = 0
		default:
			backslashes = 0
		}
		b.WriteByte(s[i])
	}
	// 2n backslashes before the closing quote: n backslashes.
	b.WriteString(strings.Repeat(`\`, backslashes))
	b.WriteByte('"')
	return b.String()
}

// windowsCommandLine joins arguments into the command line CreateProcess
// is given, each written with escapeArg.
func windowsCommandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = escapeArg(a)
	}
	return strings.Join(out, " ")
}

// splitImagePath finds the executable of a command line the way
// CreateProcess does with no application name
// (https://learn.microsoft.com/windows/win32/api/processthreadsapi/nf-processthreadsapi-createprocessw,
// lpCommandLine): a quoted first token is the module; an unquoted one
// containing spaces is tried at each space in turn ("C:\Program.exe",
// "C:\Program Files\sub.exe", ...) and the first existing file wins. The
// arguments are the rest, split by the C runtime's rules.
func splitImagePath(exists func(string) bool, cmdline string) (exe string, args []string) {
	s := strings.TrimLeft(cmdline, " \t")
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return s[1:], nil
		}
		return s[1 : 1+end], CommandLineToArgv(s[2+end:])
	}
	withExe := func(p string) string {
		base := p[strings.LastIndexAny(p, `\/`)+1:]
		if !strings.Contains(base, ".") {
			return p + ".exe"
		}
		return p
	}
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ' ' && s[i] != '\t' {
			continue
		}
		cand := s[:i]
		if cand != "" && exists(withExe(cand)) {
			return withExe(cand), CommandLineToArgv(s[i:])
		}
	}
	// Nothing exists: the first token is what CreateProcess reports missing.
	f := strings.IndexAny(s, " \t")
	if f < 0 {
		return s, nil
	}
	return s[:f], CommandLineToArgv(s[f:])
}
