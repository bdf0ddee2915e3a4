package vsphere_test

import (
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestSetVMAntiAffinity keeps one rule in step with a set of VMs: created
// with two, changed with a third, untouched when nothing changed (one read,
// no task), removed once one VM is left.
func TestSetVMAntiAffinity(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	var vms []types.ManagedObjectReference
	for i := range 3 {
		vm, err := e.c.Clone(ctx, e.cloneSpec(t, fmt.Sprintf("win-aa%d", i), fmt.Sprintf("127.0.71.%d", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		vms = append(vms, vm.Ref)
	}
	pool := vsphere.VMRef(e.pool)
	pool.Type = "ResourcePool"
	const rule = "windows-node-pool-web"
	check := func(want []types.ManagedObjectReference) {
		t.Helper()
		got, err := e.c.VMAntiAffinity(ctx, pool, rule)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("rule VMs %v, want %v", got, want)
		}
	}
	for _, step := range []struct {
		vms   []types.ManagedObjectReference
		tasks int
	}{
		{vms[:2], 1}, // created
		{vms, 1},     // a third VM
		{vms, 0},     // nothing to change
		{vms[:1], 1}, // one left: removed
		{nil, 0},     // nothing to remove
	} {
		e.counter.reset()
		if err := e.c.SetVMAntiAffinity(ctx, pool, rule, step.vms); err != nil {
			t.Fatal(err)
		}
		if n := e.counter.reset()["ReconfigureComputeResource_Task"]; n != step.tasks {
			t.Errorf("with %d VMs: %d reconfigure tasks, want %d", len(step.vms), n, step.tasks)
		}
		if len(step.vms) >= 2 {
			check(step.vms)
		} else {
			check(nil)
		}
	}
}
