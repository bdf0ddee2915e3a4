package vsphere_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// shortLinger makes the view let go of objects quickly in a test.
func shortLinger(t *testing.T) time.Duration { return setLinger(t, 100*time.Millisecond) }

func setLinger(t *testing.T, d time.Duration) time.Duration {
	old := vsphere.SetWatchLinger(d)
	t.Cleanup(func() { vsphere.SetWatchLinger(old) })
	return d
}

// waitIdle waits until the watch, with no wait left, has retired its
// session (the linger has passed), and checks with vCenter that the
// collector (and with it its filter) and the view it had are gone.
func (e *env) waitIdle(t *testing.T, linger time.Duration) {
	t.Helper()
	st := e.c.WatchState()
	deadline := time.Now().Add(10*linger + 2*time.Second)
	for cur := st; cur.Collector.Value != "" || cur.Members > 0 || cur.Waiters > 0 || cur.Retiring > 0; cur = e.c.WatchState() {
		if time.Now().After(deadline) {
			t.Fatalf("the watch still holds collector %v, %d objects and %d waiters", cur.Collector, cur.Members, cur.Waiters)
		}
		if cur.Collector.Value != "" {
			st = cur
		}
		time.Sleep(linger / 4)
	}
	if st.Collector.Value == "" {
		return
	}
	pc := property.DefaultCollector(e.c.Client.Client)
	var coll mo.PropertyCollector
	if err := pc.RetrieveOne(context.Background(), st.Collector, []string{"filter"}, &coll); !vsphere.IsNotFound(err) {
		t.Errorf("collector %s (filters %v) still in vCenter after the watch went idle (%v)", st.Collector, coll.Filter, err)
	}
	var lv mo.ListView
	if err := pc.RetrieveOne(context.Background(), st.View, []string{"view"}, &lv); !vsphere.IsNotFound(err) {
		t.Errorf("view %s (%v) still in vCenter after the watch went idle (%v)", st.View, lv.View, err)
	}
}

// TestSharedWatchConcurrentCreates runs a node's vSphere create (clone with
// sysprep, power on, customization, IP) for 12 VMs at once on one Client:
// every wait goes through one collector, one filter and one view, made
// once; the view is empty when the waits are over; the round trips per VM
// stay within budget; Close removes the collector and the view.
func TestSharedWatchConcurrentCreates(t *testing.T) {
	// The production linger: a loaded machine must not find the 12 creates
	// all between two waits at once, which would retire the watch midway.
	linger := setLinger(t, time.Second)
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const n = 12
	specs := make([]vsphere.CloneSpec, n)
	for i := range specs {
		specs[i] = e.cloneSpec(t, fmt.Sprintf("watch-%02d", i), fmt.Sprintf("127.0.61.%d", i+1))
	}
	e.counter.reset()
	before := e.srv.Calls()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			vm, err := e.c.Clone(ctx, specs[i])
			if err == nil {
				err = e.c.PowerOn(ctx, vm)
			}
			if err == nil {
				err = e.c.WaitForCustomization(ctx, vm)
			}
			var ip string
			if err == nil {
				ip, err = e.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
			}
			if want := fmt.Sprintf("127.0.61.%d", i+1); err == nil && ip != want {
				err = fmt.Errorf("IP %s, want %s", ip, want)
			}
			if err == nil && (vm.BIOSUUID == "" || vm.InstanceUUID == "" || vm.InventoryPath != e.folder+"/"+specs[i].Name) {
				err = fmt.Errorf("identity %+v", *vm)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	e.waitIdle(t, linger)
	calls, total := e.srv.CallsSince(before)
	perVM := float64(total) / n
	t.Logf("%d concurrent creates: %d round trips (%.1f per VM): %v", n, total, perVM, calls)
	for _, m := range []string{"CreatePropertyCollector", "CreateListView", "CreateFilter", "DestroyPropertyCollector", "DestroyView"} {
		if calls[m] != 1 {
			t.Errorf("%s called %d times, want once for the whole run (made at the first wait, destroyed when idle)", m, calls[m])
		}
	}
	for _, m := range []string{"DestroyPropertyFilter", "CreateCollectorForEvents"} {
		if calls[m] != 0 {
			t.Errorf("%s called %d times, want none", m, calls[m])
		}
	}
	// The template once, one identity read per VM, and waitIdle's two reads
	// of the collector and view it finds gone.
	if calls["RetrievePropertiesEx"] > n+3 {
		t.Errorf("%d RetrievePropertiesEx for %d VMs, want the template read once and one identity each", calls["RetrievePropertiesEx"], n)
	}
	// Clone, identity, power-on: 3 calls of their own; the view's changes
	// and the shared long poll must cost less than 4 more per VM.
	if perVM > 7 {
		t.Errorf("%.1f round trips per VM, want at most 7", perVM)
	}

	// A wait brings the watch back; Close removes it.
	if err := e.c.WaitForPowerState(ctx, vsphere.VMRef("vm-1"), vsphere.PoweredOff); err != nil && !vsphere.IsNotFound(err) {
		t.Fatal(err)
	}
	pc := e.c.WatchState().Collector
	e.c.Close()
	var coll mo.PropertyCollector
	err := property.DefaultCollector(e.c.Client.Client).RetrieveOne(context.Background(), pc, []string{"filter"}, &coll)
	if pc.Value == "" || !vsphere.IsNotFound(err) {
		t.Errorf("the collector %v after Close: %v, want it gone", pc, err)
	}
	if _, err := e.c.WaitForIP(ctx, vsphere.VMRef("vm-1"), vsphere.IPFilter{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a wait after Close: %v", err)
	}
}

// TestSharedWatchCancel cancels waits that would never end: each returns
// its context's error, the others are not disturbed, and nothing they
// watched stays in vCenter's view.
func TestSharedWatchCancel(t *testing.T) {
	linger := shortLinger(t)
	e := newEnv(t)
	ctx := t.Context()
	off, err := e.c.Clone(ctx, e.cloneSpec(t, "cancel-off", ""))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			wctx, cancel := context.WithTimeout(ctx, time.Duration(50+20*i)*time.Millisecond)
			defer cancel()
			// Powered off, it reports no IP; the wait for power-on never ends.
			err := e.c.WaitForPowerState(wctx, off, vsphere.PoweredOn)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("cancelled wait %d: %v", i, err)
			}
		})
	}
	// Meanwhile a wait that does end, on the same VM.
	wg.Go(func() {
		if err := e.c.WaitForPowerState(ctx, off, vsphere.PoweredOff); err != nil {
			t.Errorf("a wait already satisfied: %v", err)
		}
	})
	wg.Wait()
	e.waitIdle(t, linger)

	// A wait cancelled while its object joins the view, and one after.
	wctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.c.WaitForPowerState(wctx, off, vsphere.PoweredOn); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait with a cancelled context: %v", err)
	}
	e.waitIdle(t, linger)
}

// TestSharedWatchVMDestroyed: a VM destroyed while waited on ends the wait
// as not found.
func TestSharedWatchVMDestroyed(t *testing.T) {
	linger := shortLinger(t)
	e := newEnv(t)
	ctx := t.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(t, "doomed", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- e.c.WaitForPowerState(ctx, vm, vsphere.PoweredOn) }()
	// Once vCenter has reported it (a VM deleted before that leaves no
	// trace in the updates: the watch's doc).
	for !e.c.WatchEntered(vm.Ref) {
		time.Sleep(10 * time.Millisecond)
	}
	other, err := vsphere.NewClient(ctx, vsphere.Config{Server: e.srv.Server, User: e.srv.User, Password: e.srv.Password, CAFile: e.caFile})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Destroy(ctx, vm); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !vsphere.IsNotFound(err) {
			t.Errorf("the wait on a destroyed VM: %v, want not found", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait on a destroyed VM did not end")
	}
	e.waitIdle(t, linger)

	// And one that is already gone when the wait begins.
	if err := e.c.WaitForPowerState(ctx, vm, vsphere.PoweredOn); !vsphere.IsNotFound(err) {
		t.Errorf("a wait on a VM gone before: %v, want not found", err)
	}
}

// TestWaitForCustomizationFailed: the guest reporting a failed
// customization (guest.customizationInfo) ends the wait with
// ErrCustomizationFailed and the guest's reason.
func TestWaitForCustomizationFailed(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(t, "custfail", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- e.c.WaitForCustomization(ctx, vm) }()
	for e.c.WatchState().Waiters == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-got:
		t.Fatalf("the wait ended while the customization was pending: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	// What VMware Tools reports when sysprep fails.
	reg := e.srv.Model.Map()
	sim := reg.Get(vm.Ref).(*simulator.VirtualMachine)
	sctx := &simulator.Context{Context: context.Background(), Map: reg}
	sctx.WithLock(sim, func() {
		sctx.Update(sim, []types.PropertyChange{{Name: "guest.customizationInfo", Val: &types.GuestInfoCustomizationInfo{
			CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_FAILED), ErrorMsg: "sysprep exited with 31",
		}}})
	})
	select {
	case err := <-got:
		if !errors.Is(err, vsphere.ErrCustomizationFailed) || !strings.Contains(err.Error(), "sysprep exited with 31") {
			t.Errorf("a failed customization: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not see the failed customization")
	}
}
