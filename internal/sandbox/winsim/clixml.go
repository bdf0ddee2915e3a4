package winsim

import (
	"fmt"
	"strings"
)

// encodeCLIXML renders error records the way powershell.exe writes them to a
// redirected stderr under -EncodedCommand: "#< CLIXML", then an <Objs>
// document whose <S S="Error"> strings escape control characters as _xHHHH_.
// A progress record comes first, as on a real host's first run.
func encodeCLIXML(errs []string) string {
	var b strings.Builder
	b.WriteString("#< CLIXML\r\n")
	b.WriteString(`<Objs Version="1.1.0.1" xmlns="http://schemas.microsoft.com/powershell/2004/04">`)
	b.WriteString(`<Obj S="progress" RefId="0"><TN RefId="0"><T>System.Management.Automation.PSCustomObject</T><T>System.Object</T></TN><MS><I64 N="SourceId">1</I64><PR N="Record"><AV>Preparing modules for first use.</AV><AI>0</AI><Nil /><PI>-1</PI><PC>-1</PC><T>Completed</T><SR>-1</SR><SD> </SD></PR></MS></Obj>`)
	for _, e := range errs {
		for _, line := range strings.SplitAfter(e, "\r\n") {
			if line == "" {
				continue
			}
			fmt.Fprintf(&b, `<S S="Error">%s</S>`, clixmlEscape(line))
		}
	}
	b.WriteString("</Objs>")
	return b.String()
}

func clixmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '_':
			b.WriteString("_x005F_")
		case r < 0x20:
			fmt.Fprintf(&b, "_x%04X_", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
