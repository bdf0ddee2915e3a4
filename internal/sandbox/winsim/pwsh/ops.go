package pwsh

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// unary runs -not, !, -, +, -join, -split, , and the casts the grammar files
// here.
func (r *Runtime) unary(n *Node) (any, error) {
	if len(n.Kids) == 1 {
		return r.eval(n.Kids[0])
	}
	op := strings.ToLower(n.Kids[0].Text)
	operand := n.Kids[len(n.Kids)-1]
	if n.Kids[0].Kind == "cast_expression" || n.Kids[0].Kind == "type_literal" {
		return r.eval(n.Kids[0])
	}
	v, err := r.eval(operand)
	if err != nil {
		return nil, err
	}
	switch op {
	case "-not", "!":
		return !toBool(v), nil
	case "-":
		num, ok := toNumber(v)
		if !ok {
			return nil, r.terminate(n, errConvert(v, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger"), false)
		}
		if i, isInt := num.(int); isInt {
			return -i, nil
		}
		return -toFloat(num), nil
	case "+":
		num, ok := toNumber(v)
		if !ok {
			return nil, r.terminate(n, errConvert(v, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger"), false)
		}
		return num, nil
	case "-join":
		parts := []string{}
		for _, e := range items(v) {
			parts = append(parts, toString(e))
		}
		return strings.Join(parts, ""), nil
	case "-split":
		var out []any
		for _, f := range strings.Fields(toString(v)) {
			out = append(out, f)
		}
		return out, nil
	case ",":
		return []any{v}, nil
	}
	return nil, r.terminate(n, errUnsupported("the unary operator '"+op+"'"), true)
}

// binaryChain evaluates left-associative operator chains: a op b op c.
func (r *Runtime) binaryChain(n *Node) (any, error) {
	if len(n.Kids) == 0 {
		return nil, nil
	}
	left, err := r.eval(n.Kids[0])
	if err != nil {
		return nil, err
	}
	for i := 1; i+1 < len(n.Kids); i += 2 {
		opNode := n.Kids[i]
		op := strings.ToLower(strings.TrimSpace(opNode.Text))
		// -and / -or short-circuit.
		if op == "-and" && !toBool(left) {
			left = false
			continue
		}
		if op == "-or" && toBool(left) {
			left = true
			continue
		}
		right, err := r.eval(n.Kids[i+1])
		if err != nil {
			return nil, err
		}
		if left, err = r.binary(opNode, op, left, right); err != nil {
			return nil, err
		}
	}
	return left, nil
}

// binary applies one binary operator.
func (r *Runtime) binary(at *Node, op string, l, rv any) (any, error) {
	op = strings.ToLower(op)
	switch op {
	case "-and":
		return toBool(l) && toBool(rv), nil
	case "-or":
		return toBool(l) || toBool(rv), nil
	case "-xor":
		return toBool(l) != toBool(rv), nil
	case "+", "-", "*", "/", "%":
		return r.arith(at, op, l, rv)
	case "-band", "-bor", "-bxor":
		return r.bitwise(at, op, l, rv)
	case "-f":
		return r.format(at, toString(l), items(rv))
	case "..":
		a, okA := toNumber(l)
		b, okB := toNumber(rv)
		if !okA || !okB {
			return nil, r.terminate(at, errConvert(l, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger"), false)
		}
		from, to := int(toFloat(a)), int(toFloat(b))
		var out []any
		step := 1
		if to < from {
			step = -1
		}
		for i := from; ; i += step {
			out = append(out, i)
			if i == to {
				break
			}
		}
		return out, nil
	}
	if len(op) > 1 && op[0] == '-' {
		return r.compare(at, op, l, rv)
	}
	return nil, r.terminate(at, errUnsupported("the operator '"+op+"'"), true)
}

// arith is + - * / %: strings concatenate (+) or repeat (*), arrays append,
// hashtables merge, numbers compute (int overflows into double).
func (r *Runtime) arith(at *Node, op string, l, rv any) (any, error) {
	switch lv := l.(type) {
	case string:
		switch op {
		case "+":
			return lv + toString(rv), nil
		case "*":
			n, ok := toNumber(rv)
			if ok {
				return strings.Repeat(lv, int(toFloat(n))), nil
			}
		}
		if op != "+" && op != "*" {
			if _, ok := toNumber(lv); !ok {
				return nil, r.terminate(at, errConvert(lv, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger"), false)
			}
		}
	case []any:
		if op == "+" {
			out := append([]any{}, lv...)
			return append(out, items(rv)...), nil
		}
		return nil, r.terminate(at, scriptError(fmt.Sprintf("Method invocation failed because [System.Object[]] does not contain a method named 'op_%s'.", opName(op)),
			"InvalidOperation", "", "", "RuntimeException", "MethodNotFound", "System.Management.Automation.RuntimeException"), false)
	case *Hashtable:
		if op == "+" {
			if rh, ok := rv.(*Hashtable); ok {
				out := NewHashtable()
				for _, k := range lv.Keys() {
					v, _ := lv.Get(k)
					out.Set(k, v)
				}
				for _, k := range rh.Keys() {
					if _, dup := out.Get(k); dup {
						return nil, r.terminate(at, scriptError(fmt.Sprintf("Item has already been added. Key in dictionary: '%s'  Key being added: '%s'", k, k),
							"OperationStopped", "", "", "ArgumentException", "System.ArgumentException", "System.ArgumentException"), false)
					}
					v, _ := rh.Get(k)
					out.Set(k, v)
				}
				return out, nil
			}
		}
	case nil:
		if op == "+" {
			switch rv.(type) {
			case string, []any, *Hashtable:
				return rv, nil
			}
		}
	}
	a, okA := toNumber(l)
	b, okB := toNumber(rv)
	if !okA || !okB {
		bad := l
		if okA {
			bad = rv
		}
		return nil, r.terminate(at, errConvert(bad, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger"), false)
	}
	ai, aInt := a.(int)
	bi, bInt := b.(int)
	if aInt && bInt {
		switch op {
		case "+":
			return ai + bi, nil
		case "-":
			return ai - bi, nil
		case "*":
			return ai * bi, nil
		case "%":
			if bi == 0 {
				return nil, r.terminate(at, errDivZero(), false)
			}
			return ai % bi, nil
		case "/":
			if bi == 0 {
				return nil, r.terminate(at, errDivZero(), false)
			}
			if ai%bi == 0 {
				return ai / bi, nil
			}
			return float64(ai) / float64(bi), nil
		}
	}
	x, y := toFloat(a), toFloat(b)
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return nil, r.terminate(at, errDivZero(), false)
		}
		return x / y, nil
	}
	return math.Mod(x, y), nil
}

func opName(op string) string {
	return map[string]string{"-": "Subtraction", "*": "Multiply", "/": "Division", "%": "Modulus"}[op]
}

func errDivZero() *ErrorRecord {
	return scriptError("Attempted to divide by zero.", "NotSpecified", "", "", "RuntimeException", "RuntimeException", "System.DivideByZeroException")
}

// compare runs the comparison operators. They are case-insensitive unless
// written -c...; with an array on the left they filter it.
func (r *Runtime) compare(at *Node, op string, l, rv any) (any, error) {
	cs := false
	base := op[1:]
	if len(base) > 2 && (base[0] == 'c' || base[0] == 'i') && isComparison(base[1:]) {
		cs = base[0] == 'c'
		base = base[1:]
	}
	switch base {
	case "contains", "notcontains":
		found := false
		for _, e := range items(l) {
			if equal(e, rv, cs) {
				found = true
				break
			}
		}
		return found == (base == "contains"), nil
	case "in", "notin":
		found := false
		for _, e := range items(rv) {
			if equal(l, e, cs) {
				found = true
				break
			}
		}
		return found == (base == "in"), nil
	case "is", "isnot":
		tv, ok := rv.(*TypeValue)
		if !ok {
			return nil, r.terminate(at, errUnsupported("-is with a non-type operand"), true)
		}
		return isType(l, tv.Name) == (base == "is"), nil
	case "split":
		re, err := compileRE(toString(rv), cs)
		if err != nil {
			return nil, r.terminate(at, errRegex(toString(rv), err), false)
		}
		var out []any
		for _, e := range items(l) {
			for _, p := range re.Split(toString(e), -1) {
				out = append(out, p)
			}
		}
		return out, nil
	case "join":
		parts := []string{}
		for _, e := range items(l) {
			parts = append(parts, toString(e))
		}
		return strings.Join(parts, toString(rv)), nil
	case "replace":
		args := items(rv)
		if len(args) == 0 || len(args) > 2 {
			return nil, r.terminate(at, scriptError("The -replace operator allows only two elements to follow it, not "+strconv.Itoa(len(args))+".",
				"InvalidOperation", "", "", "RuntimeException", "BadReplaceArgument", "System.Management.Automation.RuntimeException"), false)
		}
		re, err := compileRE(toString(args[0]), cs)
		if err != nil {
			return nil, r.terminate(at, errRegex(toString(args[0]), err), false)
		}
		with := ""
		if len(args) == 2 {
			with = dotnetReplacement(toString(args[1]))
		}
		if arr, ok := l.([]any); ok {
			out := make([]any, len(arr))
			for i, e := range arr {
				out[i] = re.ReplaceAllString(toString(e), with)
			}
			return out, nil
		}
		return re.ReplaceAllString(toString(l), with), nil
	}
	if !isComparison(base) {
		return nil, r.terminate(at, errUnsupported("the operator '"+op+"'"), true)
	}
	if arr, ok := l.([]any); ok {
		out := []any{}
		for _, e := range arr {
			ok, err := r.compare1(at, base, e, rv, cs)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, e)
			}
		}
		return out, nil
	}
	return r.compare1(at, base, l, rv, cs)
}

func isComparison(s string) bool {
	switch s {
	case "eq", "ne", "lt", "gt", "le", "ge", "like", "notlike", "match", "notmatch", "contains", "notcontains", "in", "notin", "replace", "split":
		return true
	}
	return false
}

func (r *Runtime) compare1(at *Node, op string, l, rv any, cs bool) (bool, error) {
	switch op {
	case "eq":
		return equal(l, rv, cs), nil
	case "ne":
		return !equal(l, rv, cs), nil
	case "like", "notlike":
		re := wildcardRE(toString(rv), cs)
		return re.MatchString(toString(l)) == (op == "like"), nil
	case "match", "notmatch":
		re, err := compileRE(toString(rv), cs)
		if err != nil {
			return false, r.terminate(at, errRegex(toString(rv), err), false)
		}
		s := toString(l)
		m := re.FindStringSubmatch(s)
		if m != nil && op == "match" {
			h := NewHashtable()
			for i, g := range m {
				if i > 0 && m[i] == "" && !strings.Contains(s, g) {
					continue
				}
				h.Set(strconv.Itoa(i), g)
			}
			for i, name := range re.SubexpNames() {
				if name != "" {
					h.Set(name, m[i])
				}
			}
			r.assign("matches", h)
		}
		return (m != nil) == (op == "match"), nil
	}
	c, err := order(l, rv, cs)
	if err != nil {
		return false, r.terminate(at, err, false)
	}
	switch op {
	case "lt":
		return c < 0, nil
	case "gt":
		return c > 0, nil
	case "le":
		return c <= 0, nil
	}
	return c >= 0, nil
}

// equal compares as PowerShell does: the right operand converts to the left
// operand's type.
func equal(l, rv any, cs bool) bool {
	switch lv := l.(type) {
	case nil:
		return rv == nil
	case string:
		if cs {
			return lv == toString(rv)
		}
		return strings.EqualFold(lv, toString(rv))
	case int, float64:
		n, ok := toNumber(rv)
		if !ok || rv == nil {
			return false
		}
		return toFloat(lv) == toFloat(n)
	case bool:
		return lv == toBool(rv)
	}
	return l == rv
}

// order compares for -lt/-gt/-le/-ge.
func order(l, rv any, cs bool) (int, *ErrorRecord) {
	switch lv := l.(type) {
	case string:
		a, b := lv, toString(rv)
		if !cs {
			a, b = strings.ToLower(a), strings.ToLower(b)
		}
		return strings.Compare(a, b), nil
	case int, float64, nil, bool:
		a, _ := toNumber(l)
		b, ok := toNumber(rv)
		if !ok {
			return 0, errConvert(rv, "System.Int32", "Input string was not in a correct format.", "InvalidCastFromStringToInteger")
		}
		x, y := toFloat(a), toFloat(b)
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	}
	return 0, scriptError(fmt.Sprintf("Cannot compare \"%s\" because it is not IComparable.", toString(l)),
		"InvalidOperation", "", "", "RuntimeException", "NotIcomparable", "System.Management.Automation.RuntimeException")
}
