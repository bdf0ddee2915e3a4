package vsphere_test

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestFindResolvesEveryForm resolves a template and a folder from each form
// hashicorp/vsphere hands out for them, read from the simulator as its data
// sources read them, and refuses what names nothing.
func TestFindResolvesEveryForm(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tmplPath := e.srv.Templates["2022"]
	want, err := e.c.FindVMByPath(ctx, tmplPath)
	if err != nil {
		t.Fatal(err)
	}
	var vm mo.VirtualMachine
	if err := property.DefaultCollector(e.c.Client.Client).RetrieveOne(ctx, want, []string{"config.uuid", "config.instanceUuid"}, &vm); err != nil {
		t.Fatal(err)
	}
	if vm.Config.Uuid == vm.Config.InstanceUuid {
		t.Fatalf("BIOS and instance UUID are both %s: the test could not tell them apart", vm.Config.Uuid)
	}
	for _, form := range []string{tmplPath, want.Value, vm.Config.Uuid, vm.Config.InstanceUuid} {
		got, err := e.c.FindVM(ctx, form)
		if err != nil || got != want {
			t.Errorf("FindVM(%q) = %v, %v; want %v", form, got, err, want)
		}
		if got, err := e.c.Lookups().FindVM(ctx, form); err != nil || got != want {
			t.Errorf("Lookups.FindVM(%q) = %v, %v; want %v", form, got, err, want)
		}
	}
	if _, err := e.c.FindVM(ctx, "4216ffff-0000-0000-0000-000000000000"); !vsphere.IsNotFound(err) {
		t.Errorf("an unknown UUID: %v, want not found", err)
	}
	if _, err := e.c.FindVM(ctx, "win2022-base"); err == nil || vsphere.IsNotFound(err) {
		t.Errorf("a bare name: %v, want the forms listed", err)
	}

	pool := types.ManagedObjectReference{Type: vsphere.TypeResourcePool, Value: e.pool}
	dc, err := e.c.DatacenterPath(ctx, pool)
	if err != nil || dc != "/DC0" {
		t.Fatalf("DatacenterPath(%s) = %q, %v", e.pool, dc, err)
	}
	folder, err := e.c.FindFolderByPath(ctx, e.folder, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{e.folder, folder.Value, "windows", "windows/"} {
		got, err := e.c.FindFolder(ctx, form, pool, false)
		if err != nil || got != folder {
			t.Errorf("FindFolder(%q) = %v, %v; want %v", form, got, err, folder)
		}
	}
	created, err := e.c.Lookups().FindFolder(ctx, "compose/new", pool, true)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := e.c.InventoryPath(ctx, created); err != nil || p != "/DC0/vm/compose/new" {
		t.Errorf("a relative folder created at %q, %v; want /DC0/vm/compose/new", p, err)
	}
	if _, err := e.c.FindFolder(ctx, "windows", types.ManagedObjectReference{}, false); err == nil {
		t.Error("a relative folder with no resource pool resolved")
	}
}

// TestCheckFolder: a plan's folder check answers as FindFolder with create
// would, and creates nothing.
func TestCheckFolder(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for folder, wantNotFound := range map[string]bool{
		"/DC0/vm":                false, // exists
		"/DC0/vm/new/and/deeper": false, // created below /DC0/vm
		"new-relative":           false, // below the pool's datacenter's VM folder
		"/DC9/vm/windows":        true,  // no such datacenter: nothing to create it in
		"/DC0/windows":           true,  // a datacenter's top-level folder is never created
		"group-v987654":          true,
	} {
		err := e.c.CheckFolder(ctx, folder, e.pool)
		if got := vsphere.IsNotFound(err); got != wantNotFound || (!wantNotFound && err != nil) {
			t.Errorf("CheckFolder(%q) = %v, want not-found %v", folder, err, wantNotFound)
		}
	}
	if _, err := e.c.FindFolderByPath(ctx, "/DC0/vm/new", false); !vsphere.IsNotFound(err) {
		t.Errorf("CheckFolder created /DC0/vm/new (%v)", err)
	}
}
