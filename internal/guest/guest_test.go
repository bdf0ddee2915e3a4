package guest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/guest/guesttest"
	"github.com/wincluster/terraform-provider-windows/internal/redact"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

func step(name, body string, secrets ...string) bootstrap.Step {
	return bootstrap.Step{Name: name, Script: "# step: " + name + "\n" + body, Secrets: secrets}
}

func connect(t *testing.T, g *guesttest.Guest) *guest.Session {
	t.Helper()
	s, err := guest.Connect(t.Context(), g.Connect, remote.Config{Host: "192.0.2.10", User: "Administrator"}, "join")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStageErrorMessages(t *testing.T) {
	cases := []struct {
		err  *guest.StageError
		want string
	}{
		{guest.Stage("powering on", errors.New("no host")), "powering on: no host"},
		{&guest.StageError{Stage: "waiting for the Node to become Ready", Err: errors.New("not Ready"), Evidence: "Last lines of x:\nE0101"},
			"waiting for the Node to become Ready: not Ready\n\nLast lines of x:\nE0101"},
		{&guest.StageError{Stage: `image step "install-kubelet"`, ExitCode: 1, Err: errors.New("script exited"), Evidence: "checksum mismatch"},
			"image step \"install-kubelet\" exited with code 1:\nchecksum mismatch"},
		{&guest.StageError{Stage: `join step "x"`, ExitCode: 3}, `join step "x" exited with code 3 and printed nothing`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestRun(t *testing.T) {
	const secret = "abcdef.0123456789abcdef"
	g := guesttest.New()
	g.Steps["ok"] = guesttest.Reply{Stdout: "token " + secret + " written"}
	g.Steps["fails"] = guesttest.Reply{ExitCode: 1, Stdout: "ignored", Stderr: strings.Repeat("noise\n", 30) + "Access denied writing " + secret + "\n+ Set-Content -Value '" + secret + "'"}
	g.Steps["quiet-fail"] = guesttest.Reply{ExitCode: 2, Stdout: "line 1\nline 2"}
	g.Steps["broken"] = guesttest.Reply{Err: errors.New("wsman: connection reset carrying " + secret)}
	s := connect(t, g)
	ctx := t.Context()

	out, err := s.Run(ctx, step("ok", "Write-Output '"+secret+"'", secret))
	if err != nil || strings.Contains(out, secret) || !strings.Contains(out, redact.Placeholder) {
		t.Errorf("ok: output %q, %v: want the secret replaced", out, err)
	}

	_, err = s.Run(ctx, step("fails", "Set-Content -Value '"+secret+"'", secret))
	var se *guest.StageError
	if !errors.As(err, &se) || se.ExitCode != 1 || se.Stage != `join step "fails"` {
		t.Fatalf("fails: %#v, want a StageError with exit code 1", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "join step \"fails\" exited with code 1:\n") || !strings.Contains(msg, "Access denied") {
		t.Errorf("fails: %q lacks the stage or the evidence", msg)
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, "Set-Content") {
		t.Errorf("fails: the secret or the sensitive script's echo leaks: %q", msg)
	}
	if n := strings.Count(se.Evidence, "\n") + 1; n != 15 {
		t.Errorf("fails: %d lines of evidence, want the last 15", n)
	}
	if strings.Contains(errors.Unwrap(err).Error(), secret) {
		t.Error("fails: the wrapped error carries the secret")
	}

	_, err = s.Run(ctx, step("quiet-fail", ""))
	if err == nil || !strings.Contains(err.Error(), "exited with code 2:\nline 1\nline 2") {
		t.Errorf("quiet-fail: %v, want stdout as the evidence when stderr is empty", err)
	}

	_, err = s.Run(ctx, step("broken", "", secret))
	if err == nil || err.Error() != `join step "broken": wsman: connection reset carrying `+redact.Placeholder {
		t.Errorf("broken: %v", err)
	}
	if got, want := strings.Join(g.Ran(), ","), "ok,fails,quiet-fail,broken"; got != want || s.Runs() != 4 {
		t.Errorf("ran %s (%d), want %s", got, s.Runs(), want)
	}
}

// A step cancelled mid-way is a StageError that still says it was cancelled.
func TestRunCancelled(t *testing.T) {
	g := guesttest.New()
	ctx, cancel := context.WithCancel(t.Context())
	g.Steps["hangs"] = guesttest.Reply{Do: func(context.Context) { cancel() }, Hang: true}
	s := connect(t, g)
	_, err := s.Run(ctx, step("hangs", "", "s3cr3t-value"))
	var se *guest.StageError
	if !errors.As(err, &se) || !errors.Is(err, context.Canceled) || se.Stage != `join step "hangs"` {
		t.Errorf("err = %v, want the step's StageError wrapping context.Canceled", err)
	}
}

func TestReboot(t *testing.T) {
	g := guesttest.New()
	s := connect(t, g)
	st := bootstrap.Step{Name: "containers-feature", Script: "# step: containers-feature\n", MayReboot: true}
	if !guest.RebootRequested(st, "installing\n"+bootstrap.RebootMarker+"\n") || guest.RebootRequested(st, "done") ||
		guest.RebootRequested(bootstrap.Step{Name: "x"}, bootstrap.RebootMarker) {
		t.Error("RebootRequested: want only a step that may reboot and printed the marker")
	}
	if _, err := s.Run(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	waited := false
	err := s.Reboot(t.Context(), func(context.Context) error {
		if g.Open() != 0 {
			t.Error("the transport is still open while the guest restarts")
		}
		waited = true
		return nil
	})
	if err != nil || !waited || g.Open() != 1 || len(g.Configs()) != 2 {
		t.Fatalf("Reboot: %v, waited %v, open %d, connections %d", err, waited, g.Open(), len(g.Configs()))
	}
	if _, err := s.Run(t.Context(), step("next", "")); err != nil {
		t.Errorf("a step after the reboot: %v", err)
	}

	err = s.Reboot(t.Context(), func(context.Context) error { return errors.New("tools never came back") })
	if err == nil || err.Error() != `waiting for the guest to restart after join step "next": tools never came back` {
		t.Errorf("wait failure: %v", err)
	}
	g.ConnectErrs = []error{errors.New("dial refused")}
	err = s.Reboot(t.Context(), func(context.Context) error { return nil })
	if err == nil || err.Error() != "reconnecting after the restart: dial refused" {
		t.Errorf("reconnect failure: %v", err)
	}
	if _, err := s.Run(t.Context(), step("after", "")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a step without a transport: %v", err)
	}
}

func TestTail(t *testing.T) {
	g := guesttest.New()
	g.Files[`C:\var\log\kubelet\kubelet.log`] = "a\r\nb\r\n\r\nc\r\nd\r\n"
	s := connect(t, g)
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // evidence is read after the operation failed, cancelled or not
	if got := s.Tail(ctx, `C:\var\log\kubelet\kubelet.log`, 3); got != "Last lines of C:\\var\\log\\kubelet\\kubelet.log:\nb\nc\nd" {
		t.Errorf("Tail = %q", got)
	}
	if got := s.Tail(t.Context(), `C:\missing.log`, 3); got != "" {
		t.Errorf("Tail of a missing file = %q, want nothing", got)
	}
}

// TestRunConnectionCut: a step whose connection drops mid-reply (the guest
// restarting under it) is no failure of the step. A rerunnable step runs
// again on a new connection; any other fails naming its stage, unrun a
// second time; a connection cut again and again gives up.
func TestRunConnectionCut(t *testing.T) {
	cut := fmt.Errorf("winrm: %w: unexpected EOF", remote.ErrConnectionCut)
	g := guesttest.New()
	g.Steps["join-files"] = guesttest.Reply{Err: cut, Do: func(context.Context) {
		g.Steps["join-files"] = guesttest.Reply{Stdout: "node files written"}
	}}
	g.Steps["sysprep"] = guesttest.Reply{Err: cut}
	g.Steps["flaky"] = guesttest.Reply{Err: cut}
	s := connect(t, g)
	ctx := t.Context()

	rerun := step("join-files", "Write-Output 'node files written'")
	rerun.Rerunnable = true
	out, err := s.Run(ctx, rerun)
	if err != nil || out != "node files written" {
		t.Fatalf("a rerunnable step cut once: %q, %v", out, err)
	}
	if n := len(g.Configs()); n != 2 {
		t.Errorf("%d connections, want 2 (reconnected after the cut)", n)
	}

	_, err = s.Run(ctx, step("sysprep", "sysprep.exe /generalize"))
	var se *guest.StageError
	if !errors.As(err, &se) || se.Stage != `join step "sysprep"` || !strings.Contains(err.Error(), "cannot safely run twice") || !errors.Is(err, remote.ErrConnectionCut) {
		t.Errorf("a step that must not run twice, cut: %v", err)
	}

	flaky := step("flaky", "Write-Output 1")
	flaky.Rerunnable = true
	if _, err := s.Run(ctx, flaky); err == nil || !strings.Contains(err.Error(), "cut 4 times in a row") {
		t.Errorf("a step cut every time: %v", err)
	}
	want := []string{"join-files", "join-files", "sysprep", "flaky", "flaky", "flaky", "flaky"}
	if got := g.Ran(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ran %v, want %v", got, want)
	}
}
