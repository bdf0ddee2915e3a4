package pwsh

import (
	"fmt"
	"strings"
	"time"
)

const docBase = "https://learn.microsoft.com/en-us/powershell/module/"

// Builtins returns the engine's own cmdlets (Microsoft.PowerShell.Utility and
// Core): output, pipelines, errors. The host adds its own.
func Builtins() *Registry { return NewRegistry(BuiltinCmdlets()...) }

// BuiltinCmdlets lists them (for hosts that build their own Registry).
func BuiltinCmdlets() []*Cmdlet {
	return append(builtinCmdlets(), newObjectCmdlet(), outFileCmdlet(), setStrictModeCmdlet())
}

func pipelineItems(c *Call, param string) []any {
	if c.HasInput {
		return c.Input
	}
	return items(c.Value(param))
}

var whereOperators = []string{"EQ", "CEQ", "NE", "CNE", "GT", "CGT", "LT", "CLT", "GE", "CGE", "LE", "CLE", "Like", "CLike", "NotLike", "CNotLike",
	"Match", "CMatch", "NotMatch", "CNotMatch", "Contains", "CContains", "NotContains", "CNotContains", "In", "CIn", "NotIn", "CNotIn", "Is", "IsNot"}

func builtinCmdlets() []*Cmdlet {
	wherePs := []*Param{
		P("FilterScript", "System.Management.Automation.ScriptBlock", 0),
		P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline),
		P("Property", "System.String", -1, Unmodelled),
		P("Value", "System.Object", -1, Unmodelled),
	}
	for _, op := range whereOperators {
		wherePs = append(wherePs, P(op, "SwitchParameter", -1, Unmodelled))
	}
	return []*Cmdlet{
		{Name: "Write-Output", Class: "Microsoft.PowerShell.Commands.WriteOutputCommand", Aliases: []string{"echo", "write"},
			Source:    docBase + "microsoft.powershell.utility/write-output?view=powershell-5.1",
			Behaviour: "writes its objects to the pipeline (arrays enumerated)",
			Params: []*Param{P("InputObject", "System.Management.Automation.PSObject[]", 0, Mandatory, Pipeline, Remaining),
				P("NoEnumerate", "SwitchParameter", -1)},
			Run: func(c *Call) error {
				if c.Switch("NoEnumerate") {
					c.Write(c.Value("InputObject"))
					return nil
				}
				for _, v := range pipelineItems(c, "InputObject") {
					c.Write(v)
				}
				return nil
			}},
		{Name: "Write-Host", Class: "Microsoft.PowerShell.Commands.WriteHostCommand",
			Source:    docBase + "microsoft.powershell.utility/write-host?view=powershell-5.1",
			Behaviour: "writes text to the host (stdout), not to the pipeline; colours are accepted and ignored",
			Params: []*Param{P("Object", "System.Object", 0, Pipeline, Remaining), P("NoNewline", "SwitchParameter", -1),
				P("Separator", "System.Object", -1),
				P("ForegroundColor", "System.ConsoleColor", -1, Enum(consoleColors...), NoEffect("colours are not text: WinRM, SSH and guest operations carry the text only")),
				P("BackgroundColor", "System.ConsoleColor", -1, Enum(consoleColors...), NoEffect("colours are not text: WinRM, SSH and guest operations carry the text only"))},
			Run: func(c *Call) error {
				sep := " "
				if c.Has("Separator") {
					sep = c.Str("Separator")
				}
				var parts []string
				for _, v := range pipelineItems(c, "Object") {
					parts = append(parts, toString(v))
				}
				s := strings.Join(parts, sep)
				if !c.Switch("NoNewline") {
					s += "\r\n"
				}
				c.HostOut(s)
				return nil
			}},
		{Name: "Write-Error", Class: "Microsoft.PowerShell.Commands.WriteErrorCommand",
			Source:    docBase + "microsoft.powershell.utility/write-error?view=powershell-5.1",
			Behaviour: "writes a non-terminating error record (WriteErrorException)",
			Params: []*Param{P("Message", "System.String", 0, Mandatory, Alias("Msg")),
				P("Category", "System.Management.Automation.ErrorCategory", -1, Unmodelled), P("ErrorId", "System.String", -1),
				P("TargetObject", "System.Object", -1), P("RecommendedAction", "System.String", -1, Unmodelled),
				P("CategoryActivity", "System.String", -1, Alias("Activity"), Unmodelled), P("CategoryReason", "System.String", -1, Alias("Reason"), Unmodelled),
				P("CategoryTargetName", "System.String", -1, Alias("TargetName"), Unmodelled), P("CategoryTargetType", "System.String", -1, Alias("TargetType"), Unmodelled),
				P("Exception", "System.Exception", -1, Unmodelled), P("ErrorRecord", "System.Management.Automation.ErrorRecord", -1, Unmodelled)},
			Run: func(c *Call) error {
				id := "Microsoft.PowerShell.Commands.WriteErrorException"
				if c.Has("ErrorId") {
					id = c.Str("ErrorId") + "," + "Microsoft.PowerShell.Commands.WriteErrorException"
				}
				rec := &ErrorRecord{Message: c.Str("Message"), Category: "NotSpecified", Reason: "WriteErrorException", ErrorID: id,
					Exception: "Microsoft.PowerShell.Commands.WriteErrorException", Command: "Write-Error", Thrown: c.Value("TargetObject")}
				// At script level powershell.exe names the script (-File) as the
				// failing command; the category's activity stays Write-Error.
				rec.Activity = "Write-Error"
				if c.rt.opt.File != "" {
					rec.Command = c.rt.opt.File
				}
				return c.Error(rec)
			}},
		{Name: "Write-Verbose", Class: "Microsoft.PowerShell.Commands.WriteVerboseCommand",
			Source:    docBase + "microsoft.powershell.utility/write-verbose?view=powershell-5.1",
			Behaviour: "nothing while $VerbosePreference is SilentlyContinue (its default) and -Verbose is not given; the verbose stream is refused otherwise",
			Params:    []*Param{P("Message", "System.String", 0, Mandatory, Pipeline, Alias("Msg"))},
			Run: func(c *Call) error {
				// The message goes to the verbose stream, shown only when
				// $VerbosePreference or -Verbose asks for it
				// (about_Preference_Variables): the engine has no verbose
				// stream, so a message that would be shown is refused.
				if toBool(c.Args["Verbose"]) || !strings.EqualFold(toString(c.rt.lookup("verbosepreference")), "SilentlyContinue") {
					return c.Unmodelled("the verbose stream (Write-Verbose -Message " + c.Str("Message") + " with verbose output on)")
				}
				return nil
			}},
		{Name: "Out-Null", Class: "Microsoft.PowerShell.Commands.OutNullCommand",
			Source:    docBase + "microsoft.powershell.core/out-null?view=powershell-5.1",
			Behaviour: "discards its input",
			Params:    []*Param{P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline, NoEffect("Out-Null discards whatever it is given"))},
			Run:       func(c *Call) error { return nil }},
		{Name: "Out-String", Class: "Microsoft.PowerShell.Commands.OutStringCommand",
			Source:    docBase + "microsoft.powershell.utility/out-string?view=powershell-5.1",
			Behaviour: "the input's text as one string (each object's lines, CRLF-terminated); -Stream: one string per line",
			Params: []*Param{P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline), P("Stream", "SwitchParameter", -1),
				P("Width", "System.Int32", -1, Unmodelled)},
			Run: func(c *Call) error {
				var all []string
				for _, o := range pipelineItems(c, "InputObject") {
					all = append(all, formatLines(o)...)
				}
				if c.Switch("Stream") {
					for _, l := range all {
						c.Write(l)
					}
					return nil
				}
				if len(all) > 0 {
					c.Write(strings.Join(all, "\r\n") + "\r\n")
				} else {
					c.Write("")
				}
				return nil
			}},
		{Name: "Where-Object", Class: "Microsoft.PowerShell.Commands.WhereObjectCommand", Aliases: []string{"?", "where"},
			Source:    docBase + "microsoft.powershell.core/where-object?view=powershell-5.1",
			Behaviour: "passes the input objects for which the script block ($_ the object) is true",
			Params:    wherePs,
			Run: func(c *Call) error {
				sb, ok := c.Value("FilterScript").(*ScriptBlock)
				if !ok {
					return c.Unmodelled("Where-Object without a script block")
				}
				for _, item := range pipelineItems(c, "InputObject") {
					out, err := c.Invoke(sb, item)
					if err != nil {
						return err
					}
					if toBool(collapse(out)) {
						c.Write(item)
					}
				}
				return nil
			}},
		{Name: "ForEach-Object", Class: "Microsoft.PowerShell.Commands.ForEachObjectCommand", Aliases: []string{"%", "foreach"},
			Source:    docBase + "microsoft.powershell.core/foreach-object?view=powershell-5.1",
			Behaviour: "runs the script block for each input object ($_ the object) and writes its output",
			Params: []*Param{P("Process", "System.Management.Automation.ScriptBlock", 0), P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline),
				P("Begin", "System.Management.Automation.ScriptBlock", -1, Unmodelled), P("End", "System.Management.Automation.ScriptBlock", -1, Unmodelled),
				P("RemainingScripts", "System.Management.Automation.ScriptBlock[]", -1, Unmodelled), P("MemberName", "System.String", -1, Unmodelled),
				P("ArgumentList", "System.Object[]", -1, Alias("Args"), Unmodelled)},
			Run: func(c *Call) error {
				sb, ok := c.Value("Process").(*ScriptBlock)
				if !ok {
					return c.Unmodelled("ForEach-Object without a script block")
				}
				for _, item := range pipelineItems(c, "InputObject") {
					out, err := c.Invoke(sb, item)
					for _, o := range out {
						c.Write(o)
					}
					if err != nil {
						return err
					}
				}
				return nil
			}},
		selectObject(),
		convertFromJSON(),
		{Name: "Start-Sleep", Class: "Microsoft.PowerShell.Commands.StartSleepCommand", Aliases: []string{"sleep"},
			Source:    docBase + "microsoft.powershell.utility/start-sleep?view=powershell-5.1",
			Behaviour: "sleeps (cancelled with the command)",
			// StartSleepCommand: DefaultParameterSetName "Seconds"; -Seconds
			// (position 0) and -Milliseconds each mandatory in its own set.
			DefaultSet: "Seconds",
			Params: []*Param{P("Seconds", "System.Int32", 0, Alias("s"), In("Seconds"), Mandatory, Pipeline),
				P("Milliseconds", "System.Int32", -1, Alias("ms"), In("Milliseconds"), Mandatory)},
			Run: func(c *Call) error {
				var d time.Duration
				if !c.Has(c.Set) {
					return c.Unmodelled("pipeline input to -" + c.Set)
				}
				if c.Set == "Seconds" {
					d = time.Duration(c.Value("Seconds").(int)) * time.Second
				} else {
					d = time.Duration(c.Value("Milliseconds").(int)) * time.Millisecond
				}
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
				case <-c.Ctx.Done():
				}
				return nil
			}},
	}
}

var consoleColors = []string{"Black", "DarkBlue", "DarkGreen", "DarkCyan", "DarkRed", "DarkMagenta", "DarkYellow", "Gray", "DarkGray", "Blue", "Green", "Cyan", "Red", "Magenta", "Yellow", "White"}

func selectObject() *Cmdlet {
	return &Cmdlet{Name: "Select-Object", Class: "Microsoft.PowerShell.Commands.SelectObjectCommand", Aliases: []string{"select"},
		Source:    docBase + "microsoft.powershell.utility/select-object?view=powershell-5.1",
		Behaviour: "-ExpandProperty (a missing property is an error), -Property (new objects with those properties), -First, -Last",
		Params: []*Param{P("Property", "System.Object[]", 0), P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline),
			P("ExpandProperty", "System.String", -1), P("First", "System.Int32", -1), P("Last", "System.Int32", -1),
			P("ExcludeProperty", "System.String[]", -1, Unmodelled), P("Unique", "SwitchParameter", -1, Unmodelled), P("Skip", "System.Int32", -1, Unmodelled),
			P("SkipLast", "System.Int32", -1, Unmodelled), P("Wait", "SwitchParameter", -1, Unmodelled), P("Index", "System.Int32[]", -1, Unmodelled)},
		Run: func(c *Call) error {
			in := pipelineItems(c, "InputObject")
			if c.Has("First") {
				if n := c.Value("First").(int); n < len(in) {
					in = in[:n]
				}
			}
			if c.Has("Last") {
				if n := c.Value("Last").(int); n < len(in) {
					in = in[len(in)-n:]
				}
			}
			for _, o := range in {
				switch {
				case c.Has("ExpandProperty"):
					p := c.Str("ExpandProperty")
					if rec := unmodelledProperty(o, strings.ToLower(p), p); rec != nil {
						return c.rt.terminate(c.node, rec, true)
					}
					if !hasProperty(o, p) {
						rec := c.Fail(fmt.Sprintf("Property \"%s\" cannot be found.", p), "InvalidArgument", toString(o), "PSArgumentException",
							"ExpandPropertyNotFound", "System.Management.Automation.PSArgumentException")
						rec.TargetType = "PSObject"
						if err := c.Error(rec); err != nil {
							return err
						}
						continue
					}
					v, rec := property(o, p)
					if rec != nil {
						return c.rt.terminate(c.node, rec, true)
					}
					for _, v := range items(v) {
						c.Write(v)
					}
				case c.Has("Property"):
					obj := NewObject("System.Management.Automation.PSCustomObject")
					for _, p := range items(c.Value("Property")) {
						if _, isSB := p.(*ScriptBlock); isSB {
							return c.Unmodelled("calculated properties")
						}
						v, rec := property(o, toString(p))
						if rec != nil {
							return c.rt.terminate(c.node, rec, true)
						}
						obj.Set(toString(p), v)
					}
					c.Write(obj)
				default:
					c.Write(o)
				}
			}
			return nil
		}}
}

// hasProperty reports whether an object has a property (for -ExpandProperty).
func hasProperty(o any, name string) bool {
	switch v := o.(type) {
	case *Object:
		_, ok := v.Get(name)
		return ok
	case *Hashtable:
		lower := strings.ToLower(name)
		_, ok := v.Get(name)
		return ok || lower == "count" || lower == "keys" || lower == "values"
	case string:
		return strings.EqualFold(name, "Length")
	case []any, []byte:
		return strings.EqualFold(name, "Length") || strings.EqualFold(name, "Count")
	}
	return false
}
