package winsim

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// execRequest is one command line from WinRM (Command) or SSH (exec).
type execRequest struct {
	Transport   string // winrm-http, winrm-https, ssh
	User        string
	CommandLine string
	Stdin       io.Reader // nil: no input
	Stdout      io.Writer
	Stderr      io.Writer
	// Env is the environment block cmd.exe inherits from the process that
	// started it (upper-case names), nil for a logon's own command line.
	// A child process gets a copy of its parent's environment block
	// (CreateProcess with lpEnvironment NULL: "the new process uses the
	// environment of the calling process"), which $env:X = ... changes
	// (Environment.SetEnvironmentVariable on the process block), so a
	// program PowerShell starts sees the session's changes.
	Env map[string]string
	// batch: the line runs from a batch file (runBatch), where cmd.exe
	// waits for a GUI program as for a console one.
	batch bool
}

// psInvocation is a parsed powershell.exe command line.
type psInvocation struct {
	script  string // decoded -EncodedCommand, -Command text, or the -File contents
	file    string // -File path
	encoded bool
	fromIn  bool // -Command -: the script arrives on stdin
	err     string
}

// parsePowerShell parses a powershell.exe command line, reading -File from the
// virtual filesystem. ok is false when the line is not a PowerShell call.
func (h *Host) parsePowerShell(line string) (inv psInvocation, ok bool) {
	m := PowerShellCmdRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return inv, false
	}
	args := cmdFields(m[1])
	for i := 0; i < len(args); i++ {
		flag := strings.ToLower(args[i])
		if !strings.HasPrefix(flag, "-") && !strings.HasPrefix(flag, "/") {
			inv.script = strings.Join(args[i:], " ")
			return inv, true
		}
		flag = flag[1:]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch flag {
		case "noprofile", "nop", "noninteractive", "noni", "nologo", "sta", "mta", "noexit":
		case "executionpolicy", "ep", "exec", "inputformat", "if", "outputformat", "of", "windowstyle", "w", "version":
			next()
		case "encodedcommand", "enc", "e", "ec":
			raw, err := base64.StdEncoding.DecodeString(next())
			if err != nil || len(raw)%2 != 0 {
				inv.err = "Cannot process the command because the value specified with -EncodedCommand is not properly encoded. The value must be Base64 encoded."
				return inv, true
			}
			u := make([]uint16, len(raw)/2)
			for j := range u {
				u[j] = uint16(raw[2*j]) | uint16(raw[2*j+1])<<8
			}
			inv.script, inv.encoded = string(utf16.Decode(u)), true
			return inv, true
		case "file", "f":
			inv.file = strings.Trim(next(), `"`)
			b, err := h.fs.ReadFile(inv.file)
			if err != nil {
				inv.err = fmt.Sprintf("The argument '%s' to the -File parameter does not exist. Provide the path to an existing '.ps1' file as an argument to the -File parameter.", inv.file)
				return inv, true
			}
			inv.script = strings.TrimPrefix(string(b), "\ufeff")
			return inv, true
		case "command", "c":
			rest := strings.Join(args[i+1:], " ")
			if rest == "-" {
				inv.fromIn = true
			}
			inv.script = strings.Trim(rest, `"`)
			return inv, true
		default:
			inv.script = strings.Join(args[i:], " ")
			return inv, true
		}
	}
	return inv, true
}

// cmdFields splits a command line at spaces outside double quotes, keeping the quotes.
func cmdFields(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case (r == ' ' || r == '\t') && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// execute runs one command line: fault injection, the script log, then the
// cmd.exe / PowerShell effects.
func (h *Host) execute(ctx context.Context, req execRequest) int {
	if req.Stdin == nil {
		req.Stdin = strings.NewReader("")
	}
	ctx = h.logonContext(ctx, req)
	start := time.Now()
	text := req.CommandLine
	inv, isPS := h.parsePowerShell(req.CommandLine)
	if isPS && inv.script != "" {
		text = inv.script
	}
	rec := ScriptRecord{Time: start, Transport: req.Transport, User: req.User, Text: logText(text), Step: stepName(text)}
	code := h.executeWithFaults(ctx, req, text, rec.Step, func() int {
		return h.runLine(ctx, req, req.CommandLine, 0)
	})
	rec.ExitCode, rec.Duration = code, time.Since(start)
	h.log.add(rec)
	if h.cfg.OnScript != nil {
		h.cfg.OnScript(h, rec)
	}
	return code
}

func (h *Host) executeWithFaults(ctx context.Context, req execRequest, text, step string, run func() int) int {
	f, ok := h.takeFault(step, text)
	if !ok {
		return run()
	}
	switch {
	case f.Reboot:
		go h.Reboot()
		<-ctx.Done()
		return 1
	case f.Hang:
		<-ctx.Done()
		return 1
	case f.RestartService != "":
		if err := h.stopServiceWithDependents(f.RestartService); err == nil {
			_ = h.startService(f.RestartService)
		}
		return run()
	case f.Delay > 0:
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
			return 1
		}
		if f.ExitCode == 0 && f.Stderr == "" {
			return run()
		}
	}
	if f.FailAt != nil {
		return h.failAt(req, text, f)
	}
	if f.Stderr != "" {
		_, _ = io.WriteString(req.Stderr, f.Stderr)
	}
	return f.ExitCode
}

// failAt reports StepFault.FailAt: the error record of a terminating error
// (as `throw` makes it) positioned at the match in the script.
func (h *Host) failAt(req execRequest, script string, f StepFault) int {
	pos, end := 0, 0
	if loc := f.FailAt.FindStringSubmatchIndex(script); loc != nil {
		pos, end = loc[0], loc[1]
		if len(loc) >= 4 && loc[2] >= 0 {
			pos, end = loc[2], loc[3]
		}
	}
	start := strings.LastIndex(script[:pos], "\n") + 1
	stop := len(script)
	if i := strings.IndexByte(script[pos:], '\n'); i >= 0 {
		stop = pos + i
	}
	var thrown any // a bare throw when there is no message
	if f.Stderr != "" {
		thrown = f.Stderr
	}
	inv, _ := h.parsePowerShell(req.CommandLine)
	rec := pwsh.ThrowRecord(thrown)
	rec.Line, rec.Col, rec.Width = 1+strings.Count(script[:pos], "\n"), pos-start+1, min(end, stop)-pos
	rec.Source, rec.File = strings.TrimRight(script[start:stop], "\r"), inv.file
	if inv.encoded {
		_, _ = io.WriteString(req.Stderr, encodeCLIXML([]string{rec.Format()}))
	} else {
		_, _ = io.WriteString(req.Stderr, rec.Format())
	}
	if f.ExitCode == 0 {
		return 1
	}
	return f.ExitCode
}

var echoRE = regexp.MustCompile(`(?is)^echo(?:[ .](.*))?$`)

// cmdOperator reports whether a line has one of cmd.exe's operators (<, >,
// |, &) outside double quotes.
func cmdOperator(s string) bool {
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && c == '^':
			i++ // escaped
		case !quoted && strings.IndexByte("<>|&", c) >= 0:
			return true
		}
	}
	return false
}

// cmdUnescape removes cmd.exe's ^ escapes outside double quotes.
func cmdUnescape(s string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && c == '^' && i+1 < len(s):
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// runLine runs one cmd.exe command line, after cmd's %NAME% expansion.
func (h *Host) runLine(ctx context.Context, req execRequest, line string, depth int) int {
	// Leading blanks and @ go; trailing ones stay (echo prints them).
	line = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(line, " \t"), "@"), " \t")
	line = strings.TrimRight(line, "\r\n")
	if req.Env != nil {
		line = expandCmdEnvFrom(line, req.Env)
	} else {
		line = h.fs.expandCmdEnv(line)
	}
	if depth > 8 {
		_, _ = io.WriteString(req.Stderr, "batch nesting too deep\r\n")
		return 1
	}
	lower := strings.ToLower(line)
	switch {
	case line == "":
		return 0
	case strings.HasPrefix(lower, "cmd /c ") || strings.HasPrefix(lower, "cmd.exe /c "):
		return h.runLine(ctx, req, line[strings.Index(lower, "/c ")+3:], depth+1)
	}
	if inv, ok := h.parsePowerShell(line); ok {
		return h.runPowerShell(ctx, req, inv, req.Env)
	}
	if code, ok := h.runCmdParts(ctx, req, line, depth); ok {
		return code
	}
	if m := EchoRedirectRE.FindStringSubmatch(line); m != nil && !cmdOperator(m[1]) {
		if h.checkWrite(ctx, m[3]) != nil {
			_, _ = io.WriteString(req.Stderr, "Access is denied.\r\n")
			return 1
		}
		err := h.fs.WriteFile(m[3], []byte(m[1]+"\r\n"), m[2] == ">>")
		if err != nil {
			fmt.Fprintf(req.Stderr, "The system cannot find the path specified.\r\n")
			return 1
		}
		return 0
	}
	if m := EchoStderrRE.FindStringSubmatch(line); m != nil {
		// Using command redirection operators (>&): https://learn.microsoft.com/en-us/previous-versions/windows/it-pro/windows-xp/bb490982(v=technet.10)
		_, _ = io.WriteString(req.Stderr, m[1]+"\r\n")
		return 0
	}
	if m := echoRE.FindStringSubmatch(line); m != nil {
		if cmdOperator(m[1]) {
			// A redirection, pipe or command separator cmd.exe would act on.
			fmt.Fprintf(req.Stderr, "winsim: cmd.exe: the simulated host does not model the operators in: %s\r\n", line)
			return 1
		}
		_, _ = io.WriteString(req.Stdout, cmdUnescape(m[1])+"\r\n")
		return 0
	}
	fields := cmdFields(line)
	verb := strings.ToLower(fields[0])
	arg := ""
	if len(fields) > 1 {
		arg = strings.Trim(strings.Join(fields[1:], " "), `"`)
	}
	switch verb {
	case "exit":
		a := strings.TrimSpace(strings.TrimPrefix(strings.ToLower(arg), "/b"))
		code, _ := strconv.Atoi(a)
		return code
	case "hostname":
		_, _ = io.WriteString(req.Stdout, h.cfg.ComputerName+"\r\n")
		return 0
	case "type":
		if h.checkRead(ctx, arg) != nil {
			_, _ = io.WriteString(req.Stderr, "Access is denied.\r\n")
			return 1
		}
		b, err := h.fs.ReadFile(arg)
		if err != nil {
			_, _ = io.WriteString(req.Stderr, "The system cannot find the file specified.\r\n")
			return 1
		}
		_, _ = req.Stdout.Write(b)
		return 0
	case "mkdir", "md":
		return h.cmdMkdir(ctx, req, arg)
	case "del", "erase":
		target := strings.TrimSpace(strings.TrimPrefix(arg, "/f"))
		if h.checkDelete(ctx, h.fs.Clean(target)) != nil {
			_, _ = io.WriteString(req.Stderr, "Access is denied.\r\n")
			return 1
		}
		return boolExit(h.fs.Remove(target, false) != nil)
	}
	if verb == "start" {
		return h.cmdStartWait(ctx, req, fields[1:])
	}
	if b := cmdBuiltinOf(fields[0]); b != "" {
		// An internal command the cases above do not model (cmd_builtins.go).
		return refuseCmdBuiltin(req.Stderr, b)
	}
	script := strings.Trim(fields[0], `"`)
	switch ext := strings.ToLower(script[strings.LastIndexByte(script, '.')+1:]); ext {
	case "cmd", "bat", "ps1":
		b, err := h.fs.ReadFile(script)
		if err != nil {
			fmt.Fprintf(req.Stderr, "'%s' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n", script)
			return 1
		}
		if ext == "ps1" {
			return h.runPowerShell(ctx, req, psInvocation{script: string(b), file: script}, req.Env)
		}
		return h.runBatch(ctx, req, string(b), depth)
	}
	// A program: found as cmd.exe finds it (a path, or PATH with PATHEXT) and
	// run by the host; anything else is what cmd.exe says of an unknown name.
	env := req.Env
	if env == nil {
		env = newPSHost(ctx, h, nil).env
	}
	if p, ok := h.resolveProgram(script, env); ok {
		var args []string
		for _, f := range fields[1:] {
			args = append(args, strings.Trim(f, `"`))
		}
		if sub, err := h.ProgramSubsystem(p); err == nil && sub == SubsystemGUI && !req.batch {
			// start /?: "When executing an application that is a 32-bit GUI
			// application, CMD.EXE does not wait for the application to
			// terminate before returning to the command prompt. This new
			// behavior does NOT occur if executing within a command script."
			// Whether cmd /c counts as a script it does not say.
			fmt.Fprintf(req.Stderr, "winsim: cmd.exe: the simulated host does not model running the GUI program %s outside a batch file (cmd.exe waits for it only in a command script; use start /wait)\r\n", p)
			return 1
		}
		code, err := h.runProgram(ctx, p, args, env, req.Stdin, req.Stdout, req.Stderr)
		if err != nil {
			fmt.Fprintf(req.Stderr, "The system cannot execute the specified program.\r\n")
			return 1
		}
		return code
	}
	fmt.Fprintf(req.Stderr, "'%s' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n", script)
	return 9009
}

// runBatch runs a .cmd file with cmd.exe's default "echo on": each command is
// printed after the prompt before it runs.
func (h *Host) runBatch(ctx context.Context, req execRequest, body string, depth int) int {
	echo := true
	code := 0
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		quiet := strings.HasPrefix(t, "@")
		cmd := strings.TrimSpace(strings.TrimPrefix(t, "@"))
		lc := strings.ToLower(cmd)
		if lc == "echo off" || lc == "echo on" {
			echo = lc == "echo on"
			continue
		}
		if echo && !quiet {
			fmt.Fprintf(req.Stdout, "\r\n%s>%s\r\n", h.fs.env["USERPROFILE"], cmd)
		}
		if strings.HasPrefix(lc, "rem ") || strings.HasPrefix(lc, "::") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return 1
		}
		req.batch = true
		code = h.runLine(ctx, req, cmd, depth+1)
		if strings.HasPrefix(lc, "exit") {
			return code
		}
	}
	return code
}

// runPowerShell runs a parsed powershell.exe invocation with the engine
// (internal/sandbox/winsim/pwsh): the script is parsed by the tree-sitter grammar
// first, and a syntax error runs none of it.
// runPowerShell runs a parsed powershell.exe invocation; env is the process
// environment (nil: a logon's, for WinRM and SSH commands).
func (h *Host) runPowerShell(ctx context.Context, req execRequest, inv psInvocation, env map[string]string) int {
	if inv.err != "" {
		_, _ = io.WriteString(req.Stderr, inv.err+"\r\n")
		return exitBadArguments
	}
	script := inv.script
	if inv.fromIn {
		b, _ := io.ReadAll(req.Stdin)
		script = string(b)
	}
	h.logScriptBlock(script, inv.file)
	ph := newPSHost(ctx, h, env)
	res := pwsh.Run(ctx, script, pwsh.Options{Host: ph, Commands: hostCommands, Stdin: req.Stdin,
		Stdout: req.Stdout, Stderr: req.Stderr, CLIXML: inv.encoded, File: inv.file})
	if inv.encoded && len(res.Errors) > 0 {
		_, _ = io.WriteString(req.Stderr, encodeCLIXML(res.Errors))
	}
	ph.releaseBackground()
	if ph.shutdown {
		h.shutdownSoon()
	} else if ph.reboot {
		h.rebootSoon()
	}
	return res.ExitCode
}

// rebootSoon reboots shortly after the current command returns:
// Restart-Computer returns at once and Windows goes down moments later, after
// the caller has seen the command finish.
func (h *Host) rebootSoon() {
	go func() {
		if h.afterGrace() {
			h.Reboot()
		}
	}()
}

// afterGrace waits restartComputerGrace, or reports false when the host is
// stopped first (a sandbox closing must not see a host restart after it).
func (h *Host) afterGrace() bool {
	t := time.NewTimer(restartComputerGrace)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-h.stopCh:
		return false
	}
}

// shutdownSoon takes the host down for good shortly after the current
// command returns (the client sees it finish, as on Windows) and then tells
// HostConfig.OnShutdown.
func (h *Host) shutdownSoon() {
	go func() {
		if !h.afterGrace() {
			return
		}
		h.goDown()
		if h.cfg.OnShutdown != nil {
			h.cfg.OnShutdown(h)
		}
	}()
}

// exitBadArguments is powershell.exe's exit code for bad arguments (-196608).
const exitBadArguments = 0xFFFD0000

// restartComputerGrace is how long after Restart-Computer (or a shutdown) the
// host goes down: Windows logs the sessions off and stops the services,
// VMware Tools' among them, before the machine goes, and gives each service
// up to WaitToKillServiceTimeout (5 s on Windows Server 2016 and later) to
// stop; estimate, the fast end: 3 s. A client polling the script's process
// through VMware Tools (every 2 s at most: the vmtools transport) sees it end
// before the guest goes; 500 ms, the old grace, cut such a poll off.
const restartComputerGrace = 3 * time.Second

// logText abbreviates upload chunks so scripts.log does not hold every byte uploaded.
func logText(text string) string {
	if len(text) > 256 {
		if m := EchoRedirectRE.FindStringSubmatch(text); m != nil {
			return fmt.Sprintf("echo <%d characters> %s %q", len(m[1]), m[2], m[3])
		}
	}
	return text
}
