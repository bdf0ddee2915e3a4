package pwsh

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Regular expressions (-match, -replace, -split), wildcards (-like) and
// composite formatting (-f).

func compileRE(p string, cs bool) (*regexp.Regexp, error) {
	if !cs {
		p = "(?i)" + p
	}
	return regexp.Compile(p)
}

func errRegex(p string, err error) *ErrorRecord {
	return scriptError(fmt.Sprintf("The regular expression pattern %s is not valid.", p),
		"InvalidOperation", p, "String", "RuntimeException", "InvalidRegularExpression", "System.Management.Automation.RuntimeException")
}

// dotnetReplacement turns .NET's $1 / ${name} substitutions into Go's.
func dotnetReplacement(s string) string {
	return regexp.MustCompile(`\$(\d+)`).ReplaceAllString(s, "$${$1}")
}

// wildcardRE compiles a -like pattern: * ? and [abc].
func wildcardRE(p string, cs bool) *regexp.Regexp {
	var b strings.Builder
	if !cs {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString("(?s:.*)")
		case '?':
			b.WriteString("(?s:.)")
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j > 0 {
				b.WriteString(p[i : i+j+1])
				i += j
				continue
			}
			b.WriteString(`\[`)
		case '`':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(string(p[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^$.")
	}
	return re
}

// format is -f: .NET composite formatting of {0}, {1:N2}-free indexes.
func (r *Runtime) format(at *Node, f string, args []any) (any, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '{' && i+1 < len(f) && f[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		if c == '}' && i+1 < len(f) && f[i+1] == '}' {
			b.WriteByte('}')
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(f[i:], '}')
		if j < 0 {
			return nil, r.terminate(at, errFormat(f), false)
		}
		spec := f[i+1 : i+j]
		idxText, fmtSpec, hasFmt := strings.Cut(spec, ":")
		idxText, align, _ := strings.Cut(idxText, ",")
		idx, err := strconv.Atoi(strings.TrimSpace(idxText))
		if err != nil || idx < 0 || idx >= len(args) {
			return nil, r.terminate(at, errFormat(f), false)
		}
		s := toString(args[idx])
		if hasFmt {
			fs, ok := numberFormat(args[idx], fmtSpec)
			if !ok {
				return nil, r.terminate(at, errUnsupported("the format specifier '"+fmtSpec+"'"), true)
			}
			s = fs
		}
		if align != "" {
			w, _ := strconv.Atoi(strings.TrimSpace(align))
			if w > 0 && len(s) < w {
				s = strings.Repeat(" ", w-len(s)) + s
			} else if w < 0 && len(s) < -w {
				s += strings.Repeat(" ", -w-len(s))
			}
		}
		b.WriteString(s)
		i += j
	}
	return b.String(), nil
}

func numberFormat(v any, spec string) (string, bool) {
	n, ok := toNumber(v)
	if !ok {
		return "", false
	}
	switch {
	case len(spec) >= 1 && (spec[0] == 'D' || spec[0] == 'd'):
		w, _ := strconv.Atoi(spec[1:])
		return fmt.Sprintf("%0*d", w, int(toFloat(n))), true
	case len(spec) >= 1 && (spec[0] == 'X' || spec[0] == 'x'):
		w, _ := strconv.Atoi(spec[1:])
		// .NET writes a negative integer's two's complement in hex: an
		// Int32 in 8 digits, an Int64 in 16 ("{0:X8}" -f -2145124329 is
		// 80240017; learn.microsoft.com/dotnet/standard/base-types/
		// standard-numeric-format-strings#hexadecimal-format-specifier-x).
		i := int64(toFloat(n))
		s := fmt.Sprintf("%0*x", w, i)
		switch {
		case i < 0 && i >= math.MinInt32:
			s = fmt.Sprintf("%0*x", w, uint32(int32(i)))
		case i < 0:
			s = fmt.Sprintf("%0*x", w, uint64(i))
		}
		if spec[0] == 'X' {
			s = strings.ToUpper(s)
		}
		return s, true
	case len(spec) >= 1 && (spec[0] == 'F' || spec[0] == 'f'):
		w := 2
		if len(spec) > 1 {
			w, _ = strconv.Atoi(spec[1:])
		}
		return strconv.FormatFloat(toFloat(n), 'f', w, 64), true
	}
	return "", false
}

func errFormat(f string) *ErrorRecord {
	return scriptError("Error formatting a string: Index (zero based) must be greater than or equal to zero and less than the size of the argument list..",
		"InvalidOperation", f, "String", "RuntimeException", "FormatError", "System.Management.Automation.RuntimeException")
}
