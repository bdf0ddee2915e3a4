package winsim

import (
	"context"
	"io"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// Programs in the background: a program its caller started without waiting
// for it (a GUI-subsystem program run with PowerShell's `&` at the end of
// its pipeline, Start-Process without -Wait) runs on by itself, and what it
// does lands when it finishes, however the caller went on.
//
// The simulator starts such a program when the script that started it has
// ended (runPowerShell), not while the script's later statements run: the
// programs concerned (wusa.exe installing an update, sysprep.exe) take
// minutes on Windows, a script's next statements milliseconds, so a script
// that reads the program's effects right after starting it finds them
// missing, as it would on Windows, every time rather than by chance. The
// program keeps its caller's logon (wusa from a network logon still fails,
// KB2773898) and runs until it ends or the host goes down (UpContext).
// Nothing reads its output or its exit code: Windows hands them to no one.

// backgroundRun is one program started without waiting for it.
type backgroundRun struct {
	ctx  context.Context // the caller's (its logon, its token)
	path string
	args []string
	env  map[string]string
}

// startInBackground starts n without waiting for it (n.Background). What
// fails at CreateProcess fails here, at once, as it does for the caller:
// a path that is not a program, a program the token may not start.
func (p *psHost) startInBackground(ctx context.Context, n *pwsh.NativeRun) (int, error) {
	switch strings.ToLower(n.Path[strings.LastIndexByte(n.Path, '.')+1:]) {
	case "cmd", "bat": // a batch file runs in cmd.exe, a console program
	default:
		id, _, err := p.h.ResolveProgram(n.Path)
		if err != nil {
			return 0, err
		}
		if code, ok := p.h.guardProgram(ctx, id, n.Args, n.Stderr); !ok {
			return code, nil
		}
	}
	env := make(map[string]string, len(p.env))
	for k, v := range p.env {
		env[k] = v
	}
	p.background = append(p.background, backgroundRun{ctx: ctx, path: n.Path, args: append([]string(nil), n.Args...), env: env})
	n.Background = true
	return 0, nil
}

// releaseBackground starts the programs the script left running in the
// background, once it has ended.
func (p *psHost) releaseBackground() {
	for _, b := range p.background {
		p.h.runInBackground(b)
	}
	p.background = nil
}

// runInBackground runs b until it ends or the host goes down.
func (h *Host) runInBackground(b backgroundRun) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(b.ctx))
	stop := context.AfterFunc(h.UpContext(), cancel)
	h.backgroundRuns.Add(1)
	go func() {
		defer h.backgroundRuns.Done()
		defer cancel()
		defer stop()
		_, _ = h.runProgram(ctx, b.path, b.args, b.env, strings.NewReader(""), io.Discard, io.Discard)
	}()
}

// WaitBackground returns when every program started in the background on
// the host has ended (tests wait on it for a background program's
// effects), or with ctx's error.
func (h *Host) WaitBackground(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.backgroundRuns.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
