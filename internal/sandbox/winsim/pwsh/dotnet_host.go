package pwsh

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// The .NET types that reach the host: files, paths, environment, console.

func ioErr(path string, err error) error {
	if err == nil {
		return nil
	}
	return dotnetErr("System.IO.DirectoryNotFoundException", fmt.Sprintf("Could not find a part of the path '%s'.", path))
}

func fileNotFound(path string) error {
	return dotnetErr("System.IO.FileNotFoundException", fmt.Sprintf("Could not find file '%s'.", path))
}

// readError is the .NET exception of a failed read: the host's access
// check refused it (UnauthorizedAccessException,
// learn.microsoft.com/dotnet/api/system.io.file.readallbytes#exceptions),
// else the file is missing.
func readError(path string, err error) error {
	var denied interface{ AccessDenied() bool }
	if errors.As(err, &denied) && denied.AccessDenied() {
		return dotnetErr("System.UnauthorizedAccessException", err.Error())
	}
	return fileNotFound(path)
}

func argCount(method string, a []any, n ...int) error {
	for _, k := range n {
		if len(a) == k {
			return nil
		}
	}
	return errOverload(method, len(a))
}

// encodingArg is the System.Text.Encoding argument of a File method.
func encodingArg(method string, v any) (TextEncoding, error) {
	if e, ok := encodingOf(v); ok {
		return e, nil
	}
	return TextEncoding{}, dotnetErr("System.Management.Automation.MethodException",
		fmt.Sprintf("Cannot convert argument \"encoding\", with value: \"%s\", for \"%s\" to type \"System.Text.Encoding\": \"Cannot convert the \"%s\" value of type \"%s\" to type \"System.Text.Encoding\".\"",
			toString(v), method, toString(v), typeName(v)))
}

func writeAllText(r *Runtime, method string, a []any, text func(any) string) (any, error) {
	if err := argCount(method, a, 2, 3); err != nil {
		return nil, err
	}
	enc := EncUTF8NoBOM
	if len(a) == 3 {
		e, err := encodingArg(method, a[2])
		if err != nil {
			return nil, err
		}
		enc = e
	}
	p := r.host.FullPath(argString(a[0]))
	return nil, ioErr(p, r.host.WriteFile(p, enc.Encode(text(a[1]), 0), false))
}

func readAllText(r *Runtime, method string, a []any) (string, error) {
	if err := argCount(method, a, 1, 2); err != nil {
		return "", err
	}
	enc := EncUTF8NoBOM
	if len(a) == 2 {
		e, err := encodingArg(method, a[1])
		if err != nil {
			return "", err
		}
		enc = e
	}
	p := r.host.FullPath(argString(a[0]))
	b, err := r.host.ReadFile(p)
	if err != nil {
		return "", readError(p, err)
	}
	return DecodeText(b, enc), nil
}

// splitLines splits text at CRLF, LF or CR as StreamReader.ReadLine does; a
// final line break ends the last line.
func splitLines(text string) []string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func init() {
	registerType(&dotnetType{Full: "System.IO.File", Names: []string{"IO.File"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.io.file",
		Methods: []string{"appendalllines", "appendalltext", "appendtext", "copy", "create", "createtext", "decrypt", "delete", "encrypt", "exists", "getaccesscontrol", "getattributes", "getcreationtime", "getlastaccesstime", "getlastwritetime", "move", "open", "openread", "opentext", "openwrite", "readallbytes", "readalllines", "readalltext", "readlines", "replace", "setaccesscontrol", "setattributes", "setcreationtime", "setlastaccesstime", "setlastwritetime", "writeallbytes", "writealllines", "writealltext"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"writeallbytes": func(r *Runtime, a []any) (any, error) {
				if err := argCount("WriteAllBytes", a, 2); err != nil {
					return nil, err
				}
				b, ok := a[1].([]byte)
				if !ok {
					if a[1] == nil {
						return nil, dotnetErr("System.ArgumentNullException", "Value cannot be null.\r\nParameter name: bytes")
					}
					b = []byte(toString(a[1]))
				}
				p := r.host.FullPath(argString(a[0]))
				return nil, ioErr(p, r.host.WriteFile(p, b, false))
			},
			// WriteAllText(path, text) is UTF-8 without a byte order mark;
			// WriteAllText(path, text, encoding) writes encoding's preamble
			// (GetPreamble) then the text. ReadAllText detects a byte order
			// mark, else reads UTF-8 (or the encoding given).
			// https://learn.microsoft.com/en-us/dotnet/api/system.io.file.writealltext,
			// https://learn.microsoft.com/en-us/dotnet/api/system.io.file.readalltext
			"writealltext": func(r *Runtime, a []any) (any, error) {
				return writeAllText(r, "WriteAllText", a, func(v any) string { return argString(v) })
			},
			"writealllines": func(r *Runtime, a []any) (any, error) {
				return writeAllText(r, "WriteAllLines", a, func(v any) string {
					var b strings.Builder
					for _, l := range enumerate(v) {
						b.WriteString(toString(l) + "\r\n")
					}
					return b.String()
				})
			},
			"readalltext": func(r *Runtime, a []any) (any, error) {
				text, err := readAllText(r, "ReadAllText", a)
				if err != nil {
					return nil, err
				}
				return text, nil
			},
			"readalllines": func(r *Runtime, a []any) (any, error) {
				text, err := readAllText(r, "ReadAllLines", a)
				if err != nil {
					return nil, err
				}
				var out []any
				for _, l := range splitLines(text) {
					out = append(out, l)
				}
				return out, nil
			},
			"readallbytes": func(r *Runtime, a []any) (any, error) {
				if err := argCount("ReadAllBytes", a, 1); err != nil {
					return nil, err
				}
				p := r.host.FullPath(argString(a[0]))
				b, err := r.host.ReadFile(p)
				if err != nil {
					return nil, readError(p, err)
				}
				return b, nil
			},
			"exists": func(r *Runtime, a []any) (any, error) {
				if err := argCount("Exists", a, 1); err != nil {
					return nil, err
				}
				ok, dir := r.host.Stat(argString(a[0]))
				return ok && !dir, nil
			},
			"create":    func(r *Runtime, a []any) (any, error) { return openWrite(r, "Create", a) },
			"openwrite": func(r *Runtime, a []any) (any, error) { return openWrite(r, "OpenWrite", a) },
			"opentext": func(r *Runtime, a []any) (any, error) {
				if err := argCount("OpenText", a, 1); err != nil {
					return nil, err
				}
				p := r.host.FullPath(argString(a[0]))
				b, err := r.host.ReadFile(p)
				if err != nil {
					return nil, readError(p, err)
				}
				return streamReader(DecodeText(b, EncUTF8NoBOM)), nil
			},
		}})
	registerType(&dotnetType{Full: "System.IO.Directory", Names: []string{"IO.Directory"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.io.directory",
		Methods: []string{"createdirectory", "delete", "exists", "getdirectories", "getfiles", "move", "getcurrentdirectory", "enumeratefiles", "enumeratedirectories"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"createdirectory": func(r *Runtime, a []any) (any, error) {
				if err := argCount("CreateDirectory", a, 1); err != nil {
					return nil, err
				}
				p := r.host.FullPath(argString(a[0]))
				if err := r.host.MkdirAll(p); err != nil {
					return nil, ioErr(p, err)
				}
				o := NewObject("System.IO.DirectoryInfo")
				o.Str = p
				return o.Set("FullName", p), nil
			},
			"exists": func(r *Runtime, a []any) (any, error) {
				if err := argCount("Exists", a, 1); err != nil {
					return nil, err
				}
				ok, dir := r.host.Stat(argString(a[0]))
				return ok && dir, nil
			},
		}})
	registerType(&dotnetType{Full: "System.IO.Path", Names: []string{"IO.Path"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.io.path",
		Methods: []string{"changeextension", "combine", "getdirectoryname", "getextension", "getfilename", "getfilenamewithoutextension", "getfullpath", "getinvalidfilenamechars", "getinvalidpathchars", "getpathroot", "getrandomfilename", "gettempfilename", "gettemppath", "hasextension", "ispathrooted"},
		Static: map[string]func(*Runtime, []any) (any, error){
			"getfullpath": func(r *Runtime, a []any) (any, error) {
				if err := argCount("GetFullPath", a, 1); err != nil {
					return nil, err
				}
				if toString(a[0]) == "" {
					return nil, dotnetErr("System.ArgumentException", "The path is not of a legal form.")
				}
				return r.host.FullPath(argString(a[0])), nil
			},
			"getdirectoryname": func(r *Runtime, a []any) (any, error) {
				if err := argCount("GetDirectoryName", a, 1); err != nil {
					return nil, err
				}
				p := argString(a[0])
				i := strings.LastIndexAny(p, `\/`)
				switch {
				case i < 0:
					return "", nil
				case i == 2 && len(p) > 1 && p[1] == ':':
					if len(p) == 3 {
						return nil, nil // a root has no directory
					}
					return p[:3], nil
				}
				return p[:i], nil
			},
			"getfilename": func(r *Runtime, a []any) (any, error) {
				if err := argCount("GetFileName", a, 1); err != nil {
					return nil, err
				}
				p := argString(a[0])
				return p[strings.LastIndexAny(p, `\/`)+1:], nil
			},
			"combine": func(r *Runtime, a []any) (any, error) {
				if len(a) < 2 {
					return nil, errOverload("Combine", len(a))
				}
				out := ""
				for _, e := range a {
					s := argString(e)
					if len(s) > 1 && (s[1] == ':' || s[0] == '\\') {
						out = s
						continue
					}
					if out != "" && !strings.HasSuffix(out, `\`) {
						out += `\`
					}
					out += s
				}
				return out, nil
			},
		}})
	registerType(&dotnetType{Full: "System.Environment", Names: []string{"Environment"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.environment",
		Methods: []string{"exit", "expandenvironmentvariables", "failfast", "getcommandlineargs", "getenvironmentvariable", "getenvironmentvariables", "getfolderpath", "getlogicaldrives", "setenvironmentvariable"},
		Props: map[string]func(*Runtime) (any, error){
			"machinename": func(r *Runtime) (any, error) { return r.host.ComputerName(), nil },
			"newline":     func(*Runtime) (any, error) { return "\r\n", nil },
			"osversion": func(r *Runtime) (any, error) {
				v := r.host.OSVersion()
				ver := versionObject(v)
				o := NewObject("System.OperatingSystem")
				o.Str = "Microsoft Windows NT " + v
				return o.Set("Platform", "Win32NT").Set("ServicePack", "").Set("Version", ver).Set("VersionString", o.Str), nil
			},
			"is64bitoperatingsystem": func(*Runtime) (any, error) { return true, nil },
			"processorcount": func(r *Runtime) (any, error) {
				if mi, ok := r.host.(MachineInfo); ok {
					return mi.ProcessorCount(), nil
				}
				return nil, &Terminating{Rec: errUnsupported("[System.Environment]::ProcessorCount on a host that does not report its processors"), Script: true}
			},
		},
		Static: map[string]func(*Runtime, []any) (any, error){
			"getenvironmentvariable": func(r *Runtime, a []any) (any, error) {
				if err := argCount("GetEnvironmentVariable", a, 1, 2); err != nil {
					return nil, err
				}
				var v string
				var ok bool
				if len(a) == 2 && !strings.EqualFold(toString(a[1]), "Process") {
					if err := checkTarget(a[1]); err != nil {
						return nil, err
					}
					if strings.EqualFold(toString(a[1]), "User") {
						// 'User' reads HKCU\Environment of the caller
						// (Environment.GetEnvironmentVariable(String,
						// EnvironmentVariableTarget), learn.microsoft.com),
						// which the simulated host does not model: it is
						// refused, never answered with the machine's value.
						return nil, userEnvUnmodelled("GetEnvironmentVariable")
					}
					v, ok = r.host.GetMachineEnv(toString(a[0]))
				} else {
					v, ok = r.host.Getenv(toString(a[0]))
				}
				if !ok {
					return nil, nil
				}
				return v, nil
			},
			"setenvironmentvariable": func(r *Runtime, a []any) (any, error) {
				if err := argCount("SetEnvironmentVariable", a, 2, 3); err != nil {
					return nil, err
				}
				if len(a) == 3 && !strings.EqualFold(toString(a[2]), "Process") {
					if err := checkTarget(a[2]); err != nil {
						return nil, err
					}
					if strings.EqualFold(toString(a[2]), "User") {
						return nil, userEnvUnmodelled("SetEnvironmentVariable")
					}
					return nil, r.host.SetMachineEnv(toString(a[0]), toString(a[1]))
				}
				r.host.Setenv(toString(a[0]), toString(a[1]))
				return nil, nil
			},
		}})
	registerType(&dotnetType{Full: "System.Console", Names: []string{"Console"}, Source: "https://learn.microsoft.com/en-us/dotnet/api/system.console",
		Methods: []string{"write", "writeline", "readline", "read", "beep", "clear", "readkey", "resetcolor", "setcursorposition", "seterror", "setin", "setout", "openstandarderror", "openstandardinput", "openstandardoutput"},
		Props: map[string]func(*Runtime) (any, error){
			"error": func(r *Runtime) (any, error) { return textWriter(r.opt.Stderr), nil },
			"out":   func(r *Runtime) (any, error) { return textWriter(r.opt.Stdout), nil },
		}})
}

// userEnvUnmodelled refuses the 'User' target of [Environment]'s
// environment methods: HKCU\Environment is not modelled.
func userEnvUnmodelled(method string) error {
	return &Terminating{Rec: errUnsupported("[System.Environment]::" + method + " with the target 'User' (HKCU\\Environment)"), Script: true}
}

func checkTarget(t any) error {
	switch strings.ToLower(toString(t)) {
	case "process", "user", "machine":
		return nil
	}
	return dotnetErr("System.Management.Automation.PSInvalidCastException", fmt.Sprintf("Cannot convert argument \"target\", with value: \"%s\", for \"SetEnvironmentVariable\" to type \"System.EnvironmentVariableTarget\": \"Cannot convert value \"%s\" to type \"System.EnvironmentVariableTarget\". Error: \"Unable to match the identifier name %s to a valid enumerator name. Specify one of the following enumerator names and try again:\r\nProcess, User, Machine\"\"", toString(t), toString(t), toString(t)))
}

func versionObject(v string) *Object {
	o := NewObject("System.Version")
	o.Str = v
	parts := strings.Split(v, ".")
	names := []string{"Major", "Minor", "Build", "Revision"}
	for i, n := range names {
		val := -1
		if i < len(parts) {
			_, _ = fmt.Sscanf(parts[i], "%d", &val) // a part that is no number stays -1
		}
		o.Set(n, val)
	}
	o.Methods["tostring"] = func(a []any) (any, error) {
		// Version.ToString() and ToString(fieldCount).
		if err := argCount("ToString", a, 0, 1); err != nil || len(a) == 0 {
			return v, err
		}
		k, ok := parseIntArg(a[0])
		if !ok || k < 0 || k > len(parts) {
			return nil, dotnetErr("System.ArgumentException", "Argument must be between 0 and "+fmt.Sprint(len(parts))+".\r\nParameter name: fieldCount")
		}
		return strings.Join(parts[:k], "."), nil
	}
	return o
}

// openWrite is [IO.File]::Create / OpenWrite: a FileStream with Write and Close.
func openWrite(r *Runtime, method string, a []any) (any, error) {
	if err := argCount(method, a, 1); err != nil {
		return nil, err
	}
	p := r.host.FullPath(argString(a[0]))
	w, err := r.host.Create(p)
	if err != nil {
		return nil, ioErr(p, err)
	}
	o := NewObject("System.IO.FileStream")
	o.Str = "System.IO.FileStream"
	o.Set("Name", p).Set("CanWrite", true)
	closed := false
	o.Methods["write"] = func(a []any) (any, error) {
		if err := argCount("Write", a, 3); err != nil {
			return nil, err
		}
		if closed {
			return nil, dotnetErr("System.ObjectDisposedException", "Cannot access a closed file.")
		}
		b, ok := a[0].([]byte)
		off, ok1 := parseIntArg(a[1])
		n, ok2 := parseIntArg(a[2])
		if !ok || !ok1 || !ok2 || off < 0 || n < 0 || off+n > len(b) {
			return nil, dotnetErr("System.ArgumentException", "Offset and length were out of bounds for the array or count is greater than the number of elements from index to the end of the source collection.")
		}
		if _, err := w.Write(b[off : off+n]); err != nil {
			return nil, dotnetErr("System.IO.IOException", err.Error())
		}
		return nil, nil
	}
	closeFn := func(a []any) (any, error) {
		if !closed {
			closed = true
			if err := w.Close(); err != nil {
				return nil, dotnetErr("System.IO.IOException", err.Error())
			}
		}
		return nil, nil
	}
	o.Methods["close"] = closeFn
	o.Methods["dispose"] = closeFn
	o.Methods["flush"] = func(a []any) (any, error) { return nil, nil }
	return o, nil
}

// streamReader is [IO.File]::OpenText: ReadLine returns $null at the end.
func streamReader(text string) *Object {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	o := NewObject("System.IO.StreamReader")
	o.Str = "System.IO.StreamReader"
	i := 0
	o.Methods["readline"] = func(a []any) (any, error) {
		if i >= len(lines) {
			return nil, nil
		}
		i++
		return lines[i-1], nil
	}
	o.Methods["readtoend"] = func(a []any) (any, error) {
		rest := strings.Join(lines[i:], "\r\n")
		i = len(lines)
		return rest, nil
	}
	o.Methods["close"] = func(a []any) (any, error) { return nil, nil }
	o.Methods["dispose"] = o.Methods["close"]
	return o
}

// textWriter is [Console]::Error / [Console]::Out: plain lines, not records.
func textWriter(w io.Writer) *Object {
	o := NewObject("System.IO.TextWriter")
	o.Str = "System.IO.SyncTextWriter"
	o.Methods["writeline"] = func(a []any) (any, error) {
		s := ""
		if len(a) > 0 {
			s = toString(a[0])
		}
		if w != nil {
			_, _ = io.WriteString(w, s+"\r\n") // a console write has no one to report to
		}
		return nil, nil
	}
	o.Methods["write"] = func(a []any) (any, error) {
		if len(a) > 0 && w != nil {
			_, _ = io.WriteString(w, toString(a[0]))
		}
		return nil, nil
	}
	o.Methods["flush"] = func(a []any) (any, error) { return nil, nil }
	return o
}
