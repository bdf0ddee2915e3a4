package winsim

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// cmdBuiltins are cmd.exe's internal commands: the names cmd.exe runs
// itself, with no program behind them (so no .exe in System32 answers
// them). Each has its page in the Windows Commands reference,
// https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/<name>
// (assoc, break, call, cd/chdir, cls, color, copy, date, del/erase, dir,
// echo, endlocal, exit, for, ftype, goto, if, md/mkdir, mklink, move, path,
// pause, popd, prompt, pushd, rd/rmdir, rem, ren/rename, set, setlocal,
// shift, start, time, title, type, ver, verify, vol), and "cmd" there lists
// those command extensions change (del, erase, color, cd, chdir, md, mkdir,
// prompt, pushd, popd, set, setlocal, endlocal, if, for, call, shift, goto,
// start, assoc, ftype). dpath and keys are internal too (cmd.exe's HELP
// has no page for them).
//
// The simulated cmd.exe models echo, exit, type, md/mkdir, del/erase
// (cmdline.go) and start /wait (cmdStartWait); the others are refused with the simulator's own message,
// naming the command, and exit code 1: answering them as unknown names
// ("'ver' is not recognized ...", 9009) would misdescribe Windows, where
// they run.
var cmdBuiltins = map[string]bool{
	"assoc": true, "break": true, "call": true, "cd": true, "chdir": true, "cls": true, "color": true, "copy": true,
	"date": true, "del": true, "erase": true, "dir": true, "dpath": true, "echo": true, "endlocal": true, "exit": true,
	"for": true, "ftype": true, "goto": true, "if": true, "keys": true, "md": true, "mkdir": true, "mklink": true,
	"move": true, "path": true, "pause": true, "popd": true, "prompt": true, "pushd": true, "rd": true, "rmdir": true,
	"rem": true, "ren": true, "rename": true, "set": true, "setlocal": true, "shift": true, "start": true, "time": true,
	"title": true, "type": true, "ver": true, "verify": true, "vol": true,
}

// cmdBuiltinOf is the internal command a command line's first word names:
// the word up to a character cmd.exe ends a command name at (a blank,
// or / ( . , ; = +: "dir/w", "if(", "echo."); "" when it names none, or
// is a path (C:\...\ver.exe is a program).
func cmdBuiltinOf(word string) string {
	end := strings.IndexAny(word, " \t/(.,;=+")
	name := word
	if end >= 0 {
		name = word[:end]
	}
	if strings.ContainsAny(name, `\:"`) {
		return ""
	}
	name = strings.ToLower(name)
	if cmdBuiltins[name] {
		return name
	}
	return ""
}

// refuseCmdBuiltin refuses an internal command the simulated cmd.exe does
// not model.
func refuseCmdBuiltin(w io.Writer, name string) int {
	fmt.Fprintf(w, "winsim: cmd.exe: the simulated host does not model the internal command '%s'\r\n", name)
	return 1
}

// cmdStartWait is cmd.exe's start in the one form the simulator models:
//
//	start ["title"] /wait <program> [arguments]
//
// It runs the program and waits for it to end, whatever its subsystem, and
// the line's exit code (ERRORLEVEL) is the program's. Source: the start
// page of the Windows Commands reference,
// https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/start
// ("/wait: Starts an application and waits for it to end."). Refused as
// not modelled: start without /wait (the program runs on after cmd.exe
// returns), its other options (/b, /d, /i, /min, /max, priorities,
// /affinity, /node), and a batch file or internal command as the target
// (start runs those in a new cmd.exe /k).
func (h *Host) cmdStartWait(ctx context.Context, req execRequest, args []string) int {
	wait := false
	for len(args) > 0 {
		a := args[0]
		switch {
		case strings.HasPrefix(a, `"`) && !wait && len(args) > 1:
			// The first quoted argument is the window title.
		case strings.EqualFold(a, "/wait") || strings.EqualFold(a, "/w"):
			wait = true
		case strings.HasPrefix(a, "/"):
			fmt.Fprintf(req.Stderr, "winsim: cmd.exe: the simulated host does not model the start option %s\r\n", a)
			return 1
		default:
			goto program
		}
		args = args[1:]
	}
program:
	if !wait {
		_, _ = io.WriteString(req.Stderr, "winsim: cmd.exe: the simulated host does not model start without /wait (the program runs on after cmd.exe returns)\r\n")
		return 1
	}
	if len(args) == 0 {
		_, _ = io.WriteString(req.Stderr, "winsim: cmd.exe: the simulated host does not model start without a program (a new cmd.exe window)\r\n")
		return 1
	}
	name := strings.Trim(args[0], `"`)
	env := newPSHost(ctx, h, nil).env
	p, ok := h.resolveProgram(name, env)
	if !ok {
		fmt.Fprintf(req.Stderr, "The system cannot find the file %s.\r\n", name)
		return 9009
	}
	switch strings.ToLower(p[strings.LastIndexByte(p, '.')+1:]) {
	case "cmd", "bat":
		fmt.Fprintf(req.Stderr, "winsim: cmd.exe: the simulated host does not model start of a batch file (%s runs in a new cmd.exe /k)\r\n", p)
		return 1
	}
	var pargs []string
	for _, f := range args[1:] {
		pargs = append(pargs, strings.Trim(f, `"`))
	}
	code, err := h.runProgram(ctx, p, pargs, env, req.Stdin, req.Stdout, req.Stderr)
	if err != nil {
		_, _ = io.WriteString(req.Stderr, "The system cannot execute the specified program.\r\n")
		return 1
	}
	return code
}
