package vcsim

import (
	"net/url"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// TestClusterAsComputeResource follows hashicorp/vsphere's guest OS family
// lookup for a VM cloned with a customization into a cluster's pool
// (resourcepool.OSFamily, v2.16.1): it names the pool's owner as a
// ComputeResource whatever its type (computeresource.BaseFromReference
// calls StandaloneFromID for a ClusterComputeResource too), reads its
// environment browser and queries the guest's config option. vCenter
// resolves the reference by its id; vcsim keyed objects by type and id and
// answered "has already been deleted or has not been completely created".
func TestClusterAsComputeResource(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	pool := object.NewResourcePool(c, types.ManagedObjectReference{Type: "ResourcePool", Value: s.ResourcePoolID})
	var pprops mo.ResourcePool
	if err := pool.Properties(ctx, pool.Reference(), []string{"owner"}, &pprops); err != nil {
		t.Fatal(err)
	}
	if pprops.Owner.Type != "ClusterComputeResource" {
		t.Fatalf("the sandbox pool's owner is a %s, want a cluster", pprops.Owner.Type)
	}
	// computeresource.StandaloneFromID
	ref := types.ManagedObjectReference{Type: "ComputeResource", Value: pprops.Owner.Value}
	obj, err := find.NewFinder(c, false).ObjectReference(ctx, ref)
	if err != nil {
		t.Fatalf("the cluster as a ComputeResource: %v", err)
	}
	cr, ok := obj.(*object.ComputeResource)
	if !ok {
		t.Fatalf("the cluster as a ComputeResource is a %T (hashicorp/vsphere asserts *object.ComputeResource)", obj)
	}
	// computeresource.BaseProperties, then envbrowse.OSFamily.
	var props mo.ComputeResource
	if err := cr.Properties(ctx, cr.Reference(), nil, &props); err != nil {
		t.Fatal(err)
	}
	if props.EnvironmentBrowser == nil {
		t.Fatal("no environment browser")
	}
	guest := Templates[1].GuestID
	res, err := methods.QueryConfigOptionEx(ctx, c, &types.QueryConfigOptionEx{This: *props.EnvironmentBrowser,
		Spec: &types.EnvironmentBrowserConfigOptionQuerySpec{GuestId: []string{guest}}})
	if err != nil || res.Returnval == nil {
		t.Fatalf("QueryConfigOptionEx: %v, %v", res, err)
	}
	for _, d := range res.Returnval.GuestOSDescriptor {
		if d.Id == guest {
			if d.Family != string(types.VirtualMachineGuestOsFamilyWindowsGuest) {
				t.Errorf("%s: family %q", guest, d.Family)
			}
			return
		}
	}
	t.Errorf("no descriptor for %s", guest)
}
