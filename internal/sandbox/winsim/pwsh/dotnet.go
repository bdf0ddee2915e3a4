package pwsh

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// dotnetType is a .NET type the engine models: its full name, the names a
// script may write it with, and its static members.
type dotnetType struct {
	Full    string
	Names   []string
	Static  map[string]func(r *Runtime, args []any) (any, error) // methods, lower-case
	Props   map[string]func(r *Runtime) (any, error)             // static properties
	Methods []string                                             // every real static method name (lower-case), modelled or not
	Source  string
}

var types = map[string]*dotnetType{}

func registerType(t *dotnetType) {
	for _, n := range append([]string{t.Full}, t.Names...) {
		types[strings.ToLower(n)] = t
	}
}

// lookupType finds a type by the name in a type literal; "System." is
// optional, as in PowerShell.
func lookupType(name string) (*dotnetType, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if t, ok := types[n]; ok {
		return t, true
	}
	t, ok := types["system."+n]
	return t, ok
}

// Types lists the modelled .NET types, for the package documentation.
func Types() []*dotnetType {
	seen := map[*dotnetType]bool{}
	var out []*dotnetType
	for _, t := range types {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func dotnetErr(typ, msg string) error { return &DotNetError{Type: typ, Message: msg} }

// argString converts a method argument to string (PowerShell converts for
// the parameter's type).
func argString(a any) string { return toString(a) }

func init() {
	// Type names usable in casts and -is.
	for _, t := range []struct{ full, short string }{
		{"System.String", "string"}, {"System.Int32", "int"}, {"System.Int64", "long"}, {"System.Boolean", "bool"},
		{"System.Double", "double"}, {"System.Object", "object"}, {"System.Object[]", "object[]"}, {"System.Array", "array"},
		{"System.Collections.Hashtable", "hashtable"}, {"System.Management.Automation.ScriptBlock", "scriptblock"},
		{"System.Void", "void"}, {"System.Byte[]", "byte[]"}, {"System.Management.Automation.PSObject", "psobject"},
		{"System.Management.Automation.PSCustomObject", "pscustomobject"}, {"System.Collections.Specialized.OrderedDictionary", "ordered"},
		{"System.String[]", "string[]"}, {"System.Byte", "byte"}, {"System.Exception", ""}, {"System.Management.Automation.RuntimeException", ""},
		{"System.Management.Automation.ErrorRecord", ""},
	} {
		names := []string{}
		if t.short != "" {
			names = append(names, t.short)
		}
		registerType(&dotnetType{Full: t.full, Names: names, Source: "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_type_accelerators"})
	}
	registerType(&dotnetType{Full: "System.Convert", Source: "https://learn.microsoft.com/en-us/dotnet/api/system.convert",
		Methods: []string{"changetype", "frombase64chararray", "frombase64string", "fromhexstring", "tobase64chararray", "tobase64string", "toboolean", "tobyte", "tochar", "todatetime", "todecimal", "todouble", "tohexstring", "toint16", "toint32", "toint64", "tosbyte", "tosingle", "tostring", "touint16", "touint32", "touint64", "isdbnull", "gettypecode"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"frombase64string": func(_ *Runtime, a []any) (any, error) {
				if len(a) != 1 {
					return nil, errOverload("FromBase64String", len(a))
				}
				if a[0] == nil {
					return nil, dotnetErr("System.ArgumentNullException", "Value cannot be null.\r\nParameter name: s")
				}
				s := strings.Map(func(c rune) rune {
					if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
						return -1
					}
					return c
				}, argString(a[0]))
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, dotnetErr("System.FormatException", "The input is not a valid Base-64 string as it contains a non-base 64 character, more than two padding characters, or an illegal character among the padding characters. ")
				}
				return b, nil
			},
			"tobase64string": func(_ *Runtime, a []any) (any, error) {
				if len(a) != 1 {
					return nil, errOverload("ToBase64String", len(a))
				}
				b, ok := a[0].([]byte)
				if !ok {
					return nil, dotnetErr("System.Management.Automation.PSInvalidCastException", fmt.Sprintf("Cannot convert argument \"inArray\", with value: \"%s\", for \"ToBase64String\" to type \"System.Byte[]\"", toString(a[0])))
				}
				return base64.StdEncoding.EncodeToString(b), nil
			},
		}})
	registerType(&dotnetType{Full: "System.Text.Encoding", Names: []string{"Text.Encoding"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding",
		Props: map[string]func(*Runtime) (any, error){
			"utf8":             func(*Runtime) (any, error) { return utf8Encoding(), nil },
			"ascii":            func(*Runtime) (any, error) { return asciiEncoding(), nil },
			"unicode":          func(*Runtime) (any, error) { return unicodeEncoding(), nil },
			"bigendianunicode": func(*Runtime) (any, error) { return encodingObject(EncBigEndianUnicode), nil },
			"utf32":            func(*Runtime) (any, error) { return encodingObject(EncUTF32), nil },
			"default":          func(*Runtime) (any, error) { return encodingObject(EncDefault), nil },
		}})
	// new UTF8Encoding() / new UTF8Encoding($false): no byte order mark;
	// new UTF8Encoding($true): one.
	// https://learn.microsoft.com/en-us/dotnet/api/system.text.utf8encoding.-ctor
	registerType(&dotnetType{Full: "System.Text.UTF8Encoding", Names: []string{"Text.UTF8Encoding"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.text.utf8encoding",
		Methods: []string{"new"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"new": func(_ *Runtime, a []any) (any, error) {
				switch len(a) {
				case 0:
					return encodingObject(EncUTF8NoBOM), nil
				case 1:
					if toBool(a[0]) {
						return encodingObject(EncUTF8), nil
					}
					return encodingObject(EncUTF8NoBOM), nil
				}
				// UTF8Encoding(bool, bool) (throwOnInvalidBytes) is real, not modelled.
				return nil, &Terminating{Rec: errUnsupported(fmt.Sprintf("new UTF8Encoding with %d arguments", len(a))), Script: true}
			},
		}})
	registerType(&dotnetType{Full: "System.Math", Source: "https://learn.microsoft.com/en-us/dotnet/api/system.math",
		Methods: []string{"abs", "ceiling", "floor", "max", "min", "pow", "round", "sqrt", "truncate", "log", "exp", "sign"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"max": func(_ *Runtime, a []any) (any, error) { return minmax(a, 1) },
			"min": func(_ *Runtime, a []any) (any, error) { return minmax(a, -1) },
		}})
}

func minmax(a []any, sign int) (any, error) {
	if len(a) != 2 {
		return nil, errOverload("Max", len(a))
	}
	x, ok1 := toNumber(a[0])
	y, ok2 := toNumber(a[1])
	if !ok1 || !ok2 {
		return nil, dotnetErr("System.Management.Automation.MethodException", "Cannot convert the arguments to numbers.")
	}
	if (toFloat(x) >= toFloat(y)) == (sign > 0) {
		return x, nil
	}
	return y, nil
}

func errOverload(method string, n int) error {
	return &overloadError{method: method, n: n}
}

// overloadError is PowerShell's MethodCountCouldNotFindBest.
type overloadError struct {
	method string
	n      int
}

func (e *overloadError) Error() string {
	return fmt.Sprintf("Cannot find an overload for \"%s\" and the argument count: \"%d\".", e.method, e.n)
}

// cast runs [type]value.
func (r *Runtime) cast(n *Node) (any, error) {
	tl := n.child("type_literal")
	operand := n.Kids[len(n.Kids)-1]
	name := typeLiteralName(tl)
	lower := strings.ToLower(name)
	// [ordered] and [pscustomobject] only apply to a hashtable literal.
	if lower == "ordered" || lower == "pscustomobject" {
		v, err := r.eval(operand)
		if err != nil {
			return nil, err
		}
		h, ok := v.(*Hashtable)
		if !ok {
			if lower == "ordered" {
				return nil, r.terminate(n, scriptError("The ordered attribute can be specified only on a hash literal node.",
					"ParserError", "", "", "ParentContainsErrorRecordException", "OrderedAttributeOnlyOnHashLiteralNode", "System.Management.Automation.ParseException"), true)
			}
			return v, nil
		}
		if lower == "ordered" {
			h.Ordered = true
			return h, nil
		}
		o := NewObject("System.Management.Automation.PSCustomObject")
		for _, k := range h.Keys() {
			val, _ := h.Get(k)
			o.Set(k, val)
		}
		return o, nil
	}
	t, ok := lookupType(name)
	if !ok {
		return nil, r.terminate(tl, errTypeNotFound(name), false)
	}
	v, err := r.eval(operand)
	if err != nil {
		return nil, err
	}
	out, rec := convertTo(v, t.Full)
	if rec != nil {
		return nil, r.terminate(n, rec, false)
	}
	return out, nil
}

// convertTo converts a value to a modelled type, with PowerShell's errors.
func convertTo(v any, full string) (any, *ErrorRecord) {
	switch full {
	case "System.String":
		if v == nil {
			return "", nil
		}
		return toString(v), nil
	case "System.Boolean":
		return toBool(v), nil
	case "System.Int32", "System.Int64", "System.Double":
		return convertNumber(v, full)
	case "System.Byte":
		if _, rec := convertNumber(v, full); rec != nil {
			return nil, rec
		}
		// In range: a System.Byte value, which the engine does not model.
		return nil, errUnsupported("a value of type [System.Byte]")
	case "System.Object", "System.Management.Automation.PSObject":
		return v, nil
	case "System.Object[]", "System.Array":
		if arr, ok := v.([]any); ok {
			return arr, nil
		}
		return items(v), nil
	case "System.String[]":
		var out []any
		for _, e := range items(v) {
			out = append(out, toString(e))
		}
		return out, nil
	case "System.Void":
		return nil, nil
	case "System.Collections.Hashtable":
		if h, ok := v.(*Hashtable); ok {
			return h, nil
		}
		return nil, errConvert(v, full, "", "ConvertToFinalInvalidCastException")
	case "System.Management.Automation.ScriptBlock":
		if sb, ok := v.(*ScriptBlock); ok {
			return sb, nil
		}
		return nil, errConvert(v, full, "", "ConvertToFinalInvalidCastException")
	case "System.Byte[]":
		if b, ok := v.([]byte); ok {
			return b, nil
		}
		out := []byte{}
		for _, e := range items(v) {
			n, ok := toNumber(e)
			i, isInt := n.(int)
			if !ok || !isInt || i < 0 || i > 255 {
				return nil, errConvert(e, "System.Byte", "Value was either too large or too small for an unsigned byte.", "InvalidCastIConvertible")
			}
			out = append(out, byte(i))
		}
		return out, nil
	}
	return nil, errUnsupported("a cast to [" + full + "]")
}

// isType is -is.
func isType(v any, name string) bool {
	t, ok := lookupType(name)
	if !ok {
		return false
	}
	switch t.Full {
	case "System.Object", "System.Management.Automation.PSObject":
		return v != nil
	case "System.Array":
		_, ok := v.([]any)
		return ok
	}
	return strings.EqualFold(typeName(v), t.Full)
}

// parseIntArg reads an int method argument.
func parseIntArg(a any) (int, bool) {
	n, ok := toNumber(a)
	if !ok {
		return 0, false
	}
	if i, isInt := n.(int); isInt {
		return i, true
	}
	f := toFloat(n)
	return int(f), f == float64(int(f))
}

var _ = strconv.Itoa

// TypeDoc describes a modelled .NET type for the package documentation: its
// name, the static members modelled, and its reference page.
func TypeDoc() []string {
	var out []string
	for _, t := range Types() {
		var members []string
		for m := range t.Static {
			members = append(members, m+"()")
		}
		for p := range t.Props {
			members = append(members, p)
		}
		sort.Strings(members)
		line := "[" + t.Full + "]"
		if len(members) > 0 {
			line += " ::" + strings.Join(members, ", ::")
		}
		out = append(out, line+"  "+t.Source)
	}
	sort.Strings(out)
	return out
}
