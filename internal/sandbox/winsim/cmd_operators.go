package winsim

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// cmd.exe's command separators, as cmd.exe reads a line
// (learn.microsoft.com/windows-server/administration/windows-commands/cmd,
// "Using multiple commands and conditional processing symbols": & runs the
// next command whatever the first returned, && only when it succeeded (exit
// code 0), || only when it failed). Outside double quotes; ^ escapes the next
// character; >& and <& are redirections (2>&1), not separators. Pipes and
// parenthesised blocks are refused as not modelled.

// cmdPart is one command of a line and the separator before it.
type cmdPart struct {
	op   string // "", "&", "&&", "||"
	text string
}

// splitCmdLine splits a line at its separators; ok is false with the reason
// when the line uses what the simulator does not model.
func splitCmdLine(line string) (parts []cmdPart, why string) {
	var cur strings.Builder
	op := ""
	quoted := false
	flush := func(next string) {
		parts = append(parts, cmdPart{op: op, text: strings.TrimLeft(cur.String(), " \t")})
		cur.Reset()
		op = next
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '^' && i+1 < len(line):
			cur.WriteByte(c)
			i++
			c = line[i]
		case c == '&' && i > 0 && (line[i-1] == '>' || line[i-1] == '<'):
		case c == '&' && i+1 < len(line) && line[i+1] == '&':
			flush("&&")
			i++
			continue
		case c == '&':
			flush("&")
			continue
		case c == '|' && i+1 < len(line) && line[i+1] == '|':
			flush("||")
			i++
			continue
		case c == '|':
			return nil, "a pipe (|)"
		case c == '(' && strings.TrimSpace(cur.String()) == "":
			return nil, "a parenthesised block"
		}
		cur.WriteByte(c)
	}
	flush("")
	for _, p := range parts {
		if strings.TrimSpace(p.text) == "" {
			return nil, "an empty command around a separator"
		}
	}
	return parts, ""
}

// runCmdParts runs a line of several commands with cmd.exe's conditional
// processing; a single command runs as before.
func (h *Host) runCmdParts(ctx context.Context, req execRequest, line string, depth int) (code int, handled bool) {
	if !cmdOperator(line) {
		return 0, false
	}
	parts, why := splitCmdLine(line)
	if why != "" {
		fmt.Fprintf(req.Stderr, "winsim: cmd.exe: the simulated host does not model %s in: %s\r\n", why, line)
		return 1, true
	}
	if len(parts) == 1 {
		return 0, false
	}
	for i, p := range parts {
		switch {
		case i == 0, p.op == "&":
		case p.op == "&&" && code != 0, p.op == "||" && code == 0:
			continue
		}
		code = h.runLine(ctx, req, p.text, depth+1)
		if strings.HasPrefix(strings.ToLower(p.text), "exit") {
			return code, true
		}
	}
	return code, true
}

// cmdMkdir is md/mkdir: it creates the directory and its missing parents
// (command extensions, on by default); an existing path is an error,
// errorlevel 1 (learn.microsoft.com/windows-server/administration/windows-commands/mkdir).
func (h *Host) cmdMkdir(ctx context.Context, req execRequest, arg string) int {
	if arg == "" {
		_, _ = io.WriteString(req.Stderr, "The syntax of the command is incorrect.\r\n")
		return 1
	}
	clean := h.fs.Clean(arg)
	if ok, _ := h.fs.Stat(clean); ok {
		fmt.Fprintf(req.Stderr, "A subdirectory or file %s already exists.\r\n", arg)
		return 1
	}
	if h.checkCreate(ctx, clean, true) != nil {
		_, _ = io.WriteString(req.Stderr, "Access is denied.\r\n")
		return 1
	}
	return boolExit(h.fs.MkdirAll(clean) != nil)
}
