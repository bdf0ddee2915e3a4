package controlplane

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BinEnv names a directory holding prebuilt control-plane binaries; when set,
// nothing is built.
const BinEnv = "SANDBOX_CONTROLPLANE_BIN"

// buildScript builds the binaries into a versioned cache directory, relative
// to the repository root.
const buildScript = "tools/controlplane/build.sh"

// Binaries are the control-plane executables.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// ResolveBinaries returns the directory holding the control-plane binaries:
// $SANDBOX_CONTROLPLANE_BIN when set, otherwise the output of build.sh (found
// by walking up from the working directory), which builds them on first use
// and prints the cached directory after that. build.sh's progress is passed to
// logf line by line, since a cold build takes many minutes.
func ResolveBinaries(ctx context.Context, logf func(string, ...any)) (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		return dir, checkBinaries(dir)
	}
	script, err := FindUp(buildScript)
	if err != nil {
		return "", fmt.Errorf("control plane binaries: %s is unset and %w", BinEnv, err)
	}
	cmd := exec.CommandContext(ctx, "bash", script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", fmt.Errorf("control plane binaries: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("control plane binaries: running %s: %w", script, err)
	}
	var tail []string // the last lines, for the error if the build fails
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logf("controlplane build: %s", sc.Text())
		tail = append(tail, sc.Text())
		if len(tail) > logTailLines {
			tail = tail[1:]
		}
	}
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("control plane binaries: %s failed: %w\n%s", script, err, strings.Join(tail, "\n"))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := lines[len(lines)-1]
	return dir, checkBinaries(dir)
}

func checkBinaries(dir string) error {
	for _, name := range Binaries {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("control plane binaries: %w", err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("control plane binaries: %s is not executable", p)
		}
	}
	return nil
}

// FindUp looks for rel in the working directory and each of its parents:
// a tool's build script from a test's package directory.
func FindUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s was not found in the working directory or its parents", rel)
		}
		dir = parent
	}
}
