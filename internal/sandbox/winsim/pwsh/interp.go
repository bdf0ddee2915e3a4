package pwsh

import (
	"context"
	"errors"
	"io"
	"strings"
)

// Options describe one powershell.exe run.
type Options struct {
	Host     Host
	Commands *Registry // the cmdlets; nil means Builtins only
	Stdin    io.Reader // the script's standard input ($input)
	Stdout   io.Writer // output objects, formatted as text lines
	// Stderr receives error records as powershell.exe prints them; with
	// CLIXML the records are collected in Result.Errors instead.
	Stderr io.Writer
	CLIXML bool
	File   string // -File: the script's path (errors say "At <file>:<line>")
}

// Result is how a run ended.
type Result struct {
	ExitCode int
	Errors   []string // formatted error records (CLIXML mode)
}

// Runtime is one script execution.
type Runtime struct {
	ctx    context.Context
	opt    Options
	host   Host
	cmds   *Registry
	script *Script
	vars   map[string]any // script scope (lower-case names)
	locals []map[string]any
	// lastOK is $?: whether the last statement succeeded.
	lastOK bool
	errs   []any // $Error, newest first
	// depth guards against runaway recursion of script blocks.
	depth int
	// failedNow: the running statement failed; question is $? as the
	// statement started (the previous statement's outcome).
	failedNow, question bool
	// tries counts the try blocks being run.
	tries int
	// clixmlErrs are the formatted records for the CLIXML document.
	clixmlErrs []string
	// toHost: the running top-level statement is one command whose output
	// goes straight to the host (a script it runs streams its output).
	toHost bool
	// downstream: the next command() call has a command after it in its
	// pipeline (its output is piped), read and cleared as toHost is.
	downstream bool
	// direct: the statement list being run writes its output straight to
	// the host (a top-level loop's Write-Output appears as it runs, not
	// when the loop ends). Evaluating an expression or a pipeline clears it.
	direct bool
	// scriptExit is the exit code of the last script file the running
	// statement ran (exit N in it).
	scriptExit int
}

// Run parses and runs a script. A syntax error runs nothing and fails as
// powershell.exe does: the ParserError record and exit code 1.
func Run(ctx context.Context, src string, opt Options) Result {
	s, err := Parse(src)
	if err != nil {
		var pe *ParseError
		_ = errors.As(err, &pe) // Parse fails only with a *ParseError
		rec := parserRecord(pe, opt.File)
		r := &Runtime{opt: opt}
		r.report(rec)
		return Result{ExitCode: 1, Errors: r.clixmlErrs}
	}
	return RunScript(ctx, s, opt)
}

// parserRecord renders a syntax error as the ParserError powershell.exe
// prints for a script it cannot parse.
func parserRecord(pe *ParseError, file string) *ErrorRecord {
	msg := "Unexpected token '" + firstLine(pe.Token) + "' in expression or statement."
	id := "UnexpectedToken"
	if pe.Missing != "" {
		msg = "Missing " + describeMissing(pe.Missing) + "."
		id = "MissingToken"
	}
	if pe.Message != "" {
		msg, id = pe.Message, pe.ID
	}
	return &ErrorRecord{Message: msg, Category: "ParserError", Target: "", TargetType: "", Reason: "ParentContainsErrorRecordException",
		ErrorID: id, Exception: "System.Management.Automation.ParseException", Line: pe.Line, Col: pe.Col, Width: len(firstLine(pe.Token)),
		Source: pe.Source, File: file}
}

func describeMissing(kind string) string {
	switch kind {
	case "}":
		return "closing '}' in statement block or type definition"
	case ")":
		return "closing ')' in expression"
	case "]":
		return "closing ']'"
	}
	return "'" + kind + "'"
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// RunScript runs a parsed script.
func RunScript(ctx context.Context, s *Script, opt Options) Result {
	if opt.Commands == nil {
		opt.Commands = Builtins()
	}
	if opt.Stdin == nil {
		opt.Stdin = strings.NewReader("")
	}
	r := &Runtime{ctx: ctx, opt: opt, host: opt.Host, cmds: opt.Commands, script: s, vars: map[string]any{}, lastOK: true}
	r.vars["erroractionpreference"] = "Continue"
	r.vars["input"] = stdinEnumerator(opt.Stdin)
	code := r.runTop()
	return Result{ExitCode: code, Errors: r.clixmlErrs}
}

// runTop runs the script's statements, writing each statement's output as it
// completes, and computes powershell.exe's exit code.
func (r *Runtime) runTop() int {
	list := r.script.Root.child("statement_list")
	if list == nil {
		return 0
	}
	lastExit := 0
	for _, st := range list.named() {
		if r.ctx.Err() != nil {
			return 1
		}
		r.scriptExit = 0
		r.toHost = soleCommand(st)
		r.direct = true
		out, err := r.statement(st)
		r.toHost, r.direct = false, false
		r.writeOutput(out)
		if err == nil {
			if r.scriptExit != 0 && r.opt.File == "" {
				// -Command: a script called last that ran `exit N` makes N
				// powershell.exe's exit code.
				lastExit = r.scriptExit
			} else {
				lastExit = 0
			}
			continue
		}
		var (
			exit *exitSignal
			flow *flowSignal
			term *Terminating
		)
		switch {
		case errors.As(err, &exit):
			return exit.code
		case errors.As(err, &flow):
			// return/break/continue at script level end the script quietly.
			return r.exitFor()
		case errors.As(err, &term):
			lastExit = 0
			r.report(term.Rec)
			r.lastOK = false
			if term.Script {
				return 1
			}
		default:
			r.report(scriptError(err.Error(), "NotSpecified", "", "", "RuntimeException", "RuntimeException", ""))
			return 1
		}
	}
	if lastExit != 0 {
		return lastExit
	}
	return r.exitFor()
}

// soleCommand reports whether a statement is a pipeline of one command
// with no redirection and no assignment.
func soleCommand(st *Node) bool {
	n := st
	for n.Kind == "pipeline" && len(n.Kids) == 1 {
		n = n.Kids[0]
	}
	return n.Kind == "pipeline_chain" && len(n.Kids) == 1 && n.Kids[0].Kind == "command"
}

// exitFor is the exit code when the script runs to its end: under -Command
// and -EncodedCommand 1 when the last statement failed ($? false), under
// -File 0.
func (r *Runtime) exitFor() int {
	if r.opt.File == "" && !r.lastOK {
		return 1
	}
	return 0
}

// block runs a statement list, collecting the output.
func (r *Runtime) block(n *Node) ([]any, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind == "statement_block" || n.Kind == "script_block_body" || n.Kind == "sub_expression" || n.Kind == "array_expression" {
		n = n.child("statement_list")
		if n == nil {
			return nil, nil
		}
	}
	var out []any
	for _, st := range n.named() {
		if err := r.ctx.Err(); err != nil {
			return out, &exitSignal{code: 1}
		}
		o, err := r.statement(st)
		if r.direct {
			r.writeOutput(o)
		} else {
			out = append(out, o...)
		}
		if err == nil {
			continue
		}
		if t := (*Terminating)(nil); errors.As(err, &t) && !t.Script && !r.stopping() && !r.inTry() {
			// A statement-terminating error under Continue: reported, and
			// the next statement runs.
			r.report(t.Rec)
			r.lastOK = false
			continue
		}
		return out, err
	}
	return out, nil
}

// statement runs one statement.
func (r *Runtime) statement(n *Node) ([]any, error) {
	switch n.Kind {
	case "empty_statement":
		return nil, nil
	case "pipeline":
		return r.pipelineStmt(n)
	case "if_statement":
		return r.ifStmt(n)
	case "foreach_statement":
		return r.foreachStmt(n)
	case "try_statement":
		return r.tryStmt(n)
	case "flow_control_statement":
		return r.flowStmt(n)
	case "while_statement":
		return r.whileStmt(n)
	case "for_statement":
		return r.forStmt(n)
	}
	return nil, r.terminate(n, errUnsupported("the statement '"+n.Kind+"'"), true)
}

// terminate positions a record at a node and wraps it.
func (r *Runtime) terminate(n *Node, rec *ErrorRecord, script bool) error {
	r.position(rec, n)
	return &Terminating{Rec: rec, Script: script || r.stopping()}
}

// position records where in the script an error happened, once.
func (r *Runtime) position(rec *ErrorRecord, n *Node) {
	if rec.Line > 0 || n == nil || r.script == nil {
		return
	}
	rec.Line, rec.Col, rec.File = n.Line, n.Col, r.opt.File
	rec.Width = len(firstLine(n.Text))
	rec.Source = r.script.line(n.Line)
}

// stopping reports whether $ErrorActionPreference is Stop.
func (r *Runtime) stopping() bool {
	return strings.EqualFold(toString(r.lookup("erroractionpreference")), "Stop")
}

// inTry counts the try blocks being run: inside one, statement-terminating
// errors go to the catch instead of the next statement.
func (r *Runtime) inTry() bool { return r.tries > 0 }

func (r *Runtime) ifStmt(n *Node) ([]any, error) {
	cond := n.field("condition")
	ok, err := r.condition(cond)
	if err != nil {
		return nil, err
	}
	if ok {
		return r.block(n.child("statement_block"))
	}
	if ec := n.child("elseif_clauses"); ec != nil {
		for _, c := range ec.named() {
			ok, err := r.condition(c.field("condition"))
			if err != nil {
				return nil, err
			}
			if ok {
				return r.block(c.child("statement_block"))
			}
		}
	}
	if el := n.child("else_clause"); el != nil {
		return r.block(el.child("statement_block"))
	}
	return nil, nil
}

// condition evaluates an if/elseif/while condition (a pipeline).
func (r *Runtime) condition(n *Node) (bool, error) {
	out, err := r.pipelineValue(n)
	if err != nil {
		return false, err
	}
	return toBool(collapse(out)), nil
}

func (r *Runtime) foreachStmt(n *Node) ([]any, error) {
	v := n.child("variable")
	src := n.child("pipeline")
	if v == nil || src == nil || n.child("foreach_parameter") != nil {
		return nil, r.terminate(n, errUnsupported("this form of foreach"), true)
	}
	body := n.child("statement_block")
	name := varName(v.Text)
	var val []any
	if e := soleExpression(src); e != nil {
		// An expression is enumerated as it is read: $input (a large upload
		// on stdin) is never held whole.
		one, err := r.eval(e)
		if err != nil {
			return nil, err
		}
		val = []any{one}
		if _, lazy := one.(*Enumerator); !lazy {
			val = items(one)
		}
	} else {
		out, err := r.pipelineValue(src)
		if err != nil {
			return nil, err
		}
		val = out
	}
	var out []any
	each := func(item any) (bool, error) {
		r.assign(name, item)
		o, err := r.block(body)
		out = append(out, o...)
		if f := (*flowSignal)(nil); errors.As(err, &f) {
			switch f.kind {
			case "break":
				return false, nil
			case "continue":
				return true, nil
			}
		}
		return err == nil, err
	}
	if len(val) == 1 {
		if en, ok := val[0].(*Enumerator); ok {
			for {
				item, more := en.Next()
				if !more {
					return out, nil
				}
				if goOn, err := each(item); err != nil || !goOn {
					return out, err
				}
			}
		}
	}
	for _, item := range val {
		if goOn, err := each(item); err != nil || !goOn {
			return out, err
		}
	}
	return out, nil
}

func (r *Runtime) flowStmt(n *Node) ([]any, error) {
	kw := strings.ToLower(n.Kids[0].Text)
	arg := n.child("pipeline")
	switch kw {
	case "exit":
		code := 0
		if arg != nil {
			out, err := r.pipelineValue(arg)
			if err != nil {
				return nil, err
			}
			num, ok := toNumber(collapse(out))
			if !ok {
				return nil, r.terminate(arg, errConvert(collapse(out), "System.Int32", "Input string was not in a correct format.", "RuntimeException"), true)
			}
			code = int(toFloat(num))
		}
		return nil, &exitSignal{code: code}
	case "throw":
		var v any
		if arg != nil {
			out, err := r.pipelineValue(arg)
			if err != nil {
				return nil, err
			}
			v = collapse(out)
		}
		rec := ThrowRecord(v)
		return nil, r.terminate(n, rec, true)
	case "return":
		var out []any
		if arg != nil {
			o, err := r.pipelineValue(arg)
			if err != nil {
				return nil, err
			}
			out = o
		}
		return out, &flowSignal{kind: "return"}
	case "break", "continue":
		return nil, &flowSignal{kind: kw}
	}
	return nil, r.terminate(n, errUnsupported("'"+kw+"'"), true)
}

// tryStmt runs try/catch/finally. Inside try, statement-terminating and
// non-terminating-under-Stop errors go to the first matching catch, whose $_
// is the error record.
func (r *Runtime) tryStmt(n *Node) ([]any, error) {
	r.tries++
	out, err := r.block(n.child("statement_block"))
	r.tries--
	if t := (*Terminating)(nil); errors.As(err, &t) {
		if cc := n.child("catch_clauses"); cc != nil {
			for _, c := range cc.named() {
				if !catchMatches(c, t.Rec) {
					continue
				}
				r.lastOK = true
				saved, had := r.vars["_"]
				r.vars["_"] = t.Rec
				var o []any
				o, err = r.block(c.child("statement_block"))
				out = append(out, o...)
				if had {
					r.vars["_"] = saved
				}
				break
			}
		}
	}
	if f := n.child("finally_clause"); f != nil {
		o, ferr := r.block(f.child("statement_block"))
		out = append(out, o...)
		if ferr != nil {
			err = ferr
		}
	}
	return out, err
}

// catchMatches matches a catch clause's type list against the exception.
func catchMatches(c *Node, rec *ErrorRecord) bool {
	tl := c.child("catch_type_list")
	if tl == nil {
		return true
	}
	ex := strings.ToLower(rec.Exception)
	for _, t := range tl.named() {
		name := strings.ToLower(strings.Trim(t.Text, "[] "))
		if !strings.Contains(name, ".") {
			name = "system." + name
		}
		if name == "system.exception" || name == ex || (name == "system.management.automation.runtimeexception" && strings.HasPrefix(ex, "system.management.automation.")) {
			return true
		}
	}
	return false
}

// stdinEnumerator reads the script's stdin line by line, lazily, as $input
// does when powershell.exe runs with redirected input.
func stdinEnumerator(in io.Reader) *Enumerator {
	br := newLineReader(in)
	return &Enumerator{Next: func() (any, bool) {
		line, ok := br.next()
		if !ok {
			return nil, false
		}
		return line, true
	}}
}
