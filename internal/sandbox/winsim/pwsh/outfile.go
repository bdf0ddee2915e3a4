package pwsh

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// outFileCmdlet is Out-File of Windows PowerShell 5.1: the input formatted
// as the console shows it (the lines > file writes), each line ended by
// CRLF, in -Encoding: unicode (UTF-16LE with a BOM) by default and for
// string; bigendianunicode, utf8 and utf32 with a BOM; ascii, default (the
// ANSI code page 1252) and oem (437) without. -Append adds at the end (no
// second BOM); -NoNewline writes strings as they are, concatenated.
// Sources: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/out-file?view=powershell-5.1
// ("-Encoding ... The default value is unicode"; -Append; -NoNewline: "The
// content written to the file doesn't end with a newline character. The
// string representations of the input objects are concatenated");
// about_Character_Encoding (5.1): UTF8 "with a Byte Order Mark", Default
// "the system's active code page", OEM "the current OEM code page".
//
// Refused as not modelled: -Encoding unknown and utf7, -Width, -NoClobber,
// -Force, -NoNewline of objects that are not strings, and -Append without
// -Encoding to a file that is not UTF-16LE (5.1 looks at the file's own
// encoding then).
func outFileCmdlet() *Cmdlet {
	return &Cmdlet{Name: "Out-File", Class: "Microsoft.PowerShell.Commands.OutFileCommand", DefaultSet: "ByPath", ShouldProcess: true,
		Source:    docBase + "microsoft.powershell.utility/out-file?view=powershell-5.1",
		Behaviour: "writes the input as the console shows it, CRLF after each line, in -Encoding: unicode (UTF-16LE with a BOM, the default) or string, bigendianunicode, utf8, utf32 (with a BOM), ascii, default (code page 1252), oem (437); -Append adds at the end without a second BOM; -NoNewline concatenates strings; unknown, utf7, -Width, -NoClobber, -Force refused",
		Params: []*Param{P("FilePath", "System.String", 0, In("ByPath"), Mandatory), P("LiteralPath", "System.String", -1, Alias("PSPath"), In("ByLiteralPath"), Mandatory),
			P("Encoding", "System.String", 1, Set("unknown", "string", "unicode", "bigendianunicode", "utf8", "utf7", "utf32", "ascii", "default", "oem")),
			P("Append", "SwitchParameter", -1), P("NoNewline", "SwitchParameter", -1), P("InputObject", "System.Management.Automation.PSObject", -1, Pipeline),
			P("Force", "SwitchParameter", -1, Unmodelled), P("NoClobber", "SwitchParameter", -1, Alias("NoOverwrite"), Unmodelled), P("Width", "System.Int32", -1, Unmodelled)},
		Run: func(c *Call) error {
			path := c.Str("FilePath")
			if c.Set == "ByLiteralPath" {
				path = c.Str("LiteralPath")
			} else if strings.ContainsAny(path, "*?[") {
				return c.Unmodelled("wildcards in -FilePath")
			}
			var enc TextEncoding
			switch strings.ToLower(c.Str("Encoding")) {
			case "", "unicode", "string":
				enc = EncUnicode
			case "bigendianunicode":
				enc = EncBigEndianUnicode
			case "utf8":
				enc = EncUTF8
			case "utf32":
				enc = EncUTF32
			case "ascii":
				enc = EncASCII
			case "default":
				enc = EncDefault
			case "oem":
				enc = EncOEM
			default:
				return c.Unmodelled("-Encoding " + c.Str("Encoding"))
			}
			var text strings.Builder
			for _, o := range pipelineItems(c, "InputObject") {
				if c.Switch("NoNewline") {
					s, ok := o.(string)
					if !ok {
						return c.Unmodelled("-NoNewline with input that is not a string (" + typeName(o) + ")")
					}
					text.WriteString(s)
					continue
				}
				for _, l := range formatLines(o) {
					text.WriteString(l + "\r\n")
				}
			}
			full := c.rt.host.FullPath(path)
			existing := 0
			appendTo := c.Switch("Append")
			if appendTo {
				if old, err := c.rt.host.ReadFile(full); err == nil {
					existing = len(old)
					if existing > 0 && !c.Has("Encoding") && !bytes.HasPrefix(old, EncUnicode.Preamble()) {
						return c.Unmodelled("-Append without -Encoding to a file that is not UTF-16LE")
					}
				}
			}
			// "it does not create directories" (Out-File 2.0's -FilePath).
			if !parentExists(c.rt.host, full) {
				return c.Throw(c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", full), "OpenError", full, "DirectoryNotFoundException", "FileOpenFailure", "System.IO.DirectoryNotFoundException"))
			}
			if err := c.rt.host.WriteFile(full, enc.Encode(text.String(), existing), appendTo); err != nil {
				var denied interface{ AccessDenied() bool }
				if errors.As(err, &denied) && denied.AccessDenied() {
					return c.Throw(c.Fail(err.Error(), "OpenError", full, "UnauthorizedAccessException", "FileOpenFailure", "System.UnauthorizedAccessException"))
				}
				return c.Throw(c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", full), "OpenError", full, "DirectoryNotFoundException", "FileOpenFailure", "System.IO.DirectoryNotFoundException"))
			}
			return nil
		}}
}

// setStrictModeCmdlet is Set-StrictMode -Off: strict mode is off in every
// scope unless Set-StrictMode -Version turns it on, and the engine never
// does, so -Off leaves it as it is ("Set-StrictMode -Off: Turns strict
// mode off", about_Strict_Mode, Set-StrictMode 5.1). -Version (the rules of
// strict mode) is refused as not modelled.
func setStrictModeCmdlet() *Cmdlet {
	return &Cmdlet{Name: "Set-StrictMode", Class: "Microsoft.PowerShell.Commands.SetStrictModeCommand", DefaultSet: "Version",
		Source:    docBase + "microsoft.powershell.core/set-strictmode?view=powershell-5.1",
		Behaviour: "-Off: strict mode stays off (the engine never turns it on); -Version refused",
		Params: []*Param{P("Version", "System.Version", -1, Alias("v"), In("Version"), Mandatory, Unmodelled),
			P("Off", "SwitchParameter", -1, In("Off"), Mandatory)},
		Run: func(c *Call) error {
			if !c.Switch("Off") {
				return c.Unmodelled("Set-StrictMode -Off:$false")
			}
			return nil
		}}
}

// parentExists reports whether a full path's directory exists: a
// StreamWriter (Out-File, > file) opens the file in it and creates none.
func parentExists(h Host, full string) bool {
	i := strings.LastIndexByte(full, '\\')
	if i < 0 {
		return true
	}
	dir := full[:i]
	if len(dir) == 2 && dir[1] == ':' {
		dir += `\`
	}
	ok, isDir := h.Stat(dir)
	return ok && isDir
}
