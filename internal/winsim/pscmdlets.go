package winsim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// cmdletAliases maps the aliases scripts commonly use to cmdlet names.
var cmdletAliases = map[string]string{
	"echo": "write-output", "write": "write-output", "rm": "remove-item", "del": "remove-item",
	"erase": "remove-item", "rmdir": "remove-item", "mv": "move-item", "move": "move-item",
	"cp": "copy-item", "copy": "copy-item", "cat": "get-content", "gc": "get-content",
	"type": "get-content", "ni": "new-item", "mkdir": "mkdir", "md": "mkdir",
	"hostname.exe": "hostname", "sc.exe": "sc.exe",
}

// pipeline runs "Cmdlet args | Cmdlet args ...".
func (e *psEnv) pipeline(s string) ([]psObj, error) {
	var objs []psObj
	for i, seg := range splitPipeline(tokens(s)) {
		if len(seg) == 0 {
			return nil, &psErr{msg: "An empty pipe element is not allowed.", statement: s}
		}
		name := strings.ToLower(seg[0])
		if a, ok := cmdletAliases[name]; ok {
			name = a
		}
		args := parseArgs(seg[1:])
		var err error
		if i == 0 {
			objs, err = e.cmdlet(name, seg[0], args)
		} else {
			objs, err = e.filter(name, args, objs)
		}
		if err != nil {
			if pe, ok := err.(*psErr); ok {
				if pe.command == "" && !pe.terminating {
					pe.command = seg[0]
				}
				if ea, _ := args.get("erroraction", "ea"); ea != "" {
					switch strings.ToLower(strings.Trim(ea, `'"`)) {
					case "silentlycontinue", "ignore":
						return objs, &psErr{id: "silent"}
					case "stop":
						pe.terminating = true
					}
				}
			}
			return objs, err
		}
	}
	return objs, nil
}

// filter runs a downstream pipeline element on its input.
func (e *psEnv) filter(name string, a cmdArgs, in []psObj) ([]psObj, error) {
	switch name {
	case "out-null":
		return nil, nil
	case "select-object", "select":
		if p, ok := a.get("expandproperty", "expand"); ok {
			p, _ = e.arg(p)
			var out []psObj
			for _, o := range in {
				if v, ok := o.prop(p); ok {
					out = append(out, textObj(v))
				}
			}
			return out, nil
		}
		if n, ok := a.get("first"); ok {
			k, _ := strconv.Atoi(n)
			if k < len(in) {
				in = in[:k]
			}
		}
		return in, nil
	case "out-string":
		var b strings.Builder
		for _, o := range in {
			b.WriteString(o.text + "\r\n")
		}
		return []psObj{textObj(b.String())}, nil
	case "out-file", "set-content", "add-content":
		p, _ := a.getOrPos(0, "filepath", "path", "literalpath")
		p, _ = e.arg(p)
		var b strings.Builder
		for _, o := range in {
			b.WriteString(o.text + "\r\n")
		}
		return nil, e.h.fs.WriteFile(p, []byte(b.String()), name == "add-content" || a.switches["append"])
	}
	return in, nil // Where-Object, ForEach-Object, Format-*: passed through unchanged
}

func (e *psEnv) str(a cmdArgs, pos int, names ...string) (string, bool, error) {
	raw, ok := a.getOrPos(pos, names...)
	if !ok {
		return "", false, nil
	}
	v, err := e.arg(raw)
	return v, true, err
}

// arg evaluates a cmdlet argument: PowerShell parses barewords there as
// strings (-ItemType Directory), not as commands.
func (e *psEnv) arg(tok string) (string, error) {
	if isBareword(tok) {
		return tok, nil
	}
	return e.value(tok)
}

func isBareword(tok string) bool {
	return tok != "" && !strings.ContainsRune("$'\"(@[", rune(tok[0]))
}

func (e *psEnv) pathArg(a cmdArgs) (string, error) {
	p, ok, err := e.str(a, 0, "path", "literalpath", "lp", "filepath")
	if err != nil {
		return "", err
	}
	if !ok || p == "" {
		return "", &psErr{msg: "Cannot bind argument to parameter 'Path' because it is null."}
	}
	return p, nil
}

func notFound(cmd, p, id string) *psErr {
	return &psErr{
		msg:      fmt.Sprintf("Cannot find path '%s' because it does not exist.", p),
		category: fmt.Sprintf("ObjectNotFound: (%s:String) [%s], ItemNotFoundException", p, cmd),
		id:       "PathNotFound,Microsoft.PowerShell.Commands." + id,
	}
}

// cmdlet runs the first element of a pipeline.
func (e *psEnv) cmdlet(name, display string, a cmdArgs) ([]psObj, error) {
	fs := e.h.fs
	switch name {
	case "write-output", "write-host", "write-information", "write-verbose":
		var out []psObj
		for _, p := range append(a.positional, a.named["object"], a.named["inputobject"], a.named["messagedata"]) {
			if p == "" {
				continue
			}
			if isBareword(p) {
				out = append(out, textObj(p))
				continue
			}
			objs, err := e.expr(p)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		if name == "write-verbose" {
			return nil, nil
		}
		return out, nil

	case "write-error":
		msg, _, err := e.str(a, 0, "message")
		if err != nil {
			return nil, err
		}
		return nil, &psErr{msg: msg, command: "Write-Error",
			category: "NotSpecified: (:) [Write-Error], WriteErrorException",
			id:       "Microsoft.PowerShell.Commands.WriteErrorException"}

	case "hostname":
		return []psObj{textObj(e.h.cfg.ComputerName)}, nil

	case "set-content", "add-content":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		v, _, err := e.str(a, 1, "value")
		if err != nil {
			return nil, err
		}
		if !a.switches["nonewline"] {
			v += "\r\n"
		}
		return nil, fs.WriteFile(p, []byte(v), name == "add-content")

	case "get-content":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		b, rerr := fs.ReadFile(p)
		if rerr != nil {
			return nil, notFound("Get-Content", fs.Clean(p), "GetContentCommand")
		}
		if a.switches["raw"] {
			return []psObj{textObj(strings.TrimSuffix(string(b), "\r\n"))}, nil
		}
		var out []psObj
		for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n") {
			out = append(out, textObj(l))
		}
		return out, nil

	case "new-item", "mkdir":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		if n, ok, _ := e.str(a, 99, "name"); ok {
			p = strings.TrimRight(p, `\/`) + `\` + n
		}
		typ, _, _ := e.str(a, 99, "itemtype", "type")
		exists, _ := fs.Stat(p)
		if name == "mkdir" || strings.EqualFold(typ, "Directory") {
			if exists && !a.switches["force"] {
				return nil, &psErr{msg: fmt.Sprintf("An item with the specified name %s already exists.", fs.Clean(p))}
			}
			return []psObj{textObj(fs.Clean(p))}, fs.MkdirAll(p)
		}
		if exists && !a.switches["force"] {
			return nil, &psErr{msg: fmt.Sprintf("The file '%s' already exists.", fs.Clean(p))}
		}
		v, _, _ := e.str(a, 99, "value")
		return []psObj{textObj(fs.Clean(p))}, fs.WriteFile(p, []byte(v), false)

	case "test-path":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		exists, dir := fs.Stat(p)
		switch t, _, _ := e.str(a, 99, "pathtype"); strings.ToLower(t) {
		case "leaf":
			exists = exists && !dir
		case "container":
			exists = exists && dir
		}
		return []psObj{boolObj(exists)}, nil

	case "remove-item":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		if rerr := fs.Remove(p, a.switches["recurse"] || a.switches["force"]); rerr != nil {
			return nil, notFound("Remove-Item", fs.Clean(p), "RemoveItemCommand")
		}
		return nil, nil

	case "move-item", "copy-item":
		src, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		dst, ok, err := e.str(a, 1, "destination")
		if err != nil || !ok {
			return nil, &psErr{msg: "Cannot bind argument to parameter 'Destination' because it is null."}
		}
		if exists, _ := fs.Stat(src); !exists {
			return nil, notFound(display, fs.Clean(src), "MoveItemCommand")
		}
		if name == "copy-item" {
			return nil, fs.Copy(src, dst)
		}
		if merr := fs.Move(src, dst, a.switches["force"]); merr != nil {
			return nil, &psErr{msg: merr.Error()}
		}
		return nil, nil

	case "get-filehash":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		if alg, _, _ := e.str(a, 99, "algorithm"); alg != "" && !strings.EqualFold(alg, "SHA256") {
			return nil, &psErr{msg: fmt.Sprintf("the simulator only computes SHA256, not %s", alg)}
		}
		f, oerr := fs.Open(p)
		if oerr != nil {
			return nil, notFound("Get-FileHash", fs.Clean(p), "GetFileHashCommand")
		}
		defer f.Close()
		hsh := sha256.New()
		if _, err := io.Copy(hsh, f); err != nil {
			return nil, &psErr{msg: err.Error()}
		}
		sum := strings.ToUpper(hex.EncodeToString(hsh.Sum(nil)))
		return []psObj{{text: "SHA256 " + sum + " " + fs.Clean(p),
			props: map[string]string{"Algorithm": "SHA256", "Hash": sum, "Path": fs.Clean(p)}}}, nil

	case "new-service":
		n, _, _ := e.str(a, 0, "name")
		bin, _, _ := e.str(a, 1, "binarypathname")
		disp, _, _ := e.str(a, 99, "displayname")
		st, _, _ := e.str(a, 99, "startuptype")
		if st == "" {
			st = StartupAutomatic
		}
		if n == "" || bin == "" {
			return nil, &psErr{msg: "New-Service needs -Name and -BinaryPathName"}
		}
		svc := Service{Name: n, DisplayName: disp, BinaryPathName: bin, StartupType: normStartup(st)}
		if err := e.h.svcs.create(svc); err != nil {
			return nil, &psErr{msg: err.Error(), category: "ResourceExists: (" + n + ") [New-Service], InvalidOperationException"}
		}
		s, _ := e.h.svcs.get(n)
		return []psObj{serviceObj(s)}, nil

	case "set-service":
		n, _, _ := e.str(a, 0, "name")
		st, _, _ := e.str(a, 99, "startuptype")
		_, err := e.h.svcs.update(n, func(s *Service) error {
			if st != "" {
				s.StartupType = normStartup(st)
			}
			return nil
		})
		if err != nil {
			return nil, &psErr{msg: err.Error()}
		}
		return nil, nil

	case "start-service", "stop-service", "restart-service":
		n, _, _ := e.str(a, 0, "name")
		var err error
		if name != "start-service" {
			err = e.h.stopService(n)
		}
		if err == nil && name != "stop-service" {
			err = e.h.startService(n)
		}
		if err != nil {
			return nil, &psErr{msg: err.Error()}
		}
		return nil, nil

	case "get-service":
		n, _, _ := e.str(a, 0, "name")
		if n == "" {
			var out []psObj
			for _, s := range e.h.svcs.list() {
				out = append(out, serviceObj(s))
			}
			return out, nil
		}
		s, ok := e.h.svcs.get(n)
		if !ok {
			return nil, &psErr{msg: noService(n).Error(),
				category: fmt.Sprintf("ObjectNotFound: (%s:String) [Get-Service], ServiceCommandException", n),
				id:       "NoServiceFoundForGivenName,Microsoft.PowerShell.Commands.GetServiceCommand"}
		}
		return []psObj{serviceObj(s)}, nil

	case "remove-service":
		n, _, _ := e.str(a, 0, "name")
		if err := e.h.svcs.remove(n); err != nil {
			return nil, &psErr{msg: err.Error()}
		}
		return nil, nil

	case "sc.exe":
		if len(a.positional) >= 2 && strings.EqualFold(a.positional[0], "delete") {
			n, _ := e.arg(a.positional[1]) // a bareword is the service name
			_ = e.h.stopService(n)
			if err := e.h.svcs.remove(n); err != nil {
				return []psObj{textObj("[SC] OpenService FAILED 1060:")}, nil
			}
			return []psObj{textObj("[SC] DeleteService SUCCESS")}, nil
		}
		return nil, nil

	case "restart-computer":
		e.reboot = true
		return nil, nil

	case "stop-computer":
		e.shutdown = true
		return nil, nil

	case "get-itemproperty", "get-itempropertyvalue":
		p, err := e.pathArg(a)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(strings.TrimRight(p, `\`), CurrentVersionKey) {
			return nil, nil // other registry keys: unknown, empty
		}
		props := e.h.currentVersion()
		if name == "get-itempropertyvalue" {
			n, _, _ := e.str(a, 1, "name")
			for k, v := range props {
				if strings.EqualFold(k, n) {
					return []psObj{textObj(v)}, nil
				}
			}
			return nil, &psErr{msg: fmt.Sprintf("Property %s does not exist at path %s.", n, p)}
		}
		return []psObj{{text: "", props: props}}, nil
	}
	// The program first (Start-Process -FilePath), then its arguments: map
	// order would otherwise let an argument pass for the program.
	words := append([]string{display}, a.positional...)
	if fp, ok := a.named["filepath"]; ok {
		words = append(words, fp)
	}
	for _, k := range sortedKeys(a.named) {
		if k != "filepath" {
			words = append(words, a.named[k])
		}
	}
	if ShutdownCommand(words) {
		e.shutdown = true
	}
	if objs, handled, err := e.imageCmdlet(name, a); handled {
		return objs, err
	}
	return nil, nil // not in the contract: recorded by the caller, succeeds
}

func normStartup(s string) string {
	switch strings.ToLower(s) {
	case "manual", "demand":
		return StartupManual
	case "disabled":
		return StartupDisabled
	}
	return StartupAutomatic
}

func serviceObj(s Service) psObj {
	return psObj{
		text: fmt.Sprintf("%-8s %-18s %s", s.Status, s.Name, s.DisplayName),
		props: map[string]string{"Name": s.Name, "DisplayName": s.DisplayName, "Status": s.Status,
			"StartType": s.StartupType, "BinaryPathName": s.BinaryPathName},
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
