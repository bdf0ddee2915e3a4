package pwsh

import (
	"errors"
	"strings"
)

// runScriptFile runs a .ps1 invoked by path (& 'C:\x\start.ps1', about_Scripts:
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_scripts?view=powershell-5.1).
// The script runs in its own scope: it shares the process environment
// ($env:) with its caller and sees the caller's $ErrorActionPreference
// (scopes inherit preference variables, about_Scopes), nothing else the
// simulator models. `exit N` ends the script only: the caller's
// $LASTEXITCODE becomes N and $? is false for N other than 0
// (about_Language_Keywords, "exit"). A terminating error in the script
// propagates to the caller. stream: the caller writes this command's output
// straight to the host, so the script's output goes there statement by
// statement (a long-running script's log lines appear as they happen).
func (r *Runtime) runScriptFile(n *Node, path string, args []any, stream bool) ([]any, error) {
	b, err := r.host.ReadFile(path)
	if err != nil {
		return nil, r.terminate(n, errCommandNotFound(path), false)
	}
	src := decodeScript(b)
	s, perr := Parse(src)
	if perr != nil {
		var pe *ParseError
		_ = errors.As(perr, &pe) // Parse fails only with a *ParseError
		rec := parserRecord(pe, path)
		return nil, &Terminating{Rec: rec, Script: true}
	}
	opt := r.opt
	opt.File = path
	child := &Runtime{ctx: r.ctx, opt: opt, host: r.host, cmds: r.cmds, script: s, vars: map[string]any{}, lastOK: true, errs: r.errs, depth: r.depth + 1}
	child.vars["erroractionpreference"] = r.lookup("erroractionpreference")
	child.vars["input"] = &Enumerator{Next: func() (any, bool) { return nil, false }}
	child.vars["args"] = args
	if v := r.lookup("lastexitcode"); v != nil {
		child.vars["lastexitcode"] = v
	}
	if block := s.Root.child("param_block"); block != nil {
		if err := r.bindScriptParams(child, block, args); err != nil {
			return nil, err
		}
	}
	var out []any
	var result error
	if list := s.Root.child("statement_list"); list != nil {
		for _, st := range list.named() {
			if r.ctx.Err() != nil {
				result = &exitSignal{code: 1}
				break
			}
			child.direct = stream
			o, err := child.statement(st)
			child.direct = false
			if stream {
				child.writeOutput(o)
			} else {
				out = append(out, o...)
			}
			if err == nil {
				continue
			}
			if t := (*Terminating)(nil); errors.As(err, &t) && !t.Script && !child.stopping() {
				child.report(t.Rec)
				child.lastOK = false
				continue
			}
			result = err
			break
		}
	}
	r.errs = child.errs
	r.clixmlErrs = append(r.clixmlErrs, child.clixmlErrs...)
	var (
		exit *exitSignal
		flow *flowSignal
	)
	switch {
	case result == nil:
		if v := child.vars["lastexitcode"]; v != nil {
			r.assign("LASTEXITCODE", v)
		}
		if !child.lastOK {
			r.fail()
		}
		return out, nil
	case errors.As(result, &exit):
		r.assign("LASTEXITCODE", exit.code)
		r.scriptExit = exit.code
		if exit.code != 0 {
			r.fail()
		}
		return out, nil
	case errors.As(result, &flow):
		return out, nil
	}
	return out, result
}

// decodeScript reads a script file as Windows PowerShell 5.1 does: a byte
// order mark is honoured; without one the text is read in the ANSI code page
// (about_Character_Encoding, 5.1: "Windows PowerShell ... uses the ANSI code
// page for script files without a BOM").
func decodeScript(b []byte) string { return DecodeText(b, EncDefault) }

// isScriptFile reports whether a resolved command is a PowerShell script.
func isScriptFile(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".ps1") }
