package pwsh

import (
	"math"
	"strings"
)

// assignment runs `target op= value`.
func (r *Runtime) assignment(n *Node) error {
	target, opNode, val := n.Kids[0], n.child("assignement_operator"), n.field("value")
	if opNode == nil || val == nil {
		return r.terminate(n, errUnsupported("this assignment"), true)
	}
	v, err := r.value(val)
	if err != nil {
		return err
	}
	op := strings.TrimSpace(opNode.Text)
	if op != "=" {
		cur, err := r.eval(target)
		if err != nil {
			return err
		}
		sym := strings.TrimSuffix(op, "=")
		if v, err = r.binary(opNode, sym, cur, v); err != nil {
			return err
		}
	}
	switch target.Kind {
	case "variable":
		return r.assignVar(target, v)
	case "member_access":
		obj, err := r.eval(target.Kids[0])
		if err != nil {
			return err
		}
		name := memberName(target)
		switch o := obj.(type) {
		case *Hashtable:
			o.Set(name, v)
			return nil
		case *Object:
			if _, ok := o.Get(name); ok {
				o.Set(name, v)
				return nil
			}
		}
		return r.terminate(target, scriptError("The property '"+name+"' cannot be found on this object. Verify that the property exists and can be set.",
			"InvalidOperation", "", "", "RuntimeException", "PropertyAssignmentException", "System.Management.Automation.RuntimeException"), false)
	case "array_literal_expression":
		return r.multiAssign(target, op, v)
	case "element_access":
		obj, err := r.eval(target.Kids[0])
		if err != nil {
			return err
		}
		idx, err := r.eval(target.named()[1])
		if err != nil {
			return err
		}
		switch o := obj.(type) {
		case *Hashtable:
			o.Set(toString(idx), v)
			return nil
		case []any:
			i, ok := toNumber(idx)
			if n, isInt := i.(int); ok && isInt && n >= 0 && n < len(o) {
				o[n] = v
				return nil
			}
			return r.terminate(target, errIndexRange(), false)
		case []byte:
			// An element of a byte[] is converted to System.Byte as
			// Convert.ToByte converts: doubles rounded half to even, out of
			// 0..255 an OverflowException.
			i, ok := toNumber(idx)
			n, isInt := i.(int)
			if !ok || !isInt || n < 0 || n >= len(o) {
				return r.terminate(target, errIndexRange(), false)
			}
			b, rec := toByte(v)
			if rec != nil {
				return r.terminate(target, rec, false)
			}
			o[n] = b
			return nil
		}
	}
	return r.terminate(target, errUnsupported("assignment to "+target.Kind), true)
}

// assignVar assigns a variable ($env:NAME sets the process environment).
func (r *Runtime) assignVar(target *Node, v any) error {
	name := varName(target.Text)
	switch strings.ToLower(name) {
	case "null":
		return nil
	case "true", "false", "?", "_":
		if strings.EqualFold(name, "_") {
			break
		}
		return r.terminate(target, scriptError("Cannot overwrite variable "+name+" because it is read-only or constant.",
			"WriteError", name, "", "SessionStateUnauthorizedAccessException", "VariableNotWritable", "System.Management.Automation.SessionStateUnauthorizedAccessException"), false)
	}
	if strings.HasPrefix(strings.ToLower(name), "env:") {
		r.host.Setenv(name[4:], toString(v))
		return nil
	}
	if strings.EqualFold(name, "ErrorActionPreference") {
		if _, ok := enumName(preferenceNames, toString(v)); !ok {
			return r.terminate(target, errPreference(toString(v)), false)
		}
	}
	r.assign(name, v)
	return nil
}

// multiAssign is `$a, $b = value` (about_Assignment_Operators, "Assigning
// multiple variables"): the value is enumerated, each variable but the last
// takes one element, the last takes the rest (an array when more than one
// remains, $null when none does).
func (r *Runtime) multiAssign(target *Node, op string, v any) error {
	vars := target.named()
	if op != "=" {
		return r.terminate(target, errUnsupported("the operator "+op+" on a list of variables"), true)
	}
	for _, k := range vars {
		if k.Kind != "variable" || strings.Contains(varName(k.Text), ":") {
			return r.terminate(k, errUnsupported("assignment to a list holding "+k.Kind), true)
		}
	}
	vals := items(v)
	for i, k := range vars {
		var val any
		switch {
		case i == len(vars)-1 && len(vals) > i+1:
			val = append([]any{}, vals[i:]...)
		case i < len(vals):
			val = vals[i]
		}
		if err := r.assignVar(k, val); err != nil {
			return err
		}
	}
	return nil
}

func errIndexRange() *ErrorRecord {
	return scriptError("Index was outside the bounds of the array.", "OperationStopped", "", "", "IndexOutOfRangeException", "System.IndexOutOfRangeException", "System.IndexOutOfRangeException")
}

// toByte converts a value to System.Byte.
func toByte(v any) (byte, *ErrorRecord) {
	const tooBig = "Value was either too large or too small for an unsigned byte."
	switch v.(type) {
	case nil, int, float64, bool, string:
	default:
		return 0, errConvert(v, "System.Byte", "", "ConvertToFinalInvalidCastException")
	}
	n, ok := toNumber(v)
	if !ok {
		return 0, errConvert(v, "System.Byte", "Input string was not in a correct format.", "InvalidCastFromStringToInteger")
	}
	f := toFloat(n)
	if _, isF := n.(float64); isF {
		f = math.RoundToEven(f)
	}
	if f < 0 || f > 255 {
		return 0, errConvert(v, "System.Byte", tooBig, "InvalidCastIConvertible")
	}
	return byte(f), nil
}

var preferenceNames = []string{"SilentlyContinue", "Stop", "Continue", "Inquire", "Ignore", "Suspend"}

func errPreference(v string) *ErrorRecord {
	return scriptError("Cannot convert value \""+v+"\" to type \"System.Management.Automation.ActionPreference\". Error: \"Unable to match the identifier name "+v+" to a valid enumerator name. Specify one of the following enumerator names and try again:\r\nSilentlyContinue, Stop, Continue, Inquire, Ignore, Suspend\"",
		"MetadataError", "", "", "ArgumentTransformationMetadataException", "RuntimeException", "System.Management.Automation.ArgumentTransformationMetadataException")
}
