package vcsim

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// TestListViewChangesUnderLongPoll changes a ListView (ModifyListView) over
// and over while a WaitForUpdatesEx loop runs on a filter that traverses
// it, as a shared watch of many waits does: nothing deadlocks (vcsim's own
// ModifyListView does, listViewChange), objects put into the view are
// reported, and an object gone when added comes back unresolved.
func TestListViewChangesUnderLongPoll(t *testing.T) {
	s, ca := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	vms, err := find.NewFinder(c).VirtualMachineList(ctx, "/DC0/vm/...")
	if err != nil || len(vms) == 0 {
		t.Fatalf("VMs: %v %v", vms, err)
	}
	lv, err := view.NewManager(c).CreateListView(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := property.DefaultCollector(c).Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CreateFilter(ctx, types.CreateFilter{Spec: types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: lv.Reference(), Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ListView", Path: "view"}}}},
		PropSet: []types.PropertySpec{{Type: "VirtualMachine", PathSet: []string{"runtime.powerState"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	seen := map[types.ManagedObjectReference]bool{}
	var mu sync.Mutex
	loopCtx, stop := context.WithCancel(ctx)
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		version := ""
		for loopCtx.Err() == nil {
			res, err := methods.WaitForUpdatesEx(loopCtx, c, &types.WaitForUpdatesEx{This: pc.Reference(), Version: version})
			if err != nil {
				return
			}
			if set := res.Returnval; set != nil {
				version = set.Version
				mu.Lock()
				for _, fu := range set.FilterSet {
					for _, ou := range fu.ObjectSet {
						seen[ou.Obj] = true
					}
				}
				mu.Unlock()
			}
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		vm := vms[i%len(vms)].Reference()
		if _, err := lv.Add(ctx, []types.ManagedObjectReference{vm}); err != nil {
			t.Fatal(err)
		}
		if _, err := lv.Remove(ctx, []types.ManagedObjectReference{vm}); err != nil {
			t.Fatal(err)
		}
	}
	last := vms[0].Reference()
	if _, err := lv.Add(ctx, []types.ManagedObjectReference{last}); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		ok := seen[last]
		mu.Unlock()
		if ok {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("an object put into the view was never reported")
		}
	}
	gone := types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-gone"}
	unresolved, err := lv.Add(ctx, []types.ManagedObjectReference{gone})
	if err != nil || len(unresolved) != 1 || unresolved[0] != gone {
		t.Errorf("adding a missing object: unresolved %v, %v", unresolved, err)
	}
	stop()
	_ = pc.Destroy(context.Background())
	<-loopDone
}
