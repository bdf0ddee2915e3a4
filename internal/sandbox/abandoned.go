package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A sandbox in a directory of its own (Options.Dir empty) removes it when it
// stops; a test binary killed first (its timeout, a second Ctrl-C) leaves it
// behind: etcd's data, the logs and the hosts' disks, 120 to 190 MB each
// (measured: 17 of them from one day's interrupted runs took 2.6 GB). Its
// components die with it (Pdeathsig), its directory does not, so each new
// sandbox removes the directories whose owner has exited.
const (
	dirPrefix = "windows-sandbox-"
	// ownerFile holds the process ID of the sandbox's owner.
	ownerFile = "owner.pid"
)

// writeOwner records this process as the owner of dir.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// removeAbandoned removes the sandbox directories under parent whose owner
// has exited, and returns them. A directory without an owner file (one being
// created, or of an older layout) is left alone, as is every directory where
// /proc cannot tell whether a process runs (not Linux).
func removeAbandoned(parent string) (removed []string, err error) {
	if _, err := os.Stat("/proc/self"); err != nil {
		return nil, nil
	}
	dirs, err := filepath.Glob(filepath.Join(parent, dirPrefix+"*"))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, fs.ErrNotExist) {
			continue // its owner runs (or a process that took its ID does)
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
