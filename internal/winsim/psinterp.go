package winsim

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// psObj is a pipeline object: its display text plus named properties.
type psObj struct {
	text  string
	props map[string]string
}

func textObj(s string) psObj { return psObj{text: s} }

func (o psObj) prop(name string) (string, bool) {
	for k, v := range o.props {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// psErr is an error record. Non-terminating errors set $? and continue;
// terminating ones (throw, -ErrorAction Stop) end the script with exit code 1.
type psErr struct {
	msg         string
	command     string // cmdlet that failed, "" for throw
	category    string
	id          string
	statement   string
	terminating bool
}

func (e *psErr) Error() string { return e.msg }

// format renders the record as powershell.exe prints it on stderr.
func (e *psErr) format() string {
	var b strings.Builder
	if e.command != "" {
		fmt.Fprintf(&b, "%s : %s\r\n", e.command, e.msg)
	} else {
		fmt.Fprintf(&b, "%s\r\n", e.msg)
	}
	stmt := e.statement
	if len(stmt) > 120 {
		stmt = stmt[:120] + "..."
	}
	fmt.Fprintf(&b, "At line:1 char:1\r\n+ %s\r\n", stmt)
	cat, id := e.category, e.id
	if cat == "" {
		cat = "NotSpecified: (:) [], RuntimeException"
	}
	if id == "" {
		id = e.msg
	}
	fmt.Fprintf(&b, "    + CategoryInfo          : %s\r\n    + FullyQualifiedErrorId : %s\r\n \r\n", cat, id)
	return b.String()
}

// psExit carries `exit N` out of nested blocks.
type psExit struct{ code int }

func (e *psExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// psEnv is one script execution.
type psEnv struct {
	h      *Host
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	clixml bool // -EncodedCommand: error records go to stderr as CLIXML at the end
	errs   []*psErr
	vars   map[string]string
	stop   bool // $ErrorActionPreference = 'Stop'
	reboot bool // Restart-Computer ran
	// shutdown: Stop-Computer, shutdown.exe /s or sysprep.exe /shutdown ran
	shutdown bool
}

func newPSEnv(ctx context.Context, h *Host, stdin io.Reader, stdout, stderr io.Writer, clixml bool) *psEnv {
	return &psEnv{h: h, ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, clixml: clixml, vars: map[string]string{}}
}

// addErr records an error: printed now in plain mode, kept for the CLIXML
// document otherwise.
func (e *psEnv) addErr(pe *psErr) {
	if pe.id == "silent" {
		return
	}
	if e.clixml {
		e.errs = append(e.errs, pe)
		return
	}
	io.WriteString(e.stderr, pe.format())
}

// finish writes the collected error records as powershell.exe does when its
// output is redirected: one CLIXML document on stderr.
func (e *psEnv) finish() {
	if e.clixml && len(e.errs) > 0 {
		io.WriteString(e.stderr, encodeCLIXML(e.errs))
	}
}

// run executes a script and returns its exit code. fileMode is powershell -File:
// a failing last statement does not make the exit code non-zero there.
func (e *psEnv) run(script string, fileMode bool) int {
	if m := StdinUploadRE.FindStringSubmatch(script); m != nil {
		return e.stdinUpload(unquoteSingle("'" + m[1] + "'"))
	}
	if m := WinrmcpRestoreRE.FindStringSubmatch(script); m != nil {
		return e.winrmcpRestore(m[1], strings.Trim(m[2], "'"))
	}
	failed, err := e.block(splitStatements(script))
	switch err := err.(type) {
	case nil:
	case *psExit:
		return err.code
	default:
		return 1
	}
	if failed && !fileMode {
		return 1
	}
	return 0
}

// block runs statements; it reports whether the last one failed, and returns
// a *psExit or terminating *psErr that ends the script.
func (e *psEnv) block(stmts []string) (lastFailed bool, _ error) {
	for _, s := range stmts {
		if err := e.ctx.Err(); err != nil {
			return true, &psExit{code: 1}
		}
		objs, err := e.stmt(s)
		e.emit(objs)
		if err == nil {
			lastFailed = false
			continue
		}
		if x, ok := err.(*psExit); ok {
			return false, x
		}
		pe, ok := err.(*psErr)
		if !ok {
			pe = &psErr{msg: err.Error()}
		}
		if pe.statement == "" {
			pe.statement = s
		}
		if pe.id == "silent" {
			lastFailed = true
			continue
		}
		e.addErr(pe)
		if pe.terminating || e.stop {
			pe.terminating = true
			return true, pe
		}
		lastFailed = true
	}
	return lastFailed, nil
}

func (e *psEnv) emit(objs []psObj) {
	for _, o := range objs {
		io.WriteString(e.stdout, o.text+"\r\n")
	}
}

var (
	assignRE  = regexp.MustCompile(`^\$([\w:]+)\s*=\s*([^=].*)$`)
	exitRE    = regexp.MustCompile(`(?i)^exit(?:\s+(.+))?$`)
	throwRE   = regexp.MustCompile(`(?i)^throw(?:\s+(.+))?$`)
	fullPath  = regexp.MustCompile(`(?i)^\[(?:System\.)?IO\.Path\]::GetFullPath\(\s*` + psArg + `\s*\)$`)
	propRE    = regexp.MustCompile(`^((?:\.[A-Za-z_]\w*)+)$`)
	numberRE  = regexp.MustCompile(`^-?\d+$`)
	keywordRE = regexp.MustCompile(`(?i)^(if|elseif|else|try|catch|finally)\b`)
)

func (e *psEnv) stmt(s string) ([]psObj, error) {
	s = strings.TrimSpace(s)
	if kw := keywordRE.FindString(s); kw != "" {
		switch strings.ToLower(kw) {
		case "if":
			return e.ifStmt(s)
		case "try":
			return e.tryStmt(s)
		}
	}
	if m := exitRE.FindStringSubmatch(s); m != nil {
		code := 0
		if m[1] != "" {
			v, err := e.value(m[1])
			if err != nil {
				return nil, err
			}
			code, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		return nil, &psExit{code: code}
	}
	if m := throwRE.FindStringSubmatch(s); m != nil {
		msg := "ScriptHalted"
		if m[1] != "" {
			msg, _ = e.value(m[1])
		}
		return nil, &psErr{msg: msg, terminating: true, statement: s,
			category: fmt.Sprintf("OperationStopped: (%s:String) [], RuntimeException", msg)}
	}
	if m := assignRE.FindStringSubmatch(s); m != nil {
		return nil, e.assign(m[1], m[2])
	}
	if objs, ok, err := e.dotnet(s); ok {
		return objs, err
	}
	switch s[0] {
	case '(', '$', '\'', '"':
		return e.expr(s)
	}
	return e.pipeline(s)
}

func (e *psEnv) assign(name, rhs string) error {
	objs, err := e.expr(strings.TrimSpace(rhs))
	if err != nil {
		return err
	}
	val := ""
	if len(objs) > 0 {
		val = objs[0].text
	}
	switch strings.ToLower(name) {
	case "erroractionpreference":
		e.stop = strings.EqualFold(val, "Stop")
	}
	e.vars[strings.ToLower(name)] = val
	return nil
}

// expr evaluates an expression: a literal, a variable, a bracketed statement
// with optional .Property access, or a statement.
func (e *psEnv) expr(s string) ([]psObj, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	switch {
	case s[0] == '(':
		end := closing(s, 0)
		if end < 0 {
			return nil, &psErr{msg: "Missing closing ')' in expression.", statement: s}
		}
		rest := s[end+1:]
		if rest != "" && !propRE.MatchString(rest) {
			break
		}
		objs, err := e.stmt(s[1:end])
		if err != nil || rest == "" {
			return objs, err
		}
		for _, p := range strings.Split(rest[1:], ".") {
			var next []psObj
			for _, o := range objs {
				if v, ok := o.prop(p); ok {
					next = append(next, textObj(v))
				} else if strings.EqualFold(p, "Length") || strings.EqualFold(p, "Count") {
					next = append(next, textObj(strconv.Itoa(len(o.text))))
				}
			}
			objs = next
		}
		return objs, nil
	case s[0] == '\'' && closing2(s) == len(s)-1:
		return []psObj{textObj(unquoteSingle(s))}, nil
	case s[0] == '"' && closing2(s) == len(s)-1:
		return []psObj{textObj(e.expandDouble(s[1 : len(s)-1]))}, nil
	case s[0] == '$' && !strings.ContainsAny(s, " \t"):
		return e.variable(s[1:])
	case numberRE.MatchString(s):
		return []psObj{textObj(s)}, nil
	}
	if objs, ok, err := e.dotnet(s); ok {
		return objs, err
	}
	if objs, ok, err := e.concat(s); ok {
		return objs, err
	}
	if strings.ContainsRune("('\"$", rune(s[0])) {
		// stmt would hand it back here: an expression shape we do not know.
		return nil, &psErr{msg: fmt.Sprintf("Unexpected token in expression or statement: %s", s), statement: s, terminating: true}
	}
	return e.stmt(s)
}

// concat evaluates "<expr> + <expr> ...": numbers add, anything else
// concatenates as strings (the left operand is a string in our scripts).
func (e *psEnv) concat(s string) ([]psObj, bool, error) {
	toks := tokens(s)
	var parts []string
	start := 0
	for i, t := range toks {
		if t == "+" {
			parts = append(parts, strings.Join(toks[start:i], " "))
			start = i + 1
		}
	}
	if len(parts) == 0 {
		return nil, false, nil
	}
	parts = append(parts, strings.Join(toks[start:], " "))
	vals := make([]string, len(parts))
	numeric := true
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			return nil, true, &psErr{msg: "You must provide a value expression following the '+' operator.", statement: s, terminating: true}
		}
		v, err := e.value(p)
		if err != nil {
			return nil, true, err
		}
		vals[i] = v
		if !numberRE.MatchString(strings.TrimSpace(v)) {
			numeric = false
		}
	}
	if numeric {
		sum := 0
		for _, v := range vals {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			sum += n
		}
		return []psObj{textObj(strconv.Itoa(sum))}, true, nil
	}
	return []psObj{textObj(strings.Join(vals, ""))}, true, nil
}

// closing2 returns where a quoted literal starting at s[0] ends.
func closing2(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '\'' && s[i] == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i
		case q == '"' && s[i] == '`':
			i++
		case q == '"' && s[i] == '"':
			return i
		}
	}
	return -1
}

func (e *psEnv) variable(name string) ([]psObj, error) {
	lower := strings.ToLower(name)
	switch {
	case lower == "true":
		return []psObj{textObj("True")}, nil
	case lower == "false":
		return []psObj{textObj("False")}, nil
	case lower == "null":
		return nil, nil
	case strings.HasPrefix(lower, "env:"):
		v := e.h.fs.expandEnv("$" + name)
		if strings.HasPrefix(v, "$") {
			return nil, nil
		}
		return []psObj{textObj(v)}, nil
	}
	if v, ok := e.vars[lower]; ok {
		return []psObj{textObj(v)}, nil
	}
	return nil, nil
}

var dqVarRE = regexp.MustCompile(`\$(?:\{([^}]+)\}|([A-Za-z_][\w]*(?::[A-Za-z_]\w*)?))`)

// expandDouble expands a double-quoted string body: variables and backtick escapes.
func (e *psEnv) expandDouble(s string) string {
	s = dqVarRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := dqVarRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		objs, _ := e.variable(name)
		if len(objs) == 0 {
			return ""
		}
		return objs[0].text
	})
	r := strings.NewReplacer("`n", "\n", "`r", "\r", "`t", "\t", "`0", "\x00", "``", "`", "`\"", "\"", "`$", "$", "\"\"", "\"")
	return r.Replace(s)
}

// value evaluates an argument to a single string.
func (e *psEnv) value(s string) (string, error) {
	objs, err := e.expr(s)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.text
	}
	return strings.Join(parts, "\r\n"), nil
}

// dotnet runs the .NET call shapes listed in effects.go.
func (e *psEnv) dotnet(s string) ([]psObj, bool, error) {
	if !strings.HasPrefix(s, "[") {
		return nil, false, nil
	}
	arg := func(m []string, i int) string {
		v, _ := e.value(m[i])
		return v
	}
	fs := e.h.fs
	switch {
	case WriteAllBytesRE.MatchString(s):
		m := WriteAllBytesRE.FindStringSubmatch(s)
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(arg(m, 2)))
		if err != nil {
			return nil, true, &psErr{msg: `Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid Base-64 string"`}
		}
		return nil, true, fs.WriteFile(arg(m, 1), data, false)
	case WriteAllTextRE.MatchString(s):
		m := WriteAllTextRE.FindStringSubmatch(s)
		return nil, true, fs.WriteFile(arg(m, 1), []byte(arg(m, 2)), false)
	case FileExistsRE.MatchString(s):
		exists, dir := fs.Stat(arg(FileExistsRE.FindStringSubmatch(s), 1))
		return []psObj{boolObj(exists && !dir)}, true, nil
	case CreateDirectoryRE.MatchString(s):
		p := arg(CreateDirectoryRE.FindStringSubmatch(s), 1)
		return nil, true, fs.MkdirAll(p)
	case OSVersionRE.MatchString(s):
		return []psObj{textObj(e.h.cfg.WindowsBuild + ".0")}, true, nil
	case MachineNameRE.MatchString(s):
		return []psObj{textObj(e.h.cfg.ComputerName)}, true, nil
	case ConsoleWriteRE.MatchString(s):
		m := ConsoleWriteRE.FindStringSubmatch(s)
		if strings.EqualFold(m[1], "Out") {
			return []psObj{textObj(arg(m, 2))}, true, nil
		}
		// A plain stderr line, not an error record: no CLIXML, $? unchanged.
		io.WriteString(e.stderr, arg(m, 2)+"\r\n")
		return nil, true, nil
	case fullPath.MatchString(s):
		return []psObj{textObj(fs.Clean(arg(fullPath.FindStringSubmatch(s), 1)))}, true, nil
	}
	return nil, false, nil
}

func boolObj(b bool) psObj {
	if b {
		return textObj("True")
	}
	return textObj("False")
}

// ifStmt runs if/elseif/else.
func (e *psEnv) ifStmt(s string) ([]psObj, error) {
	rest := s
	for {
		lower := strings.ToLower(rest)
		var hasCond bool
		switch {
		case strings.HasPrefix(lower, "elseif"):
			rest, hasCond = strings.TrimSpace(rest[6:]), true
		case strings.HasPrefix(lower, "if"):
			rest, hasCond = strings.TrimSpace(rest[2:]), true
		case strings.HasPrefix(lower, "else"):
			rest = strings.TrimSpace(rest[4:])
		default:
			return nil, &psErr{msg: "Unexpected token in if statement.", statement: s}
		}
		take := true
		if hasCond {
			if !strings.HasPrefix(rest, "(") {
				return nil, &psErr{msg: "Missing '(' after 'if' in if statement.", statement: s}
			}
			end := closing(rest, 0)
			if end < 0 {
				return nil, &psErr{msg: "Missing closing ')' after expression in 'if' statement.", statement: s}
			}
			var err error
			if take, err = e.cond(rest[1:end]); err != nil {
				return nil, err
			}
			rest = strings.TrimSpace(rest[end+1:])
		}
		if !strings.HasPrefix(rest, "{") {
			return nil, &psErr{msg: "Missing statement block in if statement.", statement: s}
		}
		end := closing(rest, 0)
		if end < 0 {
			return nil, &psErr{msg: "Missing closing '}' in statement block.", statement: s}
		}
		if take {
			_, err := e.block(splitStatements(rest[1:end]))
			return nil, err
		}
		rest = strings.TrimSpace(rest[end+1:])
		if rest == "" {
			return nil, nil
		}
	}
}

// tryStmt runs try { } [catch { }] [finally { }].
func (e *psEnv) tryStmt(s string) ([]psObj, error) {
	blocks := map[string]string{}
	rest := s
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		kw := strings.ToLower(strings.Fields(rest[:i] + " x")[0])
		end := closing(rest, i)
		if end < 0 {
			return nil, &psErr{msg: "Missing closing '}' in statement block.", statement: s}
		}
		blocks[kw] = rest[i+1 : end]
		rest = strings.TrimSpace(rest[end+1:])
	}
	saved := e.stop
	e.stop = true // errors inside try are caught, as with -ErrorAction Stop
	_, err := e.block(splitStatements(blocks["try"]))
	e.stop = saved
	if pe, ok := err.(*psErr); ok {
		if body, has := blocks["catch"]; has {
			if e.clixml && len(e.errs) > 0 {
				e.errs = e.errs[:len(e.errs)-1] // caught: not reported
			}
			e.vars["_"] = pe.msg
			_, err = e.block(splitStatements(body))
		}
	}
	if body, has := blocks["finally"]; has {
		if _, ferr := e.block(splitStatements(body)); ferr != nil && err == nil {
			err = ferr
		}
	}
	return nil, err
}

// cond evaluates an if condition: -not/!, -and/-or, -eq/-ne/-like/-notlike/-match
// between expressions, or the truth of one expression or statement.
func (e *psEnv) cond(s string) (bool, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "-not ") || strings.HasPrefix(lower, "-not(") {
		v, err := e.cond(s[4:])
		return !v, err
	}
	if strings.HasPrefix(s, "!") {
		v, err := e.cond(s[1:])
		return !v, err
	}
	toks := tokens(s)
	for i, t := range toks {
		switch strings.ToLower(t) {
		case "-and", "-or":
			l, err := e.cond(strings.Join(toks[:i], " "))
			if err != nil {
				return false, err
			}
			if strings.EqualFold(t, "-and") && !l {
				return false, nil
			}
			if strings.EqualFold(t, "-or") && l {
				return true, nil
			}
			return e.cond(strings.Join(toks[i+1:], " "))
		}
	}
	for i, t := range toks {
		op := strings.ToLower(t)
		switch op {
		case "-eq", "-ne", "-like", "-notlike", "-match", "-notmatch", "-ieq", "-ine":
			l, err := e.value(strings.Join(toks[:i], " "))
			if err != nil {
				return false, err
			}
			r, err := e.value(strings.Join(toks[i+1:], " "))
			if err != nil {
				return false, err
			}
			switch op {
			case "-eq", "-ieq":
				return strings.EqualFold(l, r), nil
			case "-ne", "-ine":
				return !strings.EqualFold(l, r), nil
			case "-like", "-notlike":
				ok, _ := path.Match(strings.ToLower(r), strings.ToLower(l))
				return ok == (op == "-like"), nil
			default:
				re, err := regexp.Compile("(?i)" + r)
				if err != nil {
					return false, &psErr{msg: err.Error()}
				}
				return re.MatchString(l) == (op == "-match"), nil
			}
		}
	}
	objs, err := e.expr(s)
	if err != nil {
		// A failing command in a condition is false, with its error reported.
		if pe, ok := err.(*psErr); ok && !pe.terminating {
			e.addErr(pe)
			return false, nil
		}
		return false, err
	}
	return truthy(objs), nil
}

func truthy(objs []psObj) bool {
	if len(objs) == 0 {
		return false
	}
	if len(objs) > 1 {
		return true
	}
	switch strings.ToLower(objs[0].text) {
	case "", "false", "0":
		return false
	}
	return true
}

// stdinUpload is the StdinUploadRE shape: decode base64 lines from stdin into dest.
func (e *psEnv) stdinUpload(dest string) int {
	f, err := e.h.fs.OpenWrite(dest, false)
	if err != nil {
		e.addErr(&psErr{msg: err.Error()})
		return 1
	}
	defer f.Close()
	r := bufio.NewReaderSize(e.stdin, 256<<10)
	buf := make([]byte, 0, 256<<10)
	for {
		line, rerr := r.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			// A line longer than the buffer: collect it whole.
			full := append([]byte(nil), line...)
			for rerr == bufio.ErrBufferFull {
				line, rerr = r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		text := strings.TrimSpace(string(line))
		if text != "" {
			n := base64.StdEncoding.DecodedLen(len(text))
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			m, derr := base64.StdEncoding.Decode(buf[:n], []byte(text))
			if derr != nil {
				e.addErr(&psErr{msg: `Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid Base-64 string as it contains a non-base 64 character."`})
				return 1
			}
			if _, werr := f.Write(buf[:m]); werr != nil {
				e.addErr(&psErr{msg: werr.Error()})
				return 1
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				return 0
			}
			e.addErr(&psErr{msg: rerr.Error()})
			return 1
		}
	}
}

// winrmcpRestore is the WinrmcpRestoreRE shape: base64 lines of tmp into dest.
func (e *psEnv) winrmcpRestore(tmp, dest string) int {
	fs := e.h.fs
	tmp = fs.Clean(tmp)
	dest = fs.Clean(dest)
	if exists, dir := fs.Stat(dest); exists && dir {
		return 1
	}
	data, err := fs.ReadFile(tmp)
	if err != nil {
		return boolExit(fs.WriteFile(dest, nil, false) != nil)
	}
	var out []byte
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(line)
		if err != nil {
			e.addErr(&psErr{msg: `Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid Base-64 string"`})
			return 1
		}
		out = append(out, b...)
	}
	if err := fs.WriteFile(dest, out, false); err != nil {
		e.addErr(&psErr{msg: err.Error()})
		return 1
	}
	return 0
}

func boolExit(failed bool) int {
	if failed {
		return 1
	}
	return 0
}
