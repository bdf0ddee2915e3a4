package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workdir writes a configuration into a new directory and runs `terraform
// init -plugin-dir` there (offline: the provider comes from the plugin dir).
func (w *world) workdir(b *testing.B, name, config string) string {
	b.Helper()
	dir := filepath.Join(w.dir, "work", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	if _, err := w.terraform(b.Context(), dir, "init", nil, "init", "-input=false", "-no-color", "-plugin-dir="+w.plugins); err != nil {
		b.Fatal(err)
	}
	return dir
}

// tfRun is one finished terraform command.
type tfRun struct {
	Wall     time.Duration
	ExitCode int
	Output   []byte // stdout (machine-readable with -json)
	LogFile  string // TF_LOG_PATH: the provider's INFO log
}

// terraform runs one command in dir with the provider's INFO log going to
// dir/<name>.log; onLine (if not nil) sees every stdout line as it comes,
// with the time it came. A non-zero exit is an error except exit code 2 of
// `plan -detailed-exitcode` (changes), which the caller reads in ExitCode.
func (w *world) terraform(ctx context.Context, dir, name string, onLine func(line []byte, at time.Time), args ...string) (tfRun, error) {
	run := tfRun{LogFile: filepath.Join(dir, name+".log")}
	cmd := exec.CommandContext(ctx, w.tf, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, w.env...), "TF_LOG_PROVIDER=INFO", "TF_LOG_PATH="+run.LogFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return run, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return run, err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(stdout, &out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if onLine != nil {
			onLine(sc.Bytes(), time.Now())
		}
	}
	err = cmd.Wait()
	run.Wall = time.Since(start)
	run.Output = out.Bytes()
	_ = os.WriteFile(filepath.Join(dir, name+".out"), run.Output, 0o600) // for a look afterwards
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		run.ExitCode = exit.ExitCode()
		if run.ExitCode == 2 && containsArg(args, "-detailed-exitcode") {
			err = nil
		}
	}
	if err != nil {
		return run, fmt.Errorf("terraform %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, diagnostics(run.Output), tail(stderr.String(), 40))
	}
	return run, nil
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// uiEvent is one line of Terraform's machine-readable UI (-json).
type uiEvent struct {
	Level      string    `json:"@level"`
	Message    string    `json:"@message"`
	Timestamp  time.Time `json:"@timestamp"`
	Type       string    `json:"type"`
	Hook       uiHook    `json:"hook"`
	Change     uiHook    `json:"change"` // planned_change, resource_drift
	Diagnostic *struct {
		Severity, Summary, Detail string
	} `json:"diagnostic"`
	Changes *struct {
		Add, Change, Remove int
	} `json:"changes"`
}

type uiHook struct {
	Resource struct {
		Addr         string `json:"addr"`
		ResourceType string `json:"resource_type"`
	} `json:"resource"`
	Action         string  `json:"action"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

func parseEvent(line []byte) (uiEvent, bool) {
	var e uiEvent
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
		return e, false
	}
	return e, true
}

// diagnostics quotes the error diagnostics of -json output.
func diagnostics(out []byte) string {
	var b strings.Builder
	for _, line := range splitLines(out) {
		if e, ok := parseEvent(line); ok && e.Diagnostic != nil && e.Diagnostic.Severity == "error" {
			fmt.Fprintf(&b, "Error: %s\n%s\n", e.Diagnostic.Summary, tail(e.Diagnostic.Detail, 20))
		}
	}
	return b.String()
}

// span is one resource's apply, from Terraform's apply_start to its
// apply_complete.
type span struct {
	Addr, Type string
	Start, End time.Time
}

func (s span) Duration() time.Duration { return s.End.Sub(s.Start) }

// applySpans reads the per-resource apply spans from -json output.
func applySpans(out []byte) map[string]*span {
	spans := map[string]*span{}
	for _, line := range splitLines(out) {
		e, ok := parseEvent(line)
		if !ok || e.Hook.Resource.Addr == "" {
			continue
		}
		s := spans[e.Hook.Resource.Addr]
		if s == nil {
			s = &span{Addr: e.Hook.Resource.Addr, Type: e.Hook.Resource.ResourceType}
			spans[s.Addr] = s
		}
		switch e.Type {
		case "apply_start":
			s.Start = e.Timestamp
		case "apply_complete":
			s.End = e.Timestamp
		}
	}
	return spans
}

func splitLines(out []byte) [][]byte { return bytes.Split(out, []byte("\n")) }
