package pwsh

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
)

// fakeHost is an in-memory host for the engine's unit tests.
type fakeHost struct {
	env     map[string]string
	machine map[string]string
	files   map[string][]byte
	dirs    map[string]bool
	// natives: lower-case base name -> program (args, stdout, stderr) -> exit code
	natives map[string]func(args []string, stdout, stderr io.Writer) int
}

func newFakeHost() *fakeHost {
	return &fakeHost{env: map[string]string{"COMPUTERNAME": "WIN-FAKE"}, machine: map[string]string{},
		files: map[string][]byte{}, dirs: map[string]bool{`c:\`: true},
		natives: map[string]func([]string, io.Writer, io.Writer) int{
			"cmd.exe": func(args []string, stdout, stderr io.Writer) int {
				// cmd /c exit N ; cmd /c echo x ; cmd /c "echo x 1>&2"
				line := strings.Join(args[1:], " ")
				switch {
				case strings.HasPrefix(line, "exit "):
					n := 0
					for _, c := range line[5:] {
						n = n*10 + int(c-'0')
					}
					return n
				case strings.HasSuffix(line, "1>&2"):
					_, _ = io.WriteString(stderr, strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "echo "), "1>&2"))+"\r\n")
					return 0
				case strings.HasPrefix(line, "echo "):
					_, _ = io.WriteString(stdout, line[5:]+"\r\n")
				}
				return 0
			},
		}}
}

func key(p string) string { return strings.ToLower(strings.TrimRight(p, `\`)) }

func (h *fakeHost) Getenv(n string) (string, bool) { v, ok := h.env[strings.ToUpper(n)]; return v, ok }
func (h *fakeHost) Setenv(n, v string)             { h.env[strings.ToUpper(n)] = v }
func (h *fakeHost) GetMachineEnv(n string) (string, bool) {
	v, ok := h.machine[strings.ToUpper(n)]
	return v, ok
}
func (h *fakeHost) SetMachineEnv(n, v string) error { h.machine[strings.ToUpper(n)] = v; return nil }
func (h *fakeHost) Stat(p string) (bool, bool) {
	if h.dirs[key(p)] || h.dirs[key(p)+`\`] {
		return true, true
	}
	_, ok := h.files[key(p)]
	return ok, false
}
func (h *fakeHost) ReadFile(p string) ([]byte, error) {
	b, ok := h.files[key(p)]
	if !ok {
		return nil, errors.New("not found")
	}
	return b, nil
}
func (h *fakeHost) WriteFile(p string, b []byte, appendTo bool) error {
	if appendTo {
		b = append(append([]byte{}, h.files[key(p)]...), b...)
	}
	h.files[key(p)] = b
	return nil
}

type fakeFile struct {
	bytes.Buffer
	h *fakeHost
	p string
}

func (f *fakeFile) Close() error { f.h.files[key(f.p)] = f.Bytes(); return nil }

func (h *fakeHost) Create(p string) (io.WriteCloser, error) {
	h.files[key(p)] = nil
	return &fakeFile{h: h, p: p}, nil
}
func (h *fakeHost) MkdirAll(p string) error  { h.dirs[key(p)] = true; return nil }
func (h *fakeHost) FullPath(p string) string { return p }
func (h *fakeHost) ComputerName() string     { return "WIN-FAKE" }
func (h *fakeHost) OSVersion() string        { return "10.0.20348.0" }
func (h *fakeHost) ResolveNative(name string) (string, bool) {
	base := strings.ToLower(name[strings.LastIndexAny(name, `\/`)+1:])
	if !strings.HasSuffix(base, ".exe") {
		base += ".exe"
	}
	if _, ok := h.natives[base]; ok {
		return `C:\Windows\System32\` + base, true
	}
	if _, ok := h.files[key(name)]; ok {
		return name, true
	}
	return "", false
}
func (h *fakeHost) RunNative(ctx context.Context, n *NativeRun) (int, error) {
	base := strings.ToLower(n.Path[strings.LastIndexAny(n.Path, `\/`)+1:])
	p, ok := h.natives[base]
	if !ok {
		return 0, errors.New("The specified executable is not a valid application for this OS platform.")
	}
	return p(n.Args, n.Stdout, n.Stderr), nil
}
