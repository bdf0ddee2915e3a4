package vmtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files of a host directory.
const (
	ownerFile = "vm.json"    // which VM the directory belongs to
	destroyed = ".destroyed" // where destroyed VMs' directories go
)

// diskEntries are what a clone copies of its source's directory: the disk
// (fs/, with the SSH host keys under C:\ProgramData\ssh, as a real clone
// keeps them), the registry (the services are there), the WinRM listeners
// with the HTTPS certificate and its key (winsim.Install's listeners.json),
// the machine's certificate store with its private keys (certstore.json:
// a template's keys are every clone's), the firewall's rules, the installed updates (servicing.json) and, from disks written before the registry, the
// service table. Logs and ownership stay behind.
var diskEntries = []string{"fs", "registry.json", "services.json", "features.json", "listeners.json", "certstore.json", "firewall.json", "servicing.json"}

type owner struct {
	VM       string    `json:"vm"` // managed object id
	Computer string    `json:"computer"`
	Created  time.Time `json:"created"`
}

// prepareDisk settles a VM's directory at boot: <Dir>/<computer name>,
// claimed for this VM (another VM's leftover directory is retired first),
// and at a clone's first boot filled with a copy of its source's disk.
func (h *Hosts) prepareDisk(st *vmState) error {
	want := filepath.Join(h.Dir, st.computer)
	if st.dir == want {
		return nil
	}
	h.mu.Lock()
	var srcDir string
	if src := h.vms[st.source]; src != nil && !st.booted {
		srcDir = src.dir
	}
	inUse := false
	for _, other := range h.vms {
		if other != st && other.dir == want {
			inUse = true
		}
	}
	h.mu.Unlock()
	if inUse {
		// Two VMs with one computer name: keep them apart.
		want = filepath.Join(h.Dir, st.computer+"-"+st.ref.Value)
	}
	if st.dir != "" && st.booted {
		// Renamed by a new customization: the disk moves along.
		if err := os.Rename(st.dir, want); err != nil {
			return fmt.Errorf("moving the disk to %s: %w", want, err)
		}
		h.setDir(st, want)
		return writeOwner(want, st)
	}
	if o, err := readOwner(want); err == nil && o.VM != st.ref.Value {
		if err := retire(h.Dir, want); err != nil {
			return err
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if err := retire(h.Dir, want); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(want, 0o755); err != nil {
		return err
	}
	if srcDir != "" {
		for _, e := range diskEntries {
			if err := copyTree(filepath.Join(srcDir, e), filepath.Join(want, e)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("copying the disk of the clone source: %w", err)
			}
		}
	}
	h.setDir(st, want)
	return writeOwner(want, st)
}

// setDir records a VM's directory. Only the VM's own serial goroutine writes
// it (and reads it unlocked), but the others read it under h.mu to keep
// their directories apart (prepareDisk): the write holds h.mu too. The race
// detector found this in the 20-node apply (internal/leakcheck).
func (h *Hosts) setDir(st *vmState, dir string) {
	h.mu.Lock()
	st.dir = dir
	h.mu.Unlock()
}

func readOwner(dir string) (owner, error) {
	var o owner
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return o, fs.ErrNotExist
		}
		return o, fmt.Errorf("%s has no %s: %w", dir, ownerFile, err)
	}
	return o, json.Unmarshal(b, &o)
}

func writeOwner(dir string, st *vmState) error {
	b, _ := json.MarshalIndent(owner{VM: st.ref.Value, Computer: st.computer, Created: time.Now().UTC()}, "", "  ")
	return os.WriteFile(filepath.Join(dir, ownerFile), b, 0o644)
}

// retire moves a host directory to <root>/.destroyed/<name>-<time>, keeping
// its logs for a look while freeing the name.
func retire(root, dir string) error {
	dst := filepath.Join(root, destroyed, fmt.Sprintf("%s-%s", filepath.Base(dir), time.Now().UTC().Format("20060102T150405.000000000")))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Rename(dir, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("retiring %s: %w", dir, err)
	}
	return nil
}

// copyTree copies a file or directory tree.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close() // the copy's error is the one to report
		return err
	}
	return out.Close()
}
