package remote

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// encodeCLIXML writes s as powershell.exe writes an error record's text to a
// redirected stderr: each UTF-16 code unit that is a control character
// (0x00-0x1F, 0x7F-0x9F), half of a surrogate pair, or a _ before an x is
// escaped as _xHHHH_ (serialization.cs InternalSerializer.EncodeString,
// github.com/PowerShell/PowerShell), then the XML writer escapes & < >.
func encodeCLIXML(s string) string {
	u := utf16.Encode([]rune(s))
	var b strings.Builder
	for i, c := range u {
		switch {
		case c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xdfff,
			c == '_' && i+1 < len(u) && (u[i+1] == 'x' || u[i+1] == 'X'):
			fmt.Fprintf(&b, "_x%04X_", c)
		case c == '&':
			b.WriteString("&amp;")
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(rune(c))
		}
	}
	return "#< CLIXML\r\n<Objs Version=\"1.1.0.1\" xmlns=\"http://schemas.microsoft.com/powershell/2004/04\">" +
		"<S S=\"Error\">" + b.String() + "</S></Objs>"
}

// FuzzDecodeCLIXML: any error text PowerShell serializes decodes back to
// itself (line ends made \n), and no input, however broken, panics.
func FuzzDecodeCLIXML(f *testing.F) {
	f.Add("Cannot find path 'C:\\k' because it does not exist.\r\n", "")
	f.Add("a_x000D_b \U0001F600 _X & <S> \x7f\u0085", "#< CLIXML\r\n<S S=\"Error\">_xD83D_</S><S S=\"warning\">&bogus;_x0</S>")
	f.Add("", "#< CLIXML<S S=\"Error\">_xDE00__xD83D_</S>")
	f.Fuzz(func(t *testing.T, s, raw string) {
		_ = DecodeCLIXML(raw)
		if !utf8.ValidString(s) {
			return
		}
		want := strings.ReplaceAll(s, "\r\n", "\n")
		if got := DecodeCLIXML(encodeCLIXML(s)); got != want {
			t.Fatalf("%q encoded as %q decodes to %q", s, encodeCLIXML(s), got)
		}
	})
}
