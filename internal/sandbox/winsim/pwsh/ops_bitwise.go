package pwsh

import "math"

// bitwise is -band, -bor and -bxor (about_Arithmetic_Operators, "Bitwise
// operators": https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_arithmetic_operators?view=powershell-5.1).
// The operands are converted to integers as [int]/[long] casts convert them:
// numeric strings are parsed, doubles rounded half to even; the result is
// an Int32 when it fits, else an Int64 (kept as int).
func (r *Runtime) bitwise(at *Node, op string, l, rv any) (any, error) {
	a, rec := toInteger(l)
	if rec != nil {
		return nil, r.terminate(at, rec, false)
	}
	b, rec := toInteger(rv)
	if rec != nil {
		return nil, r.terminate(at, rec, false)
	}
	switch op {
	case "-band":
		return a & b, nil
	case "-bor":
		return a | b, nil
	}
	return a ^ b, nil
}

// toInteger converts an operand of a bitwise operator.
func toInteger(v any) (int, *ErrorRecord) {
	switch v.(type) {
	case nil, int, float64, bool, string:
	default:
		return 0, errConvert(v, "System.Int64", "", "ConvertToFinalInvalidCastException")
	}
	n, ok := toNumber(v)
	if !ok {
		return 0, errConvert(v, "System.Int64", "Input string was not in a correct format.", "InvalidCastFromStringToInteger")
	}
	if f, isF := n.(float64); isF {
		if math.IsNaN(f) || math.Abs(f) > math.MaxInt64 {
			return 0, errConvert(v, "System.Int64", "Value was either too large or too small for an Int64.", "InvalidCastIConvertible")
		}
		return int(math.RoundToEven(f)), nil
	}
	return n.(int), nil
}

// increment is ++$x, $x++, --$x and $x-- (about_Assignment_Operators, "The
// increment and decrement operators"): the variable becomes its value plus
// or minus one ($null counts as 0); the prefix forms are the new value, the
// postfix forms the old one. As a statement of their own they output
// nothing (chain drops it).
func (r *Runtime) increment(n *Node) (any, error) {
	var target *Node
	for _, k := range n.named() {
		target = k
	}
	if target == nil || target.Kind != "variable" {
		return nil, r.terminate(n, errUnsupported("++/-- on anything but a variable"), true)
	}
	old, err := r.eval(target)
	if err != nil {
		return nil, err
	}
	op := "+"
	if n.Kind == "pre_decrement_expression" || n.Kind == "post_decrement_expression" {
		op = "-"
	}
	base := old
	if base == nil {
		base = 0
	}
	nv, err := r.arith(n, op, base, 1)
	if err != nil {
		return nil, err
	}
	if err := r.assignVar(target, nv); err != nil {
		return nil, err
	}
	if n.Kind == "pre_increment_expression" || n.Kind == "pre_decrement_expression" {
		return nv, nil
	}
	return old, nil
}

func isIncrement(kind string) bool {
	switch kind {
	case "pre_increment_expression", "pre_decrement_expression", "post_increment_expression", "post_decrement_expression":
		return true
	}
	return false
}
