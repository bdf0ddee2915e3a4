package vsphere_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestRoundTrips counts the SOAP calls of each operation a node's
// create, refresh and delete make, one after the other on one Client (the
// first wait starts the shared watch: a collector, a view and a filter);
// refresh must stay within 2 per node. TestSharedWatchConcurrentCreates
// counts creates side by side.
// maxWaitsPerOperation bounds one operation's WaitForUpdatesEx calls: a task's
// states (queued, running, success) and the VM's changes it waits through.
const maxWaitsPerOperation = 5

func TestRoundTrips(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	spec := e.cloneSpec(t, "win-rt", "127.0.77.1")
	// The calls are counted apart from WaitForUpdatesEx: a wait's calls are
	// long polls that return on each change vCenter reports (a task queued,
	// running, done may arrive in one update set or three, as the load
	// decides), so they are bounded by the changes, not by the operation.
	count := func(name string, max int, f func() error) {
		t.Helper()
		e.counter.reset()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		calls := e.counter.reset()
		n := 0
		for method, k := range calls {
			if method != "WaitForUpdatesEx" {
				n += k
			}
		}
		t.Logf("%-22s %2d round trips besides the waits %v", name, n, calls)
		if n > max {
			t.Errorf("%s took %d round trips besides the waits, want at most %d", name, n, max)
		}
		if w := calls["WaitForUpdatesEx"]; w > maxWaitsPerOperation {
			t.Errorf("%s took %d WaitForUpdatesEx, want at most %d (one per change it waits through)", name, w, maxWaitsPerOperation)
		}
	}
	var vm *vsphere.VM
	count("Clone", 7, func() (err error) { vm, err = e.c.Clone(ctx, spec); return err })
	count("PowerOn", 2, func() error { return e.c.PowerOn(ctx, vm) })
	count("WaitForCustomization", 1, func() error { return e.c.WaitForCustomization(ctx, vm) })
	count("WaitForIP", 1, func() error { _, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{}); return err })
	count("ReadVM (refresh)", 2, func() error { _, err := e.c.ReadVM(ctx, vm); return err })
	count("Destroy (powered on)", 5, func() error { return e.c.Destroy(ctx, vm) })
	count("Destroy (gone)", 1, func() error { return e.c.Destroy(ctx, vm) })
}
