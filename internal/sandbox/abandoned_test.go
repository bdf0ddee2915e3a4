package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestRemoveAbandoned: a sandbox directory whose owner has exited is
// removed; one whose owner runs, one without an owner file and anything
// not named like a sandbox stay.
func TestRemoveAbandoned(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc")
	}
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	mk := func(name string, owner int) string {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != 0 {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	abandoned := mk(dirPrefix+"1", exited.Process.Pid)
	running := mk(dirPrefix+"2", os.Getpid())
	creating := mk(dirPrefix+"3", 0)
	other := mk("other-1", exited.Process.Pid)

	removed, err := removeAbandoned(parent)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{abandoned}) {
		t.Errorf("removed %v, want only %s", removed, abandoned)
	}
	for _, dir := range []string{running, creating, other} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: %v, want it kept", dir, err)
		}
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", abandoned, err)
	}
}
