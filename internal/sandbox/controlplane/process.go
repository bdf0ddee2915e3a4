package controlplane

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// stopGrace is how long a component gets to exit after SIGTERM before it
	// is killed. The API server drains requests for a moment; etcd syncs.
	stopGrace = 5 * time.Second
	// logTailLines is how much of a component's log an error quotes.
	logTailLines = 20
	// logTailBytes bounds how much of the log file is read to find them.
	logTailBytes = 64 << 10
)

// process is one running component whose output goes to its log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	err     error         // the exit status; read only after done is closed
	// expected marks an exit the control plane asked for outside Stop
	// (StopAPIServer), which the monitor does not report as a failure.
	expected atomic.Bool
}

// startProcess starts bin with args, writing stdout and stderr to
// logDir/<name>.log, and reports its exit on exited (buffered by the caller).
func startProcess(name, bin string, args []string, logDir string, exited chan<- *process) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	// Appended to: a component started again (StartAPIServer) keeps its
	// predecessor's log; prepare clears the directory for a new control plane.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: opening log: %w", name, err)
	}
	// The child holds its own descriptor; ours is not needed after Start.
	defer func() { _ = logFile.Close() }()

	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
		exited <- p
	}()
	return p, nil
}

// exitError describes an exit that nobody asked for, quoting the log.
func (p *process) exitError() error {
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error()
	}
	return fmt.Errorf("%s exited unexpectedly (%s); last lines of %s:\n%s", p.name, status, p.logPath, p.tail())
}

// tail returns the last lines of the process log.
func (p *process) tail() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	defer func() { _ = f.Close() }() // read only
	if st, err := f.Stat(); err == nil && st.Size() > logTailBytes {
		if _, err := f.Seek(-logTailBytes, io.SeekEnd); err != nil {
			return fmt.Sprintf("(log unavailable: %v)", err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// stop sends SIGTERM, and SIGKILL if the process outlives stopGrace; it
// returns once the process has exited.
func (p *process) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: sending SIGTERM: %w", p.name, err)
	}
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: killing after %s: %w", p.name, stopGrace, err)
	}
	<-p.done
	return fmt.Errorf("%s did not exit within %s of SIGTERM and was killed", p.name, stopGrace)
}
