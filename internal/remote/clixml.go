package remote

import (
	"html"
	"regexp"
	"strconv"
	"strings"
)

const clixmlMarker = "#< CLIXML"

var (
	clixmlString = regexp.MustCompile(`(?s)<S S="([^"]*)">(.*?)</S>`)
	clixmlEscape = regexp.MustCompile(`_x([0-9A-Fa-f]{4})_`)
)

// DecodeCLIXML turns the CLIXML that powershell.exe writes to a redirected
// stderr ("#< CLIXML" then <Objs> with <S S="Error">...</S> strings whose
// control characters are escaped as _x000D__x000A_) into plain text. Progress
// records are dropped; warnings and other streams are kept with a prefix.
// Text without the marker is returned unchanged.
func DecodeCLIXML(s string) string {
	i := strings.Index(s, clixmlMarker)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, m := range clixmlString.FindAllStringSubmatch(s[i:], -1) {
		text := clixmlEscape.ReplaceAllStringFunc(html.UnescapeString(m[2]), func(e string) string {
			v, err := strconv.ParseUint(e[2:6], 16, 32)
			if err != nil {
				return e
			}
			return string(rune(v))
		})
		switch strings.ToLower(m[1]) {
		case "error":
		case "warning":
			text = "WARNING: " + text
		case "verbose":
			text = "VERBOSE: " + text
		case "debug":
			text = "DEBUG: " + text
		}
		b.WriteString(text)
	}
	return strings.ReplaceAll(b.String(), "\r\n", "\n")
}
