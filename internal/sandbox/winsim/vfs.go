package winsim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// vfs is the host's virtual Windows filesystem. File contents live on disk under
// <Dir>/fs/<drive letter>/..., so users and tests can look at what the provider
// wrote; lookups are case-insensitive like NTFS, while names keep the case they
// were created with.
type vfs struct {
	root string // <Dir>/fs
	env  map[string]string

	// mu serialises namespace changes (create, rename, delete); file bodies are
	// written without it so a 50 MiB upload does not block other scripts.
	mu sync.Mutex
	// changed is closed (and replaced) at every change: what a
	// FileSystemWatcher waits on.
	changed chan struct{}
	// acls are the security descriptors set on it (acl.go).
	acls *aclStore
}

// Changes returns a channel closed at the next change of the filesystem: a
// file written in full (WriteFile) or opened for writing, renamed or
// removed, a directory created.
func (v *vfs) Changes() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.changed == nil {
		v.changed = make(chan struct{})
	}
	return v.changed
}

func (v *vfs) notify() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.notifyLocked()
}

var errNotFound = errors.New("not found")

// pathError mimics the text PowerShell prints for a missing item.
type pathError struct {
	path string
}

func (e *pathError) Error() string {
	return fmt.Sprintf("Cannot find path '%s' because it does not exist.", e.path)
}

func (e *pathError) Unwrap() error { return errNotFound }

func newVFS(root string, env map[string]string) (*vfs, error) {
	if err := os.MkdirAll(filepath.Join(root, "C"), 0o755); err != nil {
		return nil, fmt.Errorf("creating virtual C: drive: %w", err)
	}
	return &vfs{root: root, env: env, acls: loadACLStore(root)}, nil
}

var (
	cmdEnvRef = regexp.MustCompile(`%([A-Za-z_][A-Za-z0-9_]*)%`)
	psEnvRef  = regexp.MustCompile(`(?i)\$env:([A-Za-z_][A-Za-z0-9_]*)`)
)

func (v *vfs) lookupEnv(name string) (string, bool) {
	for k, val := range v.env {
		if strings.EqualFold(k, name) {
			return val, true
		}
	}
	return "", false
}

// expandCmdEnv replaces %NAME% with the host's environment, as cmd.exe does
// to every command line before running it (unknown names stay as typed).
func (v *vfs) expandCmdEnv(s string) string {
	return cmdEnvRef.ReplaceAllStringFunc(s, func(m string) string {
		if val, ok := v.lookupEnv(m[1 : len(m)-1]); ok {
			return val
		}
		return m
	})
}

// expandCmdEnvFrom is expandCmdEnv with a process's own environment block
// (upper-case names), as cmd.exe started by another process sees it.
func expandCmdEnvFrom(s string, env map[string]string) string {
	return cmdEnvRef.ReplaceAllStringFunc(s, func(m string) string {
		if val, ok := env[strings.ToUpper(m[1:len(m)-1])]; ok {
			return val
		}
		return m
	})
}

// expandEnv replaces %NAME% and $env:NAME with the host's environment, as cmd.exe
// and PowerShell double-quoted strings would.
func (v *vfs) expandEnv(s string) string {
	lookup := v.lookupEnv
	s = v.expandCmdEnv(s)
	return psEnvRef.ReplaceAllStringFunc(s, func(m string) string {
		if val, ok := lookup(m[len("$env:"):]); ok {
			return val
		}
		return m
	})
}

// Clean turns a Windows path (either slash, env references, relative to the
// administrator's profile, "/C:/x" as SFTP sends it) into an absolute "C:\a\b".
func (v *vfs) Clean(p string) string {
	p = strings.TrimSpace(v.expandEnv(p))
	p = strings.ReplaceAll(p, "/", `\`)
	if len(p) >= 3 && p[0] == '\\' && p[2] == ':' {
		p = p[1:] // "\C:\x" from SFTP
	}
	if strings.HasPrefix(strings.ToLower(p), `filesystem::`) {
		p = p[len("filesystem::"):]
	}
	switch {
	case len(p) >= 2 && p[1] == ':':
	case strings.HasPrefix(p, `\`):
		p = "C:" + p
	default:
		p = v.env["USERPROFILE"] + `\` + p
	}
	drive := strings.ToUpper(p[:1])
	var parts []string
	for _, c := range strings.Split(p[2:], `\`) {
		switch c {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, c)
		}
	}
	return drive + `:\` + strings.Join(parts, `\`)
}

// resolve maps a cleaned Windows path to its on-disk path, matching each existing
// component case-insensitively. Missing trailing components keep their case.
func (v *vfs) resolve(win string) string {
	win = v.Clean(win)
	disk := filepath.Join(v.root, win[:1])
	rest := strings.TrimPrefix(win[2:], `\`)
	if rest == "" {
		return disk
	}
	parts := strings.Split(rest, `\`)
	for i, c := range parts {
		next := filepath.Join(disk, c)
		if _, err := os.Lstat(next); err != nil {
			if entries, rerr := os.ReadDir(disk); rerr == nil {
				for _, e := range entries {
					if strings.EqualFold(e.Name(), c) {
						next = filepath.Join(disk, e.Name())
						break
					}
				}
			}
		}
		disk = next
		if _, err := os.Lstat(disk); err != nil {
			return filepath.Join(append([]string{disk}, parts[i+1:]...)...)
		}
	}
	return disk
}

// Stat reports whether path exists and whether it is a directory.
func (v *vfs) Stat(path string) (exists, dir bool) {
	fi, err := os.Stat(v.resolve(path))
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

// ReadFile returns a file's bytes.
func (v *vfs) ReadFile(path string) ([]byte, error) {
	b, err := os.ReadFile(v.resolve(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &pathError{v.Clean(path)}
	}
	return b, err
}

// WriteFile creates or truncates path (creating parents like New-Item -Force).
// Watchers learn of it once the content is there.
func (v *vfs) WriteFile(path string, data []byte, appendTo bool) error {
	f, err := v.openWrite(path, appendTo)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write error is the one to report
		return err
	}
	err = f.Close()
	v.notify()
	return err
}

// OpenWrite opens path for writing, creating missing parent directories.
// Watchers learn of it as it is opened (created), as on Windows.
func (v *vfs) OpenWrite(path string, appendTo bool) (*os.File, error) {
	f, err := v.openWrite(path, appendTo)
	if err == nil {
		v.notify()
	}
	return f, err
}

func (v *vfs) openWrite(path string, appendTo bool) (*os.File, error) {
	v.mu.Lock()
	disk := v.resolve(path)
	err := os.MkdirAll(filepath.Dir(disk), 0o755)
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	flags := os.O_CREATE | os.O_WRONLY
	if appendTo {
		flags |= os.O_APPEND
	} else {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(disk, flags, 0o644)
}

// Open opens path for reading.
func (v *vfs) Open(path string) (*os.File, error) {
	f, err := os.Open(v.resolve(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &pathError{v.Clean(path)}
	}
	return f, err
}

// MkdirAll creates a directory and its parents.
func (v *vfs) MkdirAll(path string) error {
	v.mu.Lock()
	err := os.MkdirAll(v.resolve(path), 0o755)
	v.mu.Unlock()
	v.notify()
	return err
}

// Remove deletes a file or (with recurse) a directory tree.
func (v *vfs) Remove(path string, recurse bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	disk := v.resolve(path)
	if _, err := os.Lstat(disk); err != nil {
		return &pathError{v.Clean(path)}
	}
	defer v.notifyLocked()
	// What was set on the deleted objects goes with them.
	v.acls.forget(v.Clean(path), "")
	if recurse {
		return os.RemoveAll(disk)
	}
	return os.Remove(disk)
}

// notifyLocked is notify with mu held.
func (v *vfs) notifyLocked() {
	if v.changed != nil {
		close(v.changed)
		v.changed = nil
	}
}

// Move renames src to dst; with force an existing dst file is replaced.
func (v *vfs) Move(src, dst string, force bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	from := v.resolve(src)
	if _, err := os.Lstat(from); err != nil {
		return &pathError{v.Clean(src)}
	}
	to := v.resolve(dst)
	if fi, err := os.Stat(to); err == nil {
		if fi.IsDir() {
			to = filepath.Join(to, filepath.Base(from))
		} else if !force {
			return fmt.Errorf("Cannot create a file when that file already exists.")
		}
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	defer v.notifyLocked()
	// A moved object inherits from its new place (the simulator does not
	// keep explicit ACEs across a move, as Windows does within a volume).
	v.acls.forget(v.Clean(src), "")
	return os.Rename(from, to)
}

// Copy copies a file.
func (v *vfs) Copy(src, dst string) error {
	in, err := v.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only
	if exists, dir := v.Stat(dst); exists && dir {
		dst = v.Clean(dst) + `\` + filepath.Base(in.Name())
	}
	out, err := v.openWrite(dst, false)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close() // the copy error is the one to report
		return err
	}
	err = out.Close()
	v.notify()
	return err
}

// List returns the names in a directory (for SFTP and Get-ChildItem).
func (v *vfs) List(path string) ([]fs.FileInfo, error) {
	entries, err := os.ReadDir(v.resolve(path))
	if err != nil {
		return nil, &pathError{v.Clean(path)}
	}
	out := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}
