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
func TestRoundTrips(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	spec := e.cloneSpec(t, "win-rt", "127.0.77.1")
	count := func(name string, max int64, f func() error) {
		t.Helper()
		e.counter.reset()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := e.counter.n.Load()
		t.Logf("%-22s %2d round trips %v", name, n, e.counter.reset())
		if n > max {
			t.Errorf("%s took %d round trips, want at most %d", name, n, max)
		}
	}
	var vm *vsphere.VM
	count("Clone", 10, func() (err error) { vm, err = e.c.Clone(ctx, spec); return err })
	count("PowerOn", 3, func() error { return e.c.PowerOn(ctx, vm) })
	count("WaitForCustomization", 1, func() error { return e.c.WaitForCustomization(ctx, vm) })
	count("WaitForIP", 1, func() error { _, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{}); return err })
	count("ReadVM (refresh)", 2, func() error { _, err := e.c.ReadVM(ctx, vm); return err })
	count("Destroy (powered on)", 8, func() error { return e.c.Destroy(ctx, vm) })
	count("Destroy (gone)", 1, func() error { return e.c.Destroy(ctx, vm) })
}
