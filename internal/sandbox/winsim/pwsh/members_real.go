package pwsh

// Real members the engine does not model. PowerShell answers $null for a
// property an object does not have and MethodNotFound for a method it does
// not have; a member that exists on Windows but is not modelled here must
// not get either answer: it is refused (SimulatorNotModelled). A .NET object
// (*Object other than a PSCustomObject) models only some of its type's
// members, so any other name on it is refused.
//
// The member lists are those of the .NET Framework 4.x reference
// (https://learn.microsoft.com/en-us/dotnet/api/system.collections.hashtable,
// .../system.array, .../system.int32, .../system.management.automation.errorrecord,
// .../system.management.automation.scriptblock) and PowerShell 4's intrinsic
// ForEach and Where methods (about_Arrays, "Methods of arrays").

const psCustomObject = "System.Management.Automation.PSCustomObject"

var (
	hashtableProps   = []string{"isreadonly", "isfixedsize", "issynchronized", "syncroot", "equalitycomparer", "comparer", "hcp"}
	hashtableMethods = []string{"add", "clear", "clone", "contains", "containskey", "containsvalue", "copyto", "getenumerator", "getobjectdata", "ondeserialization", "remove", "equals", "gethashcode", "tostring"}
	arrayProps       = []string{"longlength", "rank", "syncroot", "isreadonly", "isfixedsize", "issynchronized"}
	arrayMethods     = []string{"clone", "copyto", "getenumerator", "getlength", "getlonglength", "getlowerbound", "getupperbound", "getvalue", "initialize", "setvalue", "equals", "gethashcode", "tostring", "get", "set", "address"}
	scalarMethods    = []string{"compareto", "equals", "gethashcode", "gettypecode", "tostring"}
	errorRecordProps = []string{"errordetails", "invocationinfo", "scriptstacktrace", "pipelineiterationinfo", "psmessagedetails"}
	errorRecordMeths = []string{"tostring", "getobjectdata", "equals", "gethashcode"}
	scriptBlockMeths = []string{"invoke", "invokereturnasis", "getnewclosure", "getpowershell", "getsteppablepipeline", "checkrestrictedlanguage", "tostring", "equals", "gethashcode"}
)

// unmodelledProperty refuses a real property the engine does not model.
func unmodelledProperty(obj any, lower, name string) *ErrorRecord {
	refuse := false
	switch o := obj.(type) {
	case *Object:
		if _, ok := o.Get(name); !ok {
			refuse = o.TypeName != psCustomObject
		}
	case *Hashtable:
		if _, ok := o.Get(name); !ok {
			refuse = contains(hashtableProps, lower)
		}
	case []any, []byte:
		refuse = contains(arrayProps, lower)
	case *ErrorRecord:
		refuse = contains(errorRecordProps, lower)
	case *TypeValue:
		refuse = lower != "name" && lower != "fullname"
	case *ScriptBlock:
		refuse = lower != "count" && lower != "length"
	}
	if !refuse {
		return nil
	}
	return errUnsupported("the property [" + typeName(obj) + "]." + name)
}

// unmodelledMethod reports whether a method the engine did not find is a
// real one.
func unmodelledMethod(obj any, lower string) bool {
	if lower == "foreach" || lower == "where" {
		return true // PowerShell 4's intrinsic methods, on every object
	}
	switch o := obj.(type) {
	case *Object:
		return o.TypeName != psCustomObject || lower == "equals" || lower == "gethashcode"
	case int, float64, bool:
		return contains(scalarMethods, lower)
	case *Hashtable:
		return contains(hashtableMethods, lower)
	case []any, []byte:
		return contains(arrayMethods, lower)
	case *ErrorRecord:
		return contains(errorRecordMeths, lower)
	case *ScriptBlock:
		return contains(scriptBlockMeths, lower)
	case *TypeValue:
		return true
	}
	return false
}

// isCount is Count or Length, which PowerShell 3+ gives every scalar.
func isCount(lower string) bool {
	return lower == "count" || lower == "length"
}
