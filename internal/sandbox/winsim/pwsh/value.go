package pwsh

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Values are Go values:
//
//	nil              $null
//	string, bool     System.String, System.Boolean
//	int, float64     System.Int32 (and Int64 kept as int), System.Double
//	[]any            System.Object[]
//	[]byte           System.Byte[] (from [Convert]::FromBase64String)
//	*Hashtable       System.Collections.Hashtable / OrderedDictionary
//	*Object          a .NET or PSCustomObject: named properties and methods
//	*ScriptBlock     System.Management.Automation.ScriptBlock
//	*TypeValue       a type literal used as a value ([string])
//	*ErrorRecord     System.Management.Automation.ErrorRecord ($_ in catch)
//	*Enumerator      $input: read lazily, once

// Hashtable keeps its keys case-insensitively, in insertion order (which
// PowerShell only guarantees for [ordered]; a plain @{} prints in hash order,
// which scripts must not rely on).
type Hashtable struct {
	Ordered bool
	keys    []string
	vals    map[string]any
}

func NewHashtable() *Hashtable { return &Hashtable{vals: map[string]any{}} }

func (h *Hashtable) Set(k string, v any) {
	lk := strings.ToLower(k)
	if _, ok := h.vals[lk]; !ok {
		h.keys = append(h.keys, k)
	}
	h.vals[lk] = v
}

func (h *Hashtable) Get(k string) (any, bool) {
	v, ok := h.vals[strings.ToLower(k)]
	return v, ok
}

func (h *Hashtable) Keys() []string { return append([]string(nil), h.keys...) }

// Object is a .NET object or PSCustomObject: its type name (for messages and
// -is), properties in order, methods, and its ToString text.
type Object struct {
	TypeName string
	props    []string
	vals     map[string]any
	Methods  map[string]Method // lower-case name
	Str      string            // ToString(); "" renders "@{Prop=...}" for PSCustomObject
	enc      *TextEncoding     // a System.Text.Encoding's codec (textenc.go)
	// Native is the host's own state behind an object (a security
	// descriptor behind Get-Acl's object), for the cmdlets that take it back.
	Native any
}

// Method is a .NET method of an Object or type; it returns a .NET exception
// text (the part after "Exception calling ...") as a *DotNetError.
type Method func(args []any) (any, error)

func NewObject(typeName string) *Object {
	return &Object{TypeName: typeName, vals: map[string]any{}, Methods: map[string]Method{}}
}

func (o *Object) Set(k string, v any) *Object {
	lk := strings.ToLower(k)
	if _, ok := o.vals[lk]; !ok {
		o.props = append(o.props, k)
	}
	o.vals[lk] = v
	return o
}

func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[strings.ToLower(k)]
	return v, ok
}

func (o *Object) Props() []string { return append([]string(nil), o.props...) }

// ScriptBlock is { ... }.
type ScriptBlock struct {
	Body *Node // script_block node (may be nil for {})
	Text string
}

// TypeValue is a type literal evaluated as a value.
type TypeValue struct{ Name string }

// Enumerator is a lazily read sequence ($input).
type Enumerator struct {
	Next func() (any, bool)
}

// typeName is the .NET name PowerShell reports for a value.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "System.String"
	case bool:
		return "System.Boolean"
	case int:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return "System.Int64" // a literal or result too large for Int32
		}
		return "System.Int32"
	case float64:
		return "System.Double"
	case []any:
		return "System.Object[]"
	case []byte:
		return "System.Byte[]"
	case *Hashtable:
		if v.Ordered {
			return "System.Collections.Specialized.OrderedDictionary"
		}
		return "System.Collections.Hashtable"
	case *Object:
		return v.TypeName
	case *ScriptBlock:
		return "System.Management.Automation.ScriptBlock"
	case *TypeValue:
		return "System.RuntimeType"
	case *ErrorRecord:
		return "System.Management.Automation.ErrorRecord"
	case *Enumerator:
		return "System.Collections.ArrayList+ArrayListEnumeratorSimple"
	}
	return fmt.Sprintf("%T", v)
}

// toString converts as PowerShell does for string contexts: arrays join with
// spaces ($OFS), $null is "", booleans are True/False.
func toString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'G', 15, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = toString(e)
		}
		return strings.Join(parts, " ")
	case []byte:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = strconv.Itoa(int(e))
		}
		return strings.Join(parts, " ")
	case *Hashtable:
		return typeName(v)
	case *Object:
		if v.Str != "" || v.TypeName != "System.Management.Automation.PSCustomObject" {
			if v.Str == "" {
				return v.TypeName
			}
			return v.Str
		}
		parts := make([]string, len(v.props))
		for i, p := range v.props {
			parts[i] = p + "=" + toString(v.vals[strings.ToLower(p)])
		}
		return "@{" + strings.Join(parts, "; ") + "}"
	case *ScriptBlock:
		return v.Text
	case *TypeValue:
		return v.Name
	case *ErrorRecord:
		return v.Message
	}
	return fmt.Sprint(v)
}

// toBool is PowerShell's truth: $null, "", 0, $false, empty arrays are false;
// a one-element array is its element's truth; other arrays are true.
func toBool(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case int:
		return v != 0
	case float64:
		return v != 0
	case []any:
		switch len(v) {
		case 0:
			return false
		case 1:
			return toBool(v[0])
		}
		return true
	case []byte:
		return len(v) > 0
	}
	return true
}

// items returns what a pipeline or foreach enumerates: arrays element by
// element, $null as nothing, anything else as itself.
func items(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	case []byte:
		out := make([]any, len(v))
		for i, b := range v {
			out[i] = int(b)
		}
		return out
	}
	return []any{v}
}

// collapse turns pipeline output into a value: nothing is $null, one object
// is itself, more are an array.
func collapse(out []any) any {
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

// toNumber converts for arithmetic; ok is false when the value is not a number
// and cannot be read as one.
func toNumber(v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		return 0, true
	case int, float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return 0, true
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(n), true
		}
		if strings.HasPrefix(strings.ToLower(s), "0x") {
			if n, err := strconv.ParseInt(s[2:], 16, 64); err == nil {
				return int(n), true
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
	}
	return nil, false
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// Text converts a value to string as PowerShell does in string contexts.
func Text(v any) string { return toString(v) }
