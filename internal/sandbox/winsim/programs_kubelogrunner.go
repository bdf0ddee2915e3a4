package winsim

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// kube-log-runner.exe (k8s.io/component-base/logs/kube-log-runner, shipped in
// the Kubernetes release for Windows): "Windows services don't have a
// mechanism for redirecting output of a process", so kubernetes-sigs/
// image-builder (roles/kubernetes/tasks/sc.yml, default since 98cbbbfe) makes
// it the kubelet service's binary:
//
//	"C:\k\kube-log-runner.exe" --log-file=C:\var\log\kubelet\kubelet.log C:\k\kubelet.exe --windows-service ...
//
// Modelled on the v1.36.3 source (kube-log-runner.go, internal/logrotation):
// Go flag parsing (the flags end at the first non-flag argument, the
// program to run); -log-file opened with O_APPEND|O_CREATE, so a missing
// directory fails the start ("failed to create log file ..."); the child's
// stdout, and stderr unless -redirect-stderr=false, go to the file;
// -log-file-size rotates the file to <name>-<20060102-150405><ext> when it
// reaches the size; -also-stdout copies to its own stdout. It is not a
// service program itself: the child (kubelet --windows-service) reports to
// the service control manager, which is why the process tree works as a
// service at all. It exits 1 (log.Fatal) when the child cannot start or
// exits non-zero, 0 when the child exits 0.
func init() { registerProgram("kube-log-runner", SubsystemConsole, runKubeLogRunner) }

const kubeLogRunnerTimeLayout = "20060102-150405"

func runKubeLogRunner(ctx context.Context, p *Process) int {
	fatal := func(format string, args ...any) int {
		// log.Fatal: the standard logger's timestamp, then exit 1.
		fmt.Fprintf(p.Stderr, "%s %s\r\n", time.Now().Format("2006/01/02 15:04:05"), fmt.Sprintf(format, args...))
		return 1
	}
	fs := flag.NewFlagSet("kube-log-runner", flag.ContinueOnError)
	fs.SetOutput(p.Stderr)
	size := &resource.QuantityValue{}
	fs.Duration("flush-interval", 0, "")
	logFile := fs.String("log-file", "", "")
	fs.Var(size, "log-file-size", "")
	age := fs.Duration("log-file-age", 0, "")
	alsoStdout := fs.Bool("also-stdout", false, "")
	redirectStderr := fs.Bool("redirect-stderr", true, "")
	if err := fs.Parse(p.Args); err != nil {
		return 2 // flag.ExitOnError's exit code for the program's own FlagSet
	}
	args := fs.Args()
	if len(args) == 0 {
		return fatal("not enough arguments to run")
	}
	if size.Value() < 0 {
		return fatal("log-file-size must be non-negative quantity")
	}
	if *age < 0 {
		return fatal("log-file-age must be non-negative")
	}
	out, errOut := p.Stdout, p.Stderr
	if *logFile != "" {
		f, err := openRotatingLog(p.Host, *logFile, size.Value())
		if err != nil {
			return fatal("failed to create log file %v: %v", *logFile, err)
		}
		defer func() { _ = f.Close() }() // the program is exiting; its log has no one to report to
		out = f
		if *alsoStdout {
			out = io.MultiWriter(p.Stdout, f)
		}
	}
	if *redirectStderr {
		errOut = out
	}
	child := &Process{
		Path: args[0], Args: args[1:], Env: p.Env, Dir: p.Dir, Stdin: p.Stdin,
		Stdout: out, Stderr: errOut,
		// The child inherits the service: it is the process that talks to
		// the service control manager.
		Service: p.Service, running: p.running,
	}
	if code := p.Host.Run(ctx, child); code != 0 {
		if ctx.Err() != nil {
			return 0 // stopped: the SCM ended the service
		}
		return fatal("running command: exit status %d", code)
	}
	return 0
}

// rotatingLog is logrotation.rotationFile on the host's disk.
type rotatingLog struct {
	mu      sync.Mutex
	path    string // on the Linux disk
	f       *os.File
	size    int64
	maxSize int64
}

func openRotatingLog(h *Host, winPath string, maxSize int64) (*rotatingLog, error) {
	path := h.DiskPath(winPath)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		if os.IsNotExist(err) {
			// CreateFile's message for a missing directory.
			return nil, fmt.Errorf("open %s: The system cannot find the path specified.", winPath)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close() // the Stat error is the one to report
		return nil, err
	}
	return &rotatingLog{path: path, f: f, size: st.Size(), maxSize: maxSize}, nil
}

func (w *rotatingLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.f.Write(b)
	if err != nil {
		return 0, err
	}
	if w.maxSize > 0 {
		w.size += int64(n)
		if w.size >= w.maxSize {
			ext := filepath.Ext(w.path)
			rotated := strings.TrimSuffix(w.path, ext) + "-" + time.Now().Format(kubeLogRunnerTimeLayout) + ext
			if rotated != w.path {
				_ = w.f.Close() // the file is renamed and reopened next
				if err := os.Rename(w.path, rotated); err != nil {
					return 0, err
				}
				if w.f, err = os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
					return 0, err
				}
				w.size = 0
			}
		}
	}
	return n, nil
}

func (w *rotatingLog) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}
