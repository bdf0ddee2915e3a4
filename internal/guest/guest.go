// Package guest operates a Windows guest over its transport (internal/remote)
// for the orchestrators that bootstrap one (internal/winnode joins a node,
// internal/goldenimage builds an image): connect, run named steps with the
// evidence of a failure (exit code, last output lines, every secret of the
// step scrubbed by internal/redact), reboot and reconnect. StageError is the
// one error type of their stages. It knows nothing of vSphere, Kubernetes or
// Terraform.
package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// Connector opens a transport to a guest. remote.Connect in production: it
// retries while the host is unreachable (booting, listener not up yet) and
// never for credentials, certificates or host keys.
type Connector func(ctx context.Context, cfg remote.Config) (remote.Transport, error)

// StageError names the stage of an operation that failed, with the evidence
// the guest gave (a step's last output lines, a log's last lines), already
// redacted.
type StageError struct {
	// Stage says what was being done: "cloning win2022-base",
	// `join step "kubelet-service"`.
	Stage string
	Err   error
	// ExitCode is the non-zero exit code of a step that ran and failed.
	ExitCode int
	Evidence string
}

// Stage returns err as the failure of stage.
func Stage(stage string, err error) *StageError { return &StageError{Stage: stage, Err: err} }

func (e *StageError) Error() string {
	if e.ExitCode != 0 {
		msg := fmt.Sprintf("%s exited with code %d", e.Stage, e.ExitCode)
		if e.Evidence == "" {
			return msg + " and printed nothing"
		}
		return msg + ":\n" + e.Evidence
	}
	msg := e.Stage
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Evidence != "" {
		msg += "\n\n" + e.Evidence
	}
	return msg
}

func (e *StageError) Unwrap() error { return e.Err }

// evidenceLines is how many of a failed step's last output lines its error
// quotes.
const evidenceLines = 15

// Session runs steps on one guest. It is not safe for concurrent use.
type Session struct {
	connect Connector
	cfg     remote.Config
	kind    string
	t       remote.Transport
	runs    int
	last    string
}

// Connect opens a session on the guest cfg names. kind names its steps in
// errors ("join" makes `join step "kubelet-service"`). The error is the
// connector's, for the caller to name its stage.
func Connect(ctx context.Context, connect Connector, cfg remote.Config, kind string) (*Session, error) {
	t, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Session{connect: connect, cfg: cfg, kind: kind, t: t}, nil
}

// HostKey is the SSH host key the guest presented and the transport
// trusted (authorized_keys format); "" over WinRM.
func (s *Session) HostKey() string { return s.cfg.TrustedHostKey() }

// Runs counts the steps run, each one transport round trip.
func (s *Session) Runs() int { return s.runs }

// Close closes the transport.
func (s *Session) Close() error {
	if s.t == nil {
		return nil
	}
	err := s.t.Close()
	s.t = nil
	return err
}

// Run runs one step and returns its output. Everything that leaves it goes
// through the step's redactor: its secrets (and their encodings) are
// replaced, and a sensitive step's script is never echoed. A failure is a
// *StageError `<kind> step "<name>"`: with the exit code and the last
// output lines when the script ran and failed, else with the transport's
// error (a cancellation stays errors.Is(err, context.Canceled)).
func (s *Session) Run(ctx context.Context, step bootstrap.Step) (string, error) {
	s.runs++
	s.last = step.Name
	red := step.Redactor()
	stage := fmt.Sprintf("%s step %q", s.kind, step.Name)
	if s.t == nil {
		return "", Stage(stage, errors.New("the session is closed"))
	}
	r, err := s.runAndUpload(ctx, step)
	for cuts := 1; errors.Is(err, remote.ErrConnectionCut) && ctx.Err() == nil; cuts++ {
		// Not a failure of the step: the connection dropped under it, as
		// when the guest restarts. What it did is unknown.
		if !step.Rerunnable {
			return "", Stage(stage, fmt.Errorf("%w; the step cannot safely run twice, so it was not run again: check the guest, then run apply again (the resource is tainted and will be replaced)", red.Error(err)))
		}
		if cuts > maxCuts {
			return "", Stage(stage, fmt.Errorf("the connection was cut %d times in a row: %w", cuts, red.Error(err)))
		}
		// Reconnect (the connector waits while the guest is down, and
		// while it goes away under the first command) and run it again:
		// it converges.
		_ = s.Close()
		t, cerr := s.connect(ctx, s.cfg)
		if cerr != nil {
			return "", Stage(fmt.Sprintf("reconnecting after the connection was cut under %s", stage), red.Error(cerr))
		}
		s.t = t
		r, err = s.runAndUpload(ctx, step)
	}
	if err == nil {
		return red.String(r.Stdout), nil
	}
	var exit *remote.ExitError
	if errors.As(err, &exit) && exit.ExitCode != 0 {
		return "", &StageError{Stage: stage, ExitCode: exit.ExitCode, Evidence: red.String(exit.Output(evidenceLines)), Err: red.Error(err)}
	}
	return "", Stage(stage, red.Error(err))
}

// runAndUpload runs the step's script, then uploads its files: one unit,
// run again whole when the connection is cut under either part.
func (s *Session) runAndUpload(ctx context.Context, step bootstrap.Step) (remote.Result, error) {
	r, err := s.t.Run(ctx, step.Script)
	if err != nil {
		return r, err
	}
	return r, s.upload(ctx, step)
}

// upload writes the step's files through the transport's upload, which
// checks each file's SHA-256 on the guest and sends nothing when the file
// is there already (a step run again converges).
func (s *Session) upload(ctx context.Context, step bootstrap.Step) error {
	for _, f := range step.Files {
		sum := sha256.Sum256(f.Content)
		if _, err := s.t.Upload(ctx, bytes.NewReader(f.Content), int64(len(f.Content)), hex.EncodeToString(sum[:]), f.Path); err != nil {
			return err
		}
	}
	return nil
}

// maxCuts bounds how many times in a row a rerunnable step is run again
// after its connection was cut.
const maxCuts = 3

// RebootRequested reports whether a step's output asks for a restart
// before the next step (bootstrap.RebootMarker, from a step that may reboot).
func RebootRequested(step bootstrap.Step, out string) bool {
	return step.MayReboot && strings.Contains(out, bootstrap.RebootMarker)
}

// Reboot follows a restart the last step started: it closes the transport,
// waits with waitRestart for the guest to be back (vSphere sees VMware
// Tools stop and run again) and connects again with the same settings (an
// SSH host key recorded at the first connection must be presented again).
func (s *Session) Reboot(ctx context.Context, waitRestart func(context.Context) error) error {
	_ = s.Close()
	if err := waitRestart(ctx); err != nil {
		return Stage(fmt.Sprintf("waiting for the guest to restart after %s step %q", s.kind, s.last), err)
	}
	t, err := s.connect(ctx, s.cfg)
	if err != nil {
		return Stage("reconnecting after the restart", err)
	}
	s.t = t
	return nil
}

// tailTimeout bounds reading a log for evidence: the operation has failed
// already, and a guest that does not answer must not hold its report up.
const tailTimeout = 30 * time.Second

// Tail returns the last n non-empty lines of a text file on the guest,
// headed "Last lines of <path>:", or "" when it cannot be read or is empty:
// the evidence of a failure that the file explains (the kubelet's log). It
// runs on after ctx is cancelled, within its own bound.
func (s *Session) Tail(ctx context.Context, path string, n int) string {
	if s.t == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tailTimeout)
	defer cancel()
	r, err := s.t.Run(ctx, "Get-Content -Path "+psquote.Single(path)+" -Raw")
	if err != nil || strings.TrimSpace(r.Stdout) == "" {
		return ""
	}
	return "Last lines of " + path + ":\n" + remote.LastLines(r.Stdout, n)
}
