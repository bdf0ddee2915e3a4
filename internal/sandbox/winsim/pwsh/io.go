package pwsh

import (
	"bufio"
	"io"
	"sort"
	"strings"
)

// report writes an error record: to stderr now, or kept for the CLIXML
// document powershell.exe writes under -EncodedCommand.
func (r *Runtime) report(rec *ErrorRecord) {
	r.errs = append([]any{rec}, r.errs...)
	if r.opt.CLIXML {
		r.clixmlErrs = append(r.clixmlErrs, rec.Format())
		return
	}
	if r.opt.Stderr != nil {
		_, _ = io.WriteString(r.opt.Stderr, rec.Format()) // the host's console: no one to report to
	}
}

// writeOutput writes output objects as Out-Default does, one text line each.
func (r *Runtime) writeOutput(out []any) {
	if r.opt.Stdout == nil {
		return
	}
	for _, o := range out {
		for _, line := range formatLines(o) {
			_, _ = io.WriteString(r.opt.Stdout, line+"\r\n")
		}
	}
}

// formatLines renders one output object. Scalars are their text; objects use
// their display text, or PowerShell's list view (Name : Value).
func formatLines(o any) []string {
	switch v := o.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, formatLines(e)...)
		}
		return out
	case *Hashtable:
		keys := v.Keys()
		if !v.Ordered {
			sort.Slice(keys, func(i, j int) bool { return strings.ToLower(keys[i]) < strings.ToLower(keys[j]) })
		}
		w := 4
		for _, k := range keys {
			if len(k) > w {
				w = len(k)
			}
		}
		out := []string{"", pad("Name", w) + " Value", pad("----", w) + " -----"}
		for _, k := range keys {
			val, _ := v.Get(k)
			out = append(out, pad(k, w)+" "+toString(val))
		}
		return append(out, "")
	case *Object:
		if v.Str != "" {
			return strings.Split(v.Str, "\n")
		}
		w := 0
		for _, p := range v.props {
			if len(p) > w {
				w = len(p)
			}
		}
		out := []string{""}
		for _, p := range v.props {
			val, _ := v.Get(p)
			out = append(out, pad(p, w)+" : "+listValue(val))
		}
		return append(out, "")
	case *ErrorRecord:
		return strings.Split(strings.TrimRight(v.Format(), "\r\n "), "\r\n")
	}
	return []string{toString(o)}
}

// listValue is a property's value in the list view: a collection in braces,
// its items separated by ", " (Format-List's rendering of an IEnumerable
// property, as Get-Service's DependentServices shows it: {a, b}).
func listValue(v any) string {
	items, ok := v.([]any)
	if !ok {
		return toString(v)
	}
	parts := make([]string, len(items))
	for i, e := range items {
		parts[i] = toString(e)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func pad(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// lookup reads a variable: locals (script blocks), then the script scope.
func (r *Runtime) lookup(name string) any {
	v, _ := r.lookupOK(name)
	return v
}

// lookupOK reads a variable and reports whether it is set.
func (r *Runtime) lookupOK(name string) (any, bool) {
	name = strings.ToLower(name)
	for i := len(r.locals) - 1; i >= 0; i-- {
		if v, ok := r.locals[i][name]; ok {
			return v, true
		}
	}
	v, ok := r.vars[name]
	return v, ok
}

// assign sets a variable in the innermost scope that has it, else the
// current one.
func (r *Runtime) assign(name string, v any) {
	name = strings.ToLower(name)
	for i := len(r.locals) - 1; i >= 0; i-- {
		if _, ok := r.locals[i][name]; ok {
			r.locals[i][name] = v
			return
		}
	}
	if len(r.locals) > 0 && name != "erroractionpreference" {
		r.locals[len(r.locals)-1][name] = v
		return
	}
	r.vars[name] = v
}

// varName strips the sigil and braces: "$x" / "${x}" / "$script:x" -> "x".
func varName(text string) string {
	s := strings.TrimPrefix(text, "$")
	s = strings.TrimPrefix(s, "@")
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	for _, scope := range []string{"script:", "global:", "local:"} {
		if len(s) > len(scope) && strings.EqualFold(s[:len(scope)], scope) {
			s = s[len(scope):]
		}
	}
	return s
}

// lineReader reads lines of any length without holding more than one.
type lineReader struct {
	br  *bufio.Reader
	eof bool
}

func newLineReader(in io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(in, 256<<10)}
}

func (l *lineReader) next() (string, bool) {
	if l.eof {
		return "", false
	}
	line, err := l.br.ReadString('\n')
	if err != nil {
		l.eof = true
		if line == "" {
			return "", false
		}
	}
	return strings.TrimRight(line, "\r\n"), true
}
