package kubeletsim

import "strings"

// SplitCommandLine splits a Windows service command line (BinaryPathName)
// into the executable and its arguments with the rules of
// CommandLineToArgvW: whitespace separates arguments, double quotes group,
// \" is a literal quote, and backslashes are literal otherwise (C:\k\x).
func SplitCommandLine(line string) (exe string, args []string) {
	var (
		out   []string
		cur   strings.Builder
		inArg bool
		quote bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(line) && line[i] == '\\' {
				n++
				i++
			}
			if i < len(line) && line[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					i-- // the quote toggles quoting
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inArg = true
		case c == '"':
			if quote && i+1 < len(line) && line[i+1] == '"' {
				cur.WriteByte('"') // "" inside quotes is a literal quote
				i++
			} else {
				quote = !quote
			}
			inArg = true
		case (c == ' ' || c == '\t') && !quote:
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
	if len(out) == 0 {
		return "", nil
	}
	return out[0], out[1:]
}
