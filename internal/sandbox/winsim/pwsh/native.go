package pwsh

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// native runs an executable. Windows PowerShell 5.1: its stdout lines become
// pipeline strings, its exit code $LASTEXITCODE, a non-zero exit makes $?
// false but never stops the script (not even under Stop). Its stderr goes
// straight to the console unless redirected (2>&1, 2>$null): then every line
// becomes a NativeCommandError record, which under Stop terminates, as in 5.1.
//
// A GUI-subsystem program last in its pipeline is not waited for: the host
// starts it and sets run.Background, and the statement writes nothing and
// leaves $LASTEXITCODE and $? as they were. PowerShell's
// NativeCommandProcessor sets _isRunningInBackground for a Windows
// (non-console) application at the end of a pipe and, when it is set,
// neither waits nor sets $LASTEXITCODE in Complete()
// (src/System.Management.Automation/engine/NativeCommandProcessor.cs,
// PowerShell/PowerShell at 929903692e550140efb5042ed05d65bfd21ccb5f; the
// behaviour is Windows PowerShell's too: PowerShell/PowerShell#26455, "On
// Windows, GUI-subsystem applications execute asynchronously by default.
// Piping (|) them to another command makes the call synchronous and also
// populates $LASTEXITCODE", while a redirection (>) does not). A
// background program with a redirection is refused as not modelled.
func (r *Runtime) native(n *Node, name string, elems []element, redirs []*Node, input []any, hasInput, piped bool) ([]any, error) {
	path, ok := r.host.ResolveNative(name)
	if !ok {
		return nil, r.terminate(n, errCommandNotFound(name), false)
	}
	if isScriptFile(path) {
		return nil, r.terminate(n, errUnsupported("a script file with pipeline input or redirection"), true)
	}
	if _, err := r.errorStream(redirs); err != nil {
		return nil, err // refused before the program runs
	}
	var args []string
	for _, e := range elems {
		if e.param != "" {
			// A parameter token goes to the program as written (-xzf, -n).
			args = append(args, e.node.Text)
			continue
		}
		v, err := r.argValue(e.node)
		if err != nil {
			return nil, err
		}
		for _, it := range items(v) {
			args = append(args, toString(it))
		}
		if v == nil && e.node.Kind != "variable" {
			args = append(args, "")
		}
	}
	captureErr := false
	for _, rd := range redirs {
		switch strings.TrimSpace(rd.Kids[0].Text) {
		case "2>&1", "2>", "*>":
			captureErr = true
		}
	}
	var stdin io.Reader = strings.NewReader("")
	if hasInput {
		var b strings.Builder
		for _, o := range input {
			for _, l := range formatLines(o) {
				b.WriteString(l + "\r\n")
			}
		}
		stdin = strings.NewReader(b.String())
	}
	var stdout, stderr bytes.Buffer
	run := &NativeRun{Path: path, Args: args, Stdin: stdin, Stdout: &stdout, Stderr: &stderr, Piped: piped, Redirected: len(redirs) > 0}
	if !captureErr && r.opt.Stderr != nil {
		run.Stderr = r.opt.Stderr
	}
	code, err := r.host.RunNative(r.ctx, run)
	if err != nil {
		base := path[strings.LastIndexAny(path, `\/`)+1:]
		rec := scriptError(fmt.Sprintf("Program '%s' failed to run: %s", base, err.Error()),
			"ResourceUnavailable", "", "", "ApplicationFailedException", "NativeCommandFailed", "System.Management.Automation.ApplicationFailedException")
		return nil, r.terminate(n, rec, false)
	}
	if run.Background {
		// Started, not waited for: no output, no $LASTEXITCODE.
		return nil, nil
	}
	r.assign("LASTEXITCODE", code)
	if code != 0 {
		r.fail()
	}
	out := lines(stdout.String())
	if captureErr {
		merge := false
		for _, rd := range redirs {
			if strings.TrimSpace(rd.Kids[0].Text) == "2>&1" {
				merge = true
			}
		}
		base := path[strings.LastIndexAny(path, `\/`)+1:]
		for _, l := range lines(stderr.String()) {
			rec := &ErrorRecord{Message: l.(string), Command: base, Category: "NotSpecified", Target: l.(string), TargetType: "String",
				Reason: "RemoteException", ErrorID: "NativeCommandError", Exception: "System.Management.Automation.RemoteException"}
			r.position(rec, n)
			r.fail()
			if r.stopping() {
				return out, &Terminating{Rec: rec, Script: true}
			}
			r.errs = append([]any{rec}, r.errs...)
			if merge {
				out = append(out, rec)
			}
		}
	}
	return r.redirect(n, redirs, out, nil)
}

// lines splits program output into pipeline strings.
func lines(s string) []any {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []any
	for _, l := range strings.Split(s, "\n") {
		out = append(out, l)
	}
	return out
}
