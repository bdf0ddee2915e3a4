package remote

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
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
		text := decodeEscapes(html.UnescapeString(m[2]))
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

// decodeEscapes turns the _xHHHH_ escapes of PowerShell's serializer back
// into text. It escapes UTF-16 code units (serialization.cs EncodeString:
// control characters, each half of a surrogate pair, and a _ before an x),
// so a character outside the Basic Multilingual Plane (an emoji in an error
// message) arrives as two escapes that make one character together.
func decodeEscapes(s string) string {
	ms := clixmlEscape.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	var units []uint16
	flush := func() {
		b.WriteString(string(utf16.Decode(units)))
		units = units[:0]
	}
	pos := 0
	for _, m := range ms {
		if m[0] != pos {
			flush()
			b.WriteString(s[pos:m[0]])
		}
		v, _ := strconv.ParseUint(s[m[2]:m[3]], 16, 16) // four hex digits: the pattern says so
		units = append(units, uint16(v))
		pos = m[1]
	}
	flush()
	b.WriteString(s[pos:])
	return b.String()
}
