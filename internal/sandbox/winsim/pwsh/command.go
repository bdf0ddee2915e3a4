package pwsh

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
)

var rangeAtStart = regexp.MustCompile(`^-?\d+\.\.`)

// Registry is a set of cmdlets, by name and alias.
type Registry struct {
	byName map[string]*Cmdlet
	list   []*Cmdlet
}

func NewRegistry(cmds ...*Cmdlet) *Registry {
	g := &Registry{byName: map[string]*Cmdlet{}}
	g.Add(cmds...)
	return g
}

func (g *Registry) Add(cmds ...*Cmdlet) {
	for _, c := range cmds {
		g.list = append(g.list, c)
		g.byName[strings.ToLower(c.Name)] = c
		for _, a := range c.Aliases {
			g.byName[strings.ToLower(a)] = c
		}
	}
}

func (g *Registry) Lookup(name string) (*Cmdlet, bool) {
	c, ok := g.byName[strings.ToLower(name)]
	return c, ok
}

// All returns the cmdlets in registration order.
func (g *Registry) All() []*Cmdlet { return append([]*Cmdlet(nil), g.list...) }

// Call is one invocation of a cmdlet.
type Call struct {
	Cmd   *Cmdlet
	Args  map[string]any // bound parameters by canonical name
	Input []any          // pipeline input
	// HasInput is true when the cmdlet is not the first in its pipeline.
	HasInput bool
	// Set is the parameter set the arguments resolved to (paramsets.go).
	Set   string
	Ctx   context.Context
	Host  Host
	rt    *Runtime
	node  *Node
	out   []any
	errTo string // "" the console, "null" discarded (2>$null), "output" merged (2>&1)
}

// Has reports whether a parameter was bound.
func (c *Call) Has(name string) bool { _, ok := c.Args[name]; return ok }

// Str returns a bound string parameter ("" when unbound).
func (c *Call) Str(name string) string {
	v, ok := c.Args[name]
	if !ok {
		return ""
	}
	if ss, ok := v.([]string); ok {
		return strings.Join(ss, " ")
	}
	return toString(v)
}

// Strs returns a bound string[] parameter.
func (c *Call) Strs(name string) []string {
	switch v := c.Args[name].(type) {
	case []string:
		return v
	case nil:
		return nil
	default:
		return []string{toString(v)}
	}
}

// Switch returns a bound switch.
func (c *Call) Switch(name string) bool { return toBool(c.Args[name]) }

// Value returns a bound parameter as bound.
func (c *Call) Value(name string) any { return c.Args[name] }

// Write sends an object down the pipeline.
func (c *Call) Write(v any) { c.out = append(c.out, v) }

// HostOut writes a line straight to the host (Write-Host).
func (c *Call) HostOut(s string) {
	if c.rt.opt.Stdout != nil {
		_, _ = io.WriteString(c.rt.opt.Stdout, s) // the host's console: no one to report to
	}
}

// action is the effective ErrorAction.
func (c *Call) action() string {
	if v, ok := c.Args["ErrorAction"]; ok {
		return toString(v)
	}
	return toString(c.rt.lookup("erroractionpreference"))
}

// Error writes a non-terminating error. Under ErrorAction Stop it becomes
// terminating: the cmdlet must return the error it gets back.
func (c *Call) Error(rec *ErrorRecord) error {
	if rec.Command == "" {
		rec.Command = c.Cmd.Name
	}
	c.rt.position(rec, c.node)
	c.rt.fail()
	switch strings.ToLower(c.action()) {
	case "silentlycontinue":
		c.rt.errs = append([]any{rec}, c.rt.errs...)
		return nil
	case "ignore":
		return nil
	case "stop":
		// -ErrorAction decides before any redirection: 2>$null does not
		// keep Stop from terminating.
		return &Terminating{Rec: rec, Script: true}
	}
	switch c.errTo {
	case "null":
		c.rt.errs = append([]any{rec}, c.rt.errs...) // still in $Error
		return nil
	case "output":
		c.rt.errs = append([]any{rec}, c.rt.errs...)
		c.out = append(c.out, rec)
		return nil
	}
	c.rt.report(rec)
	return nil
}

// Throw is a terminating error of the cmdlet (ThrowTerminatingError).
func (c *Call) Throw(rec *ErrorRecord) error {
	if rec.Command == "" {
		rec.Command = c.Cmd.Name
	}
	return c.rt.terminate(c.node, rec, false)
}

// Fail makes an error record of this cmdlet: category, target, reason
// exception and error id as Windows reports them.
func (c *Call) Fail(msg, category, target, reason, id, exception string) *ErrorRecord {
	return commandError(c.Cmd.Name, c.Cmd.Class, msg, category, target, "String", reason, id, exception)
}

// Invoke runs a script block with $_ set (ForEach-Object, Where-Object).
func (c *Call) Invoke(sb *ScriptBlock, dollarUnder any) ([]any, error) {
	return c.rt.invokeBlock(sb, dollarUnder, nil)
}

// Unmodelled refuses a use of a real feature the simulated host does not model.
func (c *Call) Unmodelled(what string) error {
	return c.rt.terminate(c.node, errUnsupported(what+" ("+c.Cmd.Name+")"), true)
}

// invokeBlock runs a script block in a child scope.
func (r *Runtime) invokeBlock(sb *ScriptBlock, dollarUnder any, args []any) ([]any, error) {
	if r.direct {
		r.direct = false
		defer func() { r.direct = true }()
	}
	if sb.Body == nil {
		return nil, nil
	}
	if sb.Body.child("param_block") != nil {
		return nil, r.terminate(sb.Body, errUnsupported("script blocks with param()"), true)
	}
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > 100 {
		return nil, r.terminate(sb.Body, scriptError("The script failed due to call depth overflow.", "InvalidOperation", "", "", "ParentContainsErrorRecordException", "CallDepthOverflow", "System.Management.Automation.ScriptCallDepthException"), true)
	}
	r.locals = append(r.locals, map[string]any{"_": dollarUnder, "args": args})
	defer func() { r.locals = r.locals[:len(r.locals)-1] }()
	body := sb.Body.child("script_block_body")
	if body == nil {
		return nil, nil
	}
	if body.child("named_block_list") != nil {
		return nil, r.terminate(body, errUnsupported("begin/process/end blocks"), true)
	}
	out, err := r.block(body.child("statement_list"))
	if f := (*flowSignal)(nil); errors.As(err, &f) && f.kind == "return" {
		return out, nil
	}
	return out, err
}

// chain runs a pipeline: stages separated by |, each fed the previous
// stage's output.
func (r *Runtime) chain(n *Node) ([]any, error) {
	var stages [][]*Node
	cur := []*Node{}
	for _, k := range n.Kids {
		if !k.Named && k.Text == "|" {
			stages = append(stages, cur)
			cur = []*Node{}
			continue
		}
		cur = append(cur, k)
	}
	stages = append(stages, cur)
	var input []any
	for i, st := range stages {
		if len(st) == 0 {
			return nil, r.terminate(n, errUnsupported("an empty pipe element"), true)
		}
		head := st[0]
		var redirs []*Node
		for _, k := range st[1:] {
			if k.Kind == "redirections" {
				redirs = append(redirs, k.named()...)
			} else if k.Named {
				return nil, r.terminate(k, errUnsupported("the pipeline element '"+k.Kind+"'"), true)
			}
		}
		var out []any
		var err error
		if head.Kind == "command" {
			r.downstream = i < len(stages)-1
			out, err = r.command(head, input, i > 0)
		} else {
			if i > 0 {
				return nil, r.terminate(head, scriptError("Expressions are only allowed as the first element of a pipeline.", "ParserError", "", "", "ParentContainsErrorRecordException", "ExpressionsMustBeFirstInPipeline", "System.Management.Automation.ParseException"), true)
			}
			var v any
			v, err = r.eval(head)
			out = enumerate(v)
			if isIncrement(head.Kind) || (head.Kind == "expression_with_unary_operator" && len(head.named()) == 1 && isIncrement(head.named()[0].Kind)) {
				out = nil // $i++ as a statement writes nothing
			}
			if err == nil && len(redirs) > 0 {
				out, err = r.redirect(head, redirs, out, nil)
			}
		}
		if err != nil {
			return nil, err
		}
		input = out
	}
	return input, nil
}

// element is one command element: a parameter token or an argument.
type element struct {
	param string // "Name" for -Name / -Name:
	colon bool
	node  *Node
}

// command runs one command of a pipeline.
func (r *Runtime) command(n *Node, input []any, hasInput bool) ([]any, error) {
	stream := r.toHost
	r.toHost = false
	piped := r.downstream
	r.downstream = false
	nameNode := n.field("command_name")
	if nameNode == nil {
		return nil, r.terminate(n, errUnsupported("this command form"), true)
	}
	invoke := n.child("command_invokation_operator")
	if invoke != nil && strings.TrimSpace(invoke.Text) == "." {
		return nil, r.terminate(n, errUnsupported("dot-sourcing"), true)
	}
	var elems []element
	var redirs []*Node
	if ce := n.field("command_elements"); ce != nil {
		for _, k := range ce.Kids {
			switch k.Kind {
			case "command_argument_sep":
			case "command_parameter":
				t := strings.TrimPrefix(k.Text, "-")
				elems = append(elems, element{param: strings.TrimSuffix(t, ":"), colon: strings.HasSuffix(t, ":"), node: k})
			case "redirection":
				redirs = append(redirs, k)
			case "stop_parsing":
				return nil, r.terminate(k, errUnsupported("the stop-parsing token --%"), true)
			default:
				if rd := asRedirection(k); rd != nil {
					redirs = append(redirs, rd)
					continue
				}
				elems = append(elems, element{node: k})
			}
		}
	}
	// The command's name: a bareword, or an expression after &.
	var name string
	if nameNode.Kind == "command_name" && invoke == nil {
		name = nameNode.Text
		if rangeAtStart.MatchString(name) {
			// Grammar gap: tree-sitter-powershell reads a range that starts a
			// statement (1..5 | ...) as a command name. PowerShell would
			// enumerate it; refuse rather than fail as an unknown command.
			return nil, r.terminate(n, errUnsupported("a range that starts a pipeline (tree-sitter-powershell reads 1..5 there as a command name)"), true)
		}
	} else {
		target := nameNode
		if nameNode.Kind == "command_name_expr" && len(nameNode.Kids) == 1 {
			target = nameNode.Kids[0]
		}
		// & $script: the grammar reads a lone variable after & as a path
		// command name; PowerShell invokes the variable's value.
		if target.Kind == "path_command_name" && len(target.Kids) == 1 && target.Kids[0].Kind == "variable" {
			target = target.Kids[0]
		}
		var v any
		var err error
		if target.Kind == "command_name" || target.Kind == "path_command_name" {
			v = target.Text
		} else if v, err = r.eval(target); err != nil {
			return nil, err
		}
		if sb, ok := v.(*ScriptBlock); ok {
			if len(elems) > 0 {
				return nil, r.terminate(n, errUnsupported("arguments to a script block"), true)
			}
			return r.invokeBlock(sb, nil, nil)
		}
		name = toString(v)
	}
	if c, ok := r.cmds.Lookup(name); ok && !strings.ContainsAny(name, `\/`) {
		errTo, err := r.errorStream(redirs)
		if err != nil {
			return nil, err
		}
		out, err := r.cmdlet(n, c, elems, input, hasInput, errTo)
		if err == nil && len(redirs) > 0 {
			return r.redirect(n, redirs, out, nil)
		}
		return out, err
	}
	if len(redirs) == 0 && !hasInput {
		if path, ok := r.host.ResolveNative(name); ok && isScriptFile(path) {
			var args []any
			for _, e := range elems {
				if e.param != "" {
					args = append(args, e.node.Text)
					continue
				}
				v, err := r.argValue(e.node)
				if err != nil {
					return nil, err
				}
				args = append(args, v)
			}
			return r.runScriptFile(n, path, args, stream)
		}
	}
	return r.native(n, name, elems, redirs, input, hasInput, piped)
}

// cmdlet binds and runs a modelled cmdlet. errTo is where its
// non-terminating errors go (errorStream).
func (r *Runtime) cmdlet(n *Node, c *Cmdlet, elems []element, input []any, hasInput bool, errTo string) ([]any, error) {
	var named []namedArg
	var positional []arg
	for i := 0; i < len(elems); i++ {
		e := elems[i]
		if e.param == "" {
			v, err := r.argValue(e.node)
			if err != nil {
				return nil, err
			}
			positional = append(positional, arg{value: v, text: e.node.Text, node: e.node})
			continue
		}
		p, rec := c.findParam(e.param)
		if rec != nil {
			return nil, r.terminate(e.node, rec, false)
		}
		if p.Type == "SwitchParameter" && !e.colon {
			named = append(named, namedArg{p, arg{value: true, text: e.node.Text}})
			continue
		}
		if i+1 >= len(elems) || elems[i+1].param != "" {
			typ := p.Type
			if typ == "SwitchParameter" {
				typ = "System.Management.Automation.SwitchParameter"
			}
			return nil, r.terminate(e.node, c.bindError("Missing an argument for parameter '"+p.Name+"'. Specify a parameter of type '"+typ+"' and try again.", "MissingArgument"), false)
		}
		i++
		v, err := r.argValue(elems[i].node)
		if err != nil {
			return nil, err
		}
		named = append(named, namedArg{p, arg{value: v, text: elems[i].node.Text, node: elems[i].node}})
	}
	args, set, rec := c.bind(named, positional, hasInput)
	if rec != nil {
		if rec.ErrorID == "SimulatorNotModelled" {
			return nil, r.terminate(n, rec, true)
		}
		return nil, r.terminate(n, rec, false)
	}
	call := &Call{Cmd: c, Args: args, Set: set, Input: input, HasInput: hasInput, Ctx: r.ctx, Host: r.host, rt: r, node: n, errTo: errTo}
	err := c.Run(call)
	return call.out, err
}

// argValue evaluates a command argument: barewords are strings.
func (r *Runtime) argValue(n *Node) (any, error) {
	switch n.Kind {
	case "generic_token", "command_name", "path_command_name":
		return n.Text, nil
	}
	return r.eval(n)
}

// redirect applies > $null, 2>$null, 2>&1 and *> $null to a command's output.
// stderrLines are a native program's captured stderr.
func (r *Runtime) redirect(n *Node, redirs []*Node, out []any, stderrLines []string) ([]any, error) {
	for _, rd := range redirs {
		op, toNull, ok := redirection(rd)
		target := rd.child("redirected_file_name")
		switch {
		case !ok:
			return nil, r.terminate(rd, errUnsupported("the redirection "+rd.Text), true)
		case op == "2>&1":
		case (op == ">" || op == "1>") && toNull:
			out = nil
		case op == "2>" && toNull:
		case op == "*>" && toNull:
			out = nil
		case op == ">" || op == ">>":
			if err := r.redirectToFile(rd, target, op == ">>", out); err != nil {
				return nil, err
			}
			out = nil
		}
	}
	return out, nil
}

// redirectToFile is `> file` / `>> file`: Out-File, which in Windows
// PowerShell 5.1 writes UTF-16LE with a byte order mark (about_Redirection
// 5.1: "the redirection operators use Out-File ... Unicode by default";
// about_Character_Encoding 5.1: Out-File defaults to Unicode). The mark is
// written at the start of the file only (StreamWriter writes the preamble
// at position 0), also when there is no output.
func (r *Runtime) redirectToFile(rd, target *Node, appendTo bool, out []any) error {
	var parts []*Node
	for _, k := range target.named() {
		if k.Kind != "command_argument_sep" {
			parts = append(parts, k)
		}
	}
	if len(parts) != 1 {
		return r.terminate(rd, errUnsupported("this redirection target"), true)
	}
	pv, err := r.argValue(parts[0])
	if err != nil {
		return err
	}
	path := r.host.FullPath(toString(pv))
	var text strings.Builder
	for _, o := range out {
		for _, l := range formatLines(o) {
			text.WriteString(l + "\r\n")
		}
	}
	existing := 0
	if appendTo {
		if old, err := r.host.ReadFile(path); err == nil {
			existing = len(old)
			if existing > 0 && !(len(old) >= 2 && old[0] == 0xFF && old[1] == 0xFE) {
				// 5.1's Out-File -Append looks at the file's own encoding
				// first; the simulator does not model that.
				return r.terminate(rd, errUnsupported(">> to a file that is not UTF-16LE"), true)
			}
		}
	}
	b := EncUnicode.Encode(text.String(), existing)
	if !parentExists(r.host, path) {
		return r.terminate(rd, scriptError("Could not find a part of the path '"+path+"'.", "OpenError", "", "", "DirectoryNotFoundException", "FileOpenFailure,Microsoft.PowerShell.Commands.OutFileCommand", "System.IO.DirectoryNotFoundException"), false)
	}
	if err := r.host.WriteFile(path, b, appendTo); err != nil {
		return r.terminate(rd, scriptError("Could not find a part of the path '"+path+"'.", "OpenError", "", "", "DirectoryNotFoundException", "FileOpenFailure,Microsoft.PowerShell.Commands.OutFileCommand", "System.IO.DirectoryNotFoundException"), false)
	}
	return nil
}
