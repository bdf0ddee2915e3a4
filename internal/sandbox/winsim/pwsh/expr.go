package pwsh

import (
	"strconv"
	"strings"
)

// pipelineStmt runs a pipeline as a statement: it keeps $? (false when the
// pipeline wrote an error or a native program exited non-zero).
func (r *Runtime) pipelineStmt(n *Node) ([]any, error) {
	saved := r.failedNow
	r.failedNow = false
	r.question = r.lastOK
	out, err := r.pipelineValue(n)
	failed := r.failedNow || err != nil
	r.lastOK = !failed
	r.failedNow = saved || failed
	return out, err
}

// fail marks the running statement as failed ($? false).
func (r *Runtime) fail() {
	r.failedNow = true
	r.lastOK = false
}

// pipelineValue evaluates a pipeline node (or an assignment) to its output.
func (r *Runtime) pipelineValue(n *Node) ([]any, error) {
	if r.direct {
		r.direct = false
		defer func() { r.direct = true }()
	}
	switch n.Kind {
	case "pipeline":
		if len(n.Kids) == 1 && n.Kids[0].Kind == "assignment_expression" {
			return nil, r.assignment(n.Kids[0])
		}
		if n.child("pipeline_chain_tail") != nil || len(n.Kids) != 1 {
			return nil, r.terminate(n, errUnsupported("pipeline chains (&&, ||: PowerShell 7 only)"), true)
		}
		return r.pipelineValue(n.Kids[0])
	case "assignment_expression":
		return nil, r.assignment(n)
	case "pipeline_chain":
		return r.chain(n)
	}
	v, err := r.eval(n)
	if err != nil {
		return nil, err
	}
	return enumerate(v), nil
}

// enumerate is what an expression writes to the pipeline.
func enumerate(v any) []any {
	if en, ok := v.(*Enumerator); ok {
		var out []any
		for {
			item, more := en.Next()
			if !more {
				return out
			}
			out = append(out, item)
		}
	}
	return items(v)
}

// soleExpression returns the expression of a pipeline that is just one
// expression (no command), else nil. Assigning such a pipeline keeps the
// value as it is (an array stays an array, even of one element).
func soleExpression(n *Node) *Node {
	for n.Kind == "pipeline" && len(n.Kids) == 1 {
		n = n.Kids[0]
	}
	if n.Kind != "pipeline_chain" || len(n.Kids) != 1 || n.Kids[0].Kind == "command" {
		return nil
	}
	return n.Kids[0]
}

// value evaluates a pipeline or expression node to one value.
func (r *Runtime) value(n *Node) (any, error) {
	if e := soleExpression(n); e != nil {
		return r.eval(e)
	}
	if n.Kind == "pipeline" || n.Kind == "pipeline_chain" || n.Kind == "assignment_expression" {
		out, err := r.pipelineValue(n)
		return collapse(out), err
	}
	return r.eval(n)
}

// eval evaluates an expression node.
func (r *Runtime) eval(n *Node) (any, error) {
	if r.direct {
		r.direct = false
		defer func() { r.direct = true }()
	}
	switch n.Kind {
	case "pipeline", "pipeline_chain", "assignment_expression":
		return r.value(n)
	case "integer_literal", "decimal_integer_literal", "hexadecimal_integer_literal", "real_literal":
		return parseNumber(n)
	case "string_literal":
		return r.stringLiteral(n.Kids[0])
	case "expandable_string_literal", "verbatim_string_characters", "expandable_here_string_literal", "verbatim_here_string_characters":
		return r.stringLiteral(n)
	case "variable":
		return r.variable(n)
	case "argument_list":
		// Grammar gap: tree-sitter-powershell reads a parenthesis right
		// after a bare command argument (New-Object T('a', 'b')) as a
		// method's argument list; PowerShell ends the bare word at '(' and
		// reads a parenthesised expression, a separate argument: one
		// value, or the array of the comma-separated ones (the usual
		// New-Object form, about_Parsing "argument mode").
		var vals []any
		if list := n.field("argument_expression_list"); list != nil {
			for _, a := range list.named() {
				v, err := r.eval(a)
				if err != nil {
					return nil, err
				}
				vals = append(vals, v)
			}
		}
		if len(vals) == 1 {
			return vals[0], nil
		}
		return vals, nil
	case "parenthesized_expression":
		p := n.child("pipeline")
		if p == nil {
			return nil, nil
		}
		return r.value(p)
	case "sub_expression":
		out, err := r.block(n)
		return collapse(out), err
	case "array_expression":
		out, err := r.block(n)
		if out == nil {
			out = []any{}
		}
		return out, err
	case "hash_literal_expression":
		return r.hashLiteral(n)
	case "script_block_expression":
		return &ScriptBlock{Body: n.child("script_block"), Text: strings.TrimSuffix(strings.TrimPrefix(n.Text, "{"), "}")}, nil
	case "array_literal_expression":
		var out []any
		for _, k := range n.named() {
			v, err := r.eval(k)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "expression_with_unary_operator":
		return r.unary(n)
	case "pre_increment_expression", "pre_decrement_expression", "post_increment_expression", "post_decrement_expression":
		return r.increment(n)
	case "cast_expression":
		return r.cast(n)
	case "type_literal":
		name := typeLiteralName(n)
		if _, ok := lookupType(name); !ok {
			return nil, r.terminate(n, errTypeNotFound(name), false)
		}
		return &TypeValue{Name: name}, nil
	case "member_access":
		return r.memberAccess(n)
	case "invokation_expression":
		return r.invoke(n)
	case "element_access":
		return r.elementAccess(n)
	case "logical_expression", "bitwise_expression", "comparison_expression", "additive_expression",
		"multiplicative_expression", "format_expression", "range_expression",
		// The same operators in a method call's argument list.
		"logical_argument_expression", "bitwise_argument_expression", "comparison_argument_expression",
		"additive_argument_expression", "multiplicative_argument_expression", "format_argument_expression", "range_argument_expression":
		return r.binaryChain(n)
	case "command":
		out, err := r.chain(&Node{Kind: "pipeline_chain", Kids: []*Node{n}})
		return collapse(out), err
	}
	return nil, r.terminate(n, errUnsupported("the expression '"+n.Kind+"'"), true)
}

func parseNumber(n *Node) (any, error) {
	t := strings.ToLower(strings.TrimSpace(n.Text))
	mult := 1
	for suffix, m := range map[string]int{"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSuffix(t, suffix), m
		}
	}
	t = strings.TrimSuffix(t, "l")
	if strings.HasPrefix(t, "0x") {
		v, err := strconv.ParseInt(t[2:], 16, 64)
		if err == nil {
			return int(v) * mult, nil
		}
	}
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		return int(v) * mult, nil
	}
	if f, err := strconv.ParseFloat(strings.TrimSuffix(t, "d"), 64); err == nil {
		return f * float64(mult), nil
	}
	return nil, errUnsupportedNumber(n)
}

func errUnsupportedNumber(n *Node) error {
	return &Terminating{Rec: errUnsupported("the number literal " + n.Text), Script: true}
}

// variable reads $name, $env:NAME and the automatic variables.
func (r *Runtime) variable(n *Node) (any, error) {
	name := varName(n.Text)
	lower := strings.ToLower(name)
	switch lower {
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "?":
		return r.question, nil
	case "psitem":
		lower = "_"
	case "error":
		return append([]any{}, r.errs...), nil
	}
	if strings.HasPrefix(lower, "env:") {
		if v, ok := r.host.Getenv(name[4:]); ok {
			return v, nil
		}
		return nil, nil
	}
	if strings.Contains(lower, ":") {
		return nil, r.terminate(n, errUnsupported("the variable drive of "+n.Text), true)
	}
	if v, ok := r.lookupOK(lower); ok {
		return v, nil
	}
	if v, ok, err := r.automatic(n, lower); ok {
		return v, err
	}
	return nil, nil
}

func (r *Runtime) hashLiteral(n *Node) (any, error) {
	h := NewHashtable()
	body := n.child("hash_literal_body")
	if body == nil {
		return h, nil
	}
	for _, e := range body.named() {
		if e.Kind != "hash_entry" {
			continue
		}
		kn := e.child("key_expression")
		vn := e.child("pipeline")
		if kn == nil || vn == nil {
			return nil, r.terminate(e, errUnsupported("this hashtable entry"), true)
		}
		var key any = kn.Text
		if k := kn.named(); len(k) == 1 && k[0].Kind != "simple_name" {
			v, err := r.eval(k[0])
			if err != nil {
				return nil, err
			}
			key = v
		}
		v, err := r.value(vn)
		if err != nil {
			return nil, err
		}
		if _, dup := h.Get(toString(key)); dup {
			return nil, r.terminate(kn, errDuplicateKey(toString(key)), false)
		}
		h.Set(toString(key), v)
	}
	return h, nil
}

// stringLiteral evaluates a string token: single-quoted text is literal (a
// doubled quote is one quote, typographic ones too: quotes.go); double-quoted
// text and here-strings expand $var, $env:X, $(...) and backtick escapes.
func (r *Runtime) stringLiteral(n *Node) (any, error) {
	t := n.Text
	switch n.Kind {
	case "verbatim_string_characters":
		v, _ := verbatimValue(t) // Parse refused a string Windows reads otherwise
		return v, nil
	case "verbatim_here_string_characters":
		return hereBody(t), nil
	}
	// The body between the quotes (or the here-string's first and last lines).
	from, to := 1, len(t)-1
	if n.Kind == "expandable_here_string_literal" {
		from = strings.IndexByte(t, '\n') + 1
		to = strings.LastIndexByte(t, '\n')
		if to > 0 && t[to-1] == '\r' {
			to--
		}
		if from <= 0 || to < from {
			return "", nil
		}
	}
	// Splice the expanded children into the text around them.
	var b strings.Builder
	pos := from
	for _, k := range n.Kids {
		if !k.Named {
			continue
		}
		start := indexOfChild(n, k)
		if start < pos || start >= to {
			continue
		}
		b.WriteString(unescape(t[pos:start]))
		v, err := r.eval(k)
		if err != nil {
			return nil, err
		}
		b.WriteString(toString(v))
		pos = start + len(k.Text)
	}
	if pos < to {
		b.WriteString(unescape(t[pos:to]))
	}
	return b.String(), nil
}

// indexOfChild finds a child's byte offset inside its parent's text from the
// line/column positions.
func indexOfChild(parent, child *Node) int {
	off := 0
	line, col := parent.Line, parent.Col
	t := parent.Text
	for off < len(t) && (line < child.Line || (line == child.Line && col < child.Col)) {
		if t[off] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		off++
	}
	return off
}

// hereBody strips a here-string's @" / "@ lines.
func hereBody(t string) string {
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSuffix(t, "\r")
}

// unescape applies PowerShell's backtick escapes and "" inside double quotes.
func unescape(s string) string {
	if !strings.ContainsAny(s, "`\"") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case 'a':
				b.WriteByte(7)
			case 'b':
				b.WriteByte(8)
			case 'e':
				b.WriteByte(27)
			case 'f':
				b.WriteByte(12)
			case 'v':
				b.WriteByte(11)
			default:
				b.WriteByte(s[i])
			}
		case c == '"' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func typeLiteralName(n *Node) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(n.Text), "["), "]"))
}

func memberName(n *Node) string {
	m := n.child("member_name")
	if m == nil {
		return ""
	}
	return strings.Trim(m.Text, `'"`)
}
