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
// System.Management.Automation/engine/parser/Position.cs): a line longer than
// 80 characters is shown in an 80-character window, from its start unless
// the error lies at column 81 or later (then from 15 characters before it,
// after "... "), with " ..." when the line goes on. An extent wider than 80
// characters shows the line's start, wherever the error lies (5.1's own
// quirk). Tabs count as four spaces.
func positionEcho(src string, col, width int) (shown, marks string) {
	pos, mark, start := col-1, width, 0
	var b strings.Builder
	if len(src) > 80 {
		if mark > 80 {
			pos, mark = 0, 80
		} else if pos >= 80 {
			start, pos = pos-15, 15
		}
		if pos+mark >= 80 {
			mark = 80 - pos
		}
		if start != 0 {
			b.WriteString("... ")
			pos += 4
		}
	}
	tabs := 0
	end := min(len(src), start+80)
	for i := start; i < end; i++ {
		if src[i] != '\t' {
			b.WriteByte(src[i])
			continue
		}
		b.WriteString("    ")
		if i <= pos {
			tabs++
		} else {
			mark += 3
		}
	}
	if end < len(src) {
		b.WriteString(" ...")
	}
	if mark < 1 {
		mark = 1
	}
	return b.String(), strings.Repeat(" ", max(pos+3*tabs, 0)) + strings.Repeat("~", mark)
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

// throwRecord is the record of `throw <value>`.
func throwRecord(v any) *ErrorRecord {
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
