package pwsh

import (
	"errors"
	"strings"
)

// memberAccess is obj.Name and [Type]::Name.
func (r *Runtime) memberAccess(n *Node) (any, error) {
	name := memberName(n)
	if n.Kids[0].Kind == "type_literal" {
		tn := typeLiteralName(n.Kids[0])
		t, ok := lookupType(tn)
		if !ok {
			return nil, r.terminate(n.Kids[0], errTypeNotFound(tn), false)
		}
		if p, ok := t.Props[strings.ToLower(name)]; ok {
			return p(r)
		}
		// PowerShell answers $null for a name the type does not have; the
		// engine cannot tell that from a real property it does not model.
		return nil, r.terminate(n, errUnsupported("the static property ["+t.Full+"]::"+name), true)
	}
	obj, err := r.eval(n.Kids[0])
	if err != nil {
		return nil, err
	}
	v, rec := property(obj, name)
	if rec != nil {
		return nil, r.terminate(n, rec, true)
	}
	return v, nil
}

// property reads a property; a missing one is $null (not strict mode), a
// real one the engine does not model is refused (the record). On an array
// it is the property of each element (member enumeration), unless the array
// itself has it (Count, Length).
func property(obj any, name string) (any, *ErrorRecord) {
	lower := strings.ToLower(name)
	if rec := unmodelledProperty(obj, lower, name); rec != nil {
		return nil, rec
	}
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case string:
		if lower == "length" {
			return len([]rune(o)), nil
		}
		if contains(profileNotes, lower) {
			return nil, errUnsupported("$PROFILE's note property " + name)
		}
		return nil, nil
	case []any:
		if lower == "count" || lower == "length" {
			return len(o), nil
		}
		var out []any
		for _, e := range o {
			v, rec := property(e, name)
			if rec != nil {
				return nil, rec
			}
			if v != nil {
				out = append(out, items(v)...)
			}
		}
		return collapse(out), nil
	case []byte:
		if lower == "count" || lower == "length" {
			return len(o), nil
		}
		return nil, nil
	case *Hashtable:
		return hashProperty(o, name, lower), nil
	case *Object:
		v, ok := o.Get(name)
		if !ok && isCount(lower) {
			return 1, nil // a PSCustomObject is a scalar: Count 1 in PowerShell 3+
		}
		return v, nil
	case *ErrorRecord:
		return errorRecordProperty(o, lower), nil
	case *TypeValue:
		switch lower {
		case "name":
			return o.Name[strings.LastIndexByte(o.Name, '.')+1:], nil
		case "fullname":
			return o.Name, nil
		}
	}
	if lower == "count" || lower == "length" {
		return 1, nil // every scalar has Count 1 in PowerShell 3+
	}
	return nil, nil
}

func hashProperty(o *Hashtable, name, lower string) any {
	if v, ok := o.Get(name); ok {
		return v
	}
	switch lower {
	case "count":
		return len(o.keys)
	case "keys":
		out := []any{}
		for _, k := range o.keys {
			out = append(out, k)
		}
		return out
	case "values":
		out := []any{}
		for _, k := range o.keys {
			v, _ := o.Get(k)
			out = append(out, v)
		}
		return out
	}
	return nil
}

func errorRecordProperty(o *ErrorRecord, lower string) any {
	switch lower {
	case "exception":
		ex := NewObject(o.Exception)
		ex.Str = o.Message
		ex.Set("Message", o.Message)
		return ex
	case "categoryinfo":
		return o.CategoryInfo()
	case "fullyqualifiederrorid":
		return o.ErrorID
	case "targetobject":
		if o.Thrown != nil {
			return o.Thrown
		}
		return o.Target
	}
	return nil
}

// invoke is obj.Method(args) and [Type]::Method(args).
func (r *Runtime) invoke(n *Node) (any, error) {
	name := memberName(n)
	var args []any
	if al := n.child("argument_list"); al != nil {
		if list := al.field("argument_expression_list"); list != nil {
			for _, a := range list.named() {
				v, err := r.eval(a)
				if err != nil {
					return nil, err
				}
				args = append(args, v)
			}
		}
	}
	var v any
	var err error
	if n.Kids[0].Kind == "type_literal" {
		tn := typeLiteralName(n.Kids[0])
		t, ok := lookupType(tn)
		if !ok {
			return nil, r.terminate(n.Kids[0], errTypeNotFound(tn), false)
		}
		fn, ok := t.Static[strings.ToLower(name)]
		if !ok {
			// Methods lists every real static method of the types that
			// have it: a name outside it is misspelt. A type without the
			// list has real methods the engine does not know.
			if t.Methods == nil || contains(t.Methods, strings.ToLower(name)) {
				return nil, r.terminate(n, errUnsupported("["+t.Full+"]::"+name), true)
			}
			return nil, r.terminate(n, errMethodNotFound(t.Full, name), false)
		}
		v, err = fn(r, args)
	} else {
		obj, eerr := r.eval(n.Kids[0])
		if eerr != nil {
			return nil, eerr
		}
		v, err = r.callMethod(n, obj, name, args)
	}
	if err != nil {
		return nil, r.methodError(n, name, len(args), err)
	}
	return v, nil
}

// methodError wraps what a .NET member raised as PowerShell does.
func (r *Runtime) methodError(n *Node, name string, nargs int, err error) error {
	var (
		term     *Terminating
		dotnet   *DotNetError
		overload *overloadError
	)
	switch {
	case errors.As(err, &term):
		return term
	case errors.As(err, &dotnet):
		return r.terminate(n, errMethodException(name, nargs, dotnet), false)
	case errors.As(err, &overload):
		return r.terminate(n, scriptError(overload.Error(), "NotSpecified", "", "", "MethodException", "MethodCountCouldNotFindBest", "System.Management.Automation.MethodException"), false)
	}
	return r.terminate(n, errMethodException(name, nargs, &DotNetError{Type: "System.Exception", Message: err.Error()}), false)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// stringMethods are System.String's methods (all of them, so that a real but
// unmodelled one is refused and a misspelt one is MethodNotFound).
var stringMethods = []string{"clone", "compareto", "contains", "copyto", "endswith", "equals", "getenumerator", "gethashcode", "gettype", "gettypecode", "indexof", "indexofany", "insert", "isnormalized", "lastindexof", "lastindexofany", "normalize", "padleft", "padright", "remove", "replace", "split", "startswith", "substring", "tochararray", "tolower", "tolowerinvariant", "tostring", "toupper", "toupperinvariant", "trim", "trimend", "trimstart"}

// callMethod calls an instance method.
func (r *Runtime) callMethod(n *Node, obj any, name string, args []any) (any, error) {
	lower := strings.ToLower(name)
	if obj == nil {
		return nil, r.terminate(n, errNullMethod(), false)
	}
	if lower == "gettype" && len(args) == 0 {
		full := typeName(obj)
		t := NewObject("System.RuntimeType")
		t.Str = full
		return t.Set("Name", full[strings.LastIndexByte(full, '.')+1:]).Set("FullName", full), nil
	}
	switch o := obj.(type) {
	case string:
		if v, ok, err := stringMethod(o, lower, args); ok {
			return v, err
		}
		if contains(stringMethods, lower) {
			return nil, r.terminate(n, errUnsupported("[System.String]."+name+"()"), true)
		}
	case *Object:
		if m, ok := o.Methods[lower]; ok {
			return m(args)
		}
		if lower == "tostring" && len(args) == 0 {
			return toString(o), nil
		}
	case *Hashtable:
		switch lower {
		case "containskey":
			if err := argCount(name, args, 1); err != nil {
				return nil, err
			}
			_, ok := o.Get(toString(args[0]))
			return ok, nil
		case "add":
			if err := argCount(name, args, 2); err != nil {
				return nil, err
			}
			if _, dup := o.Get(toString(args[0])); dup {
				return nil, dotnetErr("System.ArgumentException", "Item has already been added. Key in dictionary: '"+toString(args[0])+"'  Key being added: '"+toString(args[0])+"'")
			}
			o.Set(toString(args[0]), args[1])
			return nil, nil
		case "remove":
			if err := argCount(name, args, 1); err != nil {
				return nil, err
			}
			k := strings.ToLower(toString(args[0]))
			if _, ok := o.vals[k]; ok {
				delete(o.vals, k)
				for i, key := range o.keys {
					if strings.ToLower(key) == k {
						o.keys = append(o.keys[:i], o.keys[i+1:]...)
						break
					}
				}
			}
			return nil, nil
		}
	case *ScriptBlock:
		if lower == "invoke" {
			out, err := r.invokeBlock(o, nil, args)
			return collapse(out), err
		}
	case int, float64, bool:
		if lower == "tostring" && len(args) == 0 {
			return toString(o), nil
		}
	case []any:
		if lower == "contains" && len(args) == 1 {
			for _, e := range o {
				if equal(e, args[0], false) {
					return true, nil
				}
			}
			return false, nil
		}
	}
	if unmodelledMethod(obj, lower) {
		return nil, r.terminate(n, errUnsupported("the method ["+typeName(obj)+"]."+name+"()"), true)
	}
	return nil, r.terminate(n, errMethodNotFound(typeName(obj), name), false)
}

// stringMethod implements the modelled System.String methods.
func stringMethod(s, name string, a []any) (any, bool, error) {
	str := func(i int) string { return toString(a[i]) }
	switch name {
	case "tolower", "tolowerinvariant":
		return strings.ToLower(s), true, argCount(name, a, 0)
	case "toupper", "toupperinvariant":
		return strings.ToUpper(s), true, argCount(name, a, 0)
	case "tostring":
		return s, true, nil
	case "trim", "trimstart", "trimend":
		cut := " \t\r\n"
		if len(a) > 0 {
			cut = ""
			for i := range a {
				cut += str(i)
			}
		}
		switch name {
		case "trimstart":
			return strings.TrimLeft(s, cut), true, nil
		case "trimend":
			return strings.TrimRight(s, cut), true, nil
		}
		return strings.Trim(s, cut), true, nil
	case "contains", "startswith", "endswith", "indexof", "lastindexof":
		if err := argCount(name, a, 1); err != nil {
			return nil, true, err
		}
		// .NET compares ordinally (case-sensitive) here, unlike PowerShell's operators.
		switch name {
		case "contains":
			return strings.Contains(s, str(0)), true, nil
		case "startswith":
			return strings.HasPrefix(s, str(0)), true, nil
		case "endswith":
			return strings.HasSuffix(s, str(0)), true, nil
		case "indexof":
			return strings.Index(s, str(0)), true, nil
		}
		return strings.LastIndex(s, str(0)), true, nil
	case "replace":
		if err := argCount(name, a, 2); err != nil {
			return nil, true, err
		}
		return strings.ReplaceAll(s, str(0), str(1)), true, nil
	case "split":
		if len(a) == 0 {
			return nil, true, errOverload("Split", 0)
		}
		// String.Split(char[]): any of the characters separates.
		seps := str(0)
		var out []any
		for _, p := range strings.FieldsFunc(s, func(c rune) bool { return strings.ContainsRune(seps, c) }) {
			out = append(out, p)
		}
		if strings.ContainsAny(s, seps) && len(seps) > 0 {
			out = nil
			cur := ""
			for _, c := range s {
				if strings.ContainsRune(seps, c) {
					out = append(out, cur)
					cur = ""
					continue
				}
				cur += string(c)
			}
			out = append(out, cur)
		}
		if out == nil {
			out = []any{s}
		}
		return out, true, nil
	case "substring":
		if err := argCount(name, a, 1, 2); err != nil {
			return nil, true, err
		}
		start, _ := parseIntArg(a[0])
		if start < 0 || start > len(s) {
			return nil, true, dotnetErr("System.ArgumentOutOfRangeException", "startIndex cannot be larger than length of string.\r\nParameter name: startIndex")
		}
		if len(a) == 2 {
			l, _ := parseIntArg(a[1])
			if l < 0 || start+l > len(s) {
				return nil, true, dotnetErr("System.ArgumentOutOfRangeException", "Index and length must refer to a location within the string.\r\nParameter name: length")
			}
			return s[start : start+l], true, nil
		}
		return s[start:], true, nil
	case "equals":
		if err := argCount(name, a, 1); err != nil {
			return nil, true, err
		}
		return s == str(0), true, nil
	case "padleft", "padright":
		if err := argCount(name, a, 1); err != nil {
			return nil, true, err
		}
		w, _ := parseIntArg(a[0])
		if len(s) >= w {
			return s, true, nil
		}
		if name == "padleft" {
			return strings.Repeat(" ", w-len(s)) + s, true, nil
		}
		return s + strings.Repeat(" ", w-len(s)), true, nil
	}
	return nil, false, nil
}

// elementAccess is obj[index]: arrays (negative indexes count from the end;
// out of range is $null), hashtables by key, strings by character.
func (r *Runtime) elementAccess(n *Node) (any, error) {
	named := n.named()
	if len(named) < 2 {
		return nil, r.terminate(n, errUnsupported("this index expression"), true)
	}
	obj, err := r.eval(named[0])
	if err != nil {
		return nil, err
	}
	idx, err := r.eval(named[1])
	if err != nil {
		return nil, err
	}
	one := func(i any) any {
		switch o := obj.(type) {
		case *Hashtable:
			v, _ := o.Get(toString(i))
			return v
		case []any, []byte, string:
			num, ok := toNumber(i)
			if !ok {
				return nil
			}
			k := int(toFloat(num))
			list := items(obj)
			if s, isStr := o.(string); isStr {
				list = nil
				for _, c := range s {
					list = append(list, string(c))
				}
			}
			if k < 0 {
				k += len(list)
			}
			if k < 0 || k >= len(list) {
				return nil
			}
			return list[k]
		case nil:
			return nil
		}
		num, ok := toNumber(i)
		if ok && int(toFloat(num)) == 0 {
			return obj // a scalar indexes as a one-element array
		}
		return nil
	}
	if obj == nil {
		return nil, r.terminate(n, scriptError("Cannot index into a null array.", "InvalidOperation", "", "", "RuntimeException", "NullArray", "System.Management.Automation.RuntimeException"), false)
	}
	if list, ok := idx.([]any); ok {
		var out []any
		for _, i := range list {
			out = append(out, one(i))
		}
		return out, nil
	}
	return one(idx), nil
}
