package vsphere_test

import (
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestSessionEndsMidRun: vCenter ends the Client's session (an
// administrator terminates it, or it idles out) while a wait is under way.
// The next call logs in again and succeeds; the wait, whose collector and
// view died with the session, goes on on a new collector and sees the
// change; one login serves every call that found the session gone.
func TestSessionEndsMidRun(t *testing.T) {
	setLinger(t, time.Minute) // the watch session must outlive the vCenter one
	e := newEnv(t)
	ctx := t.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(t, "relogin", ""))
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- e.c.WaitForPowerState(ctx, vm, vsphere.PoweredOn) }()
	for !e.c.WatchEntered(vm.Ref) {
		time.Sleep(10 * time.Millisecond)
	}
	old := e.c.WatchState().Collector

	n, err := e.srv.TerminateSessions(ctx)
	if err != nil || n == 0 {
		t.Fatalf("terminating the sessions: %d, %v", n, err)
	}
	// A task (refused, then sent again after the login) and its wait on
	// the watch (whose view is gone).
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Fatalf("powering on after the session ended: %v", err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("the wait under way when the session ended: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the wait under way when the session ended did not see the power-on")
	}
	if got := e.c.Relogins(); got != 1 {
		t.Errorf("%d logins after the session ended, want 1", got)
	}
	if cur := e.c.WatchState().Collector; cur == old || cur.Value == "" {
		t.Errorf("the watch's collector is %v (before the session ended: %v), want a new one", cur, old)
	}
	if _, err := e.c.ReadVM(ctx, vm); err != nil {
		t.Errorf("reading after the new login: %v", err)
	}
}
