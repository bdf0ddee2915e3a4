package pwsh

import (
	"fmt"
	"strings"
)

// ErrorRecord is PowerShell's error record, with the fields powershell.exe
// prints:
//
//	<Command> : <Message>
//	At line:<L> char:<C>
//	+ <source line>
//	+ ~~~~
//	    + CategoryInfo          : <Category>: (<Target>:<TargetType>) [<Activity>], <Reason>
//	    + FullyQualifiedErrorId : <ErrorID>[,<CommandType>]
type ErrorRecord struct {
	Message    string
	Command    string // the failing command's name; "" for script errors (throw, .NET)
	Activity   string // CategoryInfo's [activity] when it is not Command
	Category   string // ObjectNotFound, InvalidArgument, OperationStopped, ...
	Target     string
	TargetType string // String, ...
	Reason     string // the exception's short type name: ItemNotFoundException
	ErrorID    string // FullyQualifiedErrorId (with ",<cmdlet class>" where Windows adds it)
	Exception  string // full exception type name, for catch [Type] and $_.Exception.GetType()
	Line, Col  int
	Width      int    // how many ~ under the position
	Source     string // the source line
	File       string // the script file (-File), "" for -Command

	// Thrown is the object of `throw <object>` ($_.TargetObject).
	Thrown any
}

// Format renders the record as powershell.exe writes it to stderr.
func (e *ErrorRecord) Format() string {
	var b strings.Builder
	if e.Command != "" {
		fmt.Fprintf(&b, "%s : %s\r\n", e.Command, e.Message)
	} else {
		fmt.Fprintf(&b, "%s\r\n", e.Message)
	}
	if e.Line > 0 {
		if e.File != "" {
			fmt.Fprintf(&b, "At %s:%d char:%d\r\n", e.File, e.Line, e.Col)
		} else {
			fmt.Fprintf(&b, "At line:%d char:%d\r\n", e.Line, e.Col)
		}
		shown, marks := positionEcho(strings.TrimRight(e.Source, " \t\r\n"), e.Col, e.Width)
		fmt.Fprintf(&b, "+ %s\r\n+ %s\r\n", shown, marks)
	}
	activity := e.Command
	if e.Activity != "" {
		activity = e.Activity
	}
	cat := e.Category
	if cat == "" {
		cat = "NotSpecified"
	}
	reason := e.Reason
	if reason == "" {
		reason = "RuntimeException"
	}
	id := e.ErrorID
	if id == "" {
		id = e.Message
	}
	fmt.Fprintf(&b, "    + CategoryInfo          : %s: (%s:%s) [%s], %s\r\n", cat, e.Target, e.TargetType, activity, reason)
	fmt.Fprintf(&b, "    + FullyQualifiedErrorId : %s\r\n \r\n", id)
	return b.String()
}

// positionEcho is the source line of a position message and the marks under
// it, as Windows PowerShell 5.1 writes them (PositionUtilities.VerboseMessage,
// System.Management.Automation/engine/parser/Position.cs; PowerShell 7 keeps
// the algorithm and writes U+2026 where 5.1 writes "..."): tabs become four
// spaces; a line longer than 69 characters shows in a 69-character window
// with up to 12 characters before the error (more when the error and 8
// characters after it leave room), as much of the error as fits and what
// then fits after it, with "... " before and " ..." after where the line
// was cut. An extent past the line's end is cut at it.
func positionEcho(src string, col, width int) (shown, marks string) {
	const maxLine = 69
	spaces := min(max(col-1, 0), len(src))
	errLen := min(max(width, 0), len(src)-spaces)
	if strings.Contains(src, "\t") {
		before := strings.ReplaceAll(src[:spaces], "\t", "    ")
		inErr := strings.ReplaceAll(src[spaces:spaces+errLen], "\t", "    ")
		src = before + inErr + strings.ReplaceAll(src[spaces+errLen:], "\t", "    ")
		spaces, errLen = len(before), len(inErr)
	}
	prefixDots, suffixDots := false, false
	if len(src) > maxLine {
		totalPrefix, totalSuffix := spaces, len(src)-errLen-spaces
		prefix, suffix := min(totalPrefix, 12), min(totalSuffix, 8)
		if candidate := prefix + errLen + suffix; candidate >= maxLine {
			// The suffix goes with the cut; the marks may have to as well.
			if prefix+errLen >= maxLine {
				errLen = maxLine - prefix
			}
			suffixDots = true
		} else {
			// Room left: more before the error first, then after it.
			if more := totalPrefix - prefix; more > 0 {
				prefix += min(more, maxLine-candidate)
				candidate = prefix + errLen + suffix
			}
			if candidate < maxLine && totalSuffix > 0 {
				suffix += min(totalSuffix, maxLine-candidate)
			}
			suffixDots = suffix < totalSuffix
		}
		prefixDots = prefix < totalPrefix
		start := max(spaces-prefix, 0)
		src = src[start : start+maxLine]
		spaces = min(spaces, prefix)
		errLen = min(errLen, maxLine-spaces)
	}
	if prefixDots {
		src = "... " + src
		spaces += 4
	}
	if suffixDots {
		src += " ..."
	}
	return src, strings.Repeat(" ", spaces) + strings.Repeat("~", max(errLen, 1))
}

// CategoryInfo is the CategoryInfo text ($_.CategoryInfo).
func (e *ErrorRecord) CategoryInfo() string {
	return fmt.Sprintf("%s: (%s:%s) [%s], %s", e.Category, e.Target, e.TargetType, e.Command, e.Reason)
}

// Terminating carries an error record out of the statements it stops. Script
// is true for errors that end the script unless caught (throw, errors under
// Stop); statement-terminating errors (unknown command, parameter binding,
// .NET exceptions) end only their statement under Continue.
type Terminating struct {
	Rec    *ErrorRecord
	Script bool
}

func (t *Terminating) Error() string { return t.Rec.Message }

// exitSignal is `exit N`.
type exitSignal struct{ code int }

func (e *exitSignal) Error() string { return fmt.Sprintf("exit %d", e.code) }

// flowSignal is break, continue or return.
type flowSignal struct{ kind string }

func (f *flowSignal) Error() string { return f.kind }

// DotNetError is an exception a .NET member raises; PowerShell wraps it as
// `Exception calling "<Method>" with "<n>" argument(s): "<Message>"`.
type DotNetError struct {
	Type    string // System.FormatException
	Message string
}

func (e *DotNetError) Error() string { return e.Message }

// commandError makes the record of a failing cmdlet. typ is the cmdlet's
// class for the FullyQualifiedErrorId ("Microsoft.PowerShell.Commands.GetServiceCommand").
func commandError(cmd, typ, msg, category, target, targetType, reason, id, exception string) *ErrorRecord {
	fq := id
	if typ != "" {
		fq = id + "," + typ
	}
	return &ErrorRecord{Message: msg, Command: cmd, Category: category, Target: target, TargetType: targetType,
		Reason: reason, ErrorID: fq, Exception: exception}
}

// scriptError makes the record of a language-level error.
func scriptError(msg, category, target, targetType, reason, id, exception string) *ErrorRecord {
	return &ErrorRecord{Message: msg, Category: category, Target: target, TargetType: targetType,
		Reason: reason, ErrorID: id, Exception: exception}
}

// The texts below are Windows PowerShell 5.1's (System.Management.Automation
// resources: DiscoveryExceptions, ParameterBinderStrings, ParserStrings,
// ExtendedTypeSystem), as powershell.exe prints them.

func errCommandNotFound(name string) *ErrorRecord {
	return scriptError(fmt.Sprintf("The term '%s' is not recognized as the name of a cmdlet, function, script file, or operable program. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.", name),
		"ObjectNotFound", name, "String", "CommandNotFoundException", "CommandNotFoundException",
		"System.Management.Automation.CommandNotFoundException")
}

func errMethodNotFound(typ, method string) *ErrorRecord {
	return scriptError(fmt.Sprintf("Method invocation failed because [%s] does not contain a method named '%s'.", typ, method),
		"InvalidOperation", "", "", "RuntimeException", "MethodNotFound", "System.Management.Automation.RuntimeException")
}

func errNullMethod() *ErrorRecord {
	return scriptError("You cannot call a method on a null-valued expression.",
		"InvalidOperation", "", "", "RuntimeException", "InvokeMethodOnNull", "System.Management.Automation.RuntimeException")
}

func errTypeNotFound(name string) *ErrorRecord {
	return scriptError(fmt.Sprintf("Unable to find type [%s].", name),
		"InvalidOperation", name, "TypeName", "RuntimeException", "TypeNotFound", "System.Management.Automation.RuntimeException")
}

func errConvert(v any, to, detail, id string) *ErrorRecord {
	msg := fmt.Sprintf("Cannot convert value \"%s\" to type \"%s\".", toString(v), to)
	if detail != "" {
		msg += " Error: \"" + detail + "\""
	}
	return scriptError(msg, "InvalidArgument", "", "", "RuntimeException", id, "System.Management.Automation.RuntimeException")
}

func errMethodException(method string, nargs int, ex *DotNetError) *ErrorRecord {
	id := ex.Type[strings.LastIndexByte(ex.Type, '.')+1:]
	return scriptError(fmt.Sprintf("Exception calling \"%s\" with \"%d\" argument(s): \"%s\"", method, nargs, ex.Message),
		"NotSpecified", "", "", "MethodInvocationException", id, ex.Type)
}

// errUnsupported is the simulator's own refusal: a construct the grammar
// accepts but the engine does not model. It fails like an error of the
// language, with an id that says so.
func errUnsupported(what string) *ErrorRecord {
	return scriptError("The simulated host does not model "+what+".",
		"NotImplemented", "", "", "NotSupportedException", "SimulatorNotModelled", "System.NotSupportedException")
}

// NotModelled is the simulator's refusal of a real member or value the
// engine or the host does not model, for a Method or a static member to
// return: it ends the script, as the refusal of a command does.
func NotModelled(what string) error {
	return &Terminating{Rec: errUnsupported(what), Script: true}
}

// ThrowRecord is the record of `throw <value>` (nil: a bare `throw`).
func ThrowRecord(v any) *ErrorRecord {
	if rec, ok := v.(*ErrorRecord); ok {
		return rec
	}
	msg := toString(v)
	if v == nil {
		msg = "ScriptHalted"
	}
	return &ErrorRecord{Message: msg, Category: "OperationStopped", Target: msg, TargetType: "String",
		Reason: "RuntimeException", ErrorID: msg, Exception: "System.Management.Automation.RuntimeException", Thrown: v}
}
