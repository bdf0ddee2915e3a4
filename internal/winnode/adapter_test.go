package winnode

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// vcsimAdapter is the adapter on a fresh simulated vCenter.
func vcsimAdapter(t *testing.T) (vsphereAdapter, *vcsim.Server) {
	t.Helper()
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bundle.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vcsim.Start(context.Background(), vcsim.Options{Certificate: cert, RootCAs: bundle.CA.Pool(), User: "administrator@vsphere.local", Password: "s3cret-Passw0rd"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := vsphere.NewClient(context.Background(), vsphere.Config{Server: srv.Server, User: srv.User, Password: srv.Password, CAFile: bundle.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return vsphereAdapter{c}, srv
}

func adapterRequest(srv *vcsim.Server, template, name string, i int) CloneRequest {
	return CloneRequest{
		Template: template, Name: name, Folder: srv.Folder + "/nodes",
		ResourcePoolID: srv.ResourcePoolID, DatastoreID: srv.DatastoreID, NetworkID: srv.NetworkID,
		Sysprep: vsphere.Sysprep{ComputerName: fmt.Sprintf("NODE-%d", i), AdminPassword: "N0de-Passw0rd!",
			IPv4: &vsphere.StaticIPv4{Address: fmt.Sprintf("127.0.62.%d", i+1), PrefixLength: 8, Gateway: "127.0.0.1"}},
	}
}

// TestAdapterCreateRoundTrips: the vSphere part of 10 node creates side by
// side through one adapter (as a pool creates its members): the placement
// is looked up once for all of them, the waits share the Client's
// collector, and a node costs at most 8 round trips (34.8 with a collector
// per wait and a lookup per node).
func TestAdapterCreateRoundTrips(t *testing.T) {
	a, srv := vcsimAdapter(t)
	ctx := t.Context()
	const n = 10
	before := srv.Calls()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			id, err := a.CloneNode(ctx, adapterRequest(srv, srv.Templates["2022"], fmt.Sprintf("node-%d", i), i))
			if err == nil {
				err = a.PowerOn(ctx, id.VMID)
			}
			if err == nil {
				err = a.WaitForCustomization(ctx, id.VMID)
			}
			var ip string
			if err == nil {
				ip, err = a.WaitForIP(ctx, id.VMID)
			}
			if want := fmt.Sprintf("127.0.62.%d", i+1); err == nil && ip != want {
				err = fmt.Errorf("node-%d: IP %s, want %s", i, ip, want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	calls, total := srv.CallsSince(before)
	t.Logf("%d creates: %d round trips (%.1f per node): %v", n, total, float64(total)/n, calls)
	// The template, the folder and (it is created) its parent, once.
	if calls["FindByInventoryPath"] > 3 || calls["CreateFolder"] != 1 {
		t.Errorf("%d FindByInventoryPath and %d CreateFolder for %d nodes, want the placement looked up once", calls["FindByInventoryPath"], calls["CreateFolder"], n)
	}
	if per := float64(total) / n; per > 8 {
		t.Errorf("%.1f round trips per node, want at most 8", per)
	}
}

// TestAdapterCloneAfterTemplateReplaced: a template replaced at the same
// inventory path (a new golden image) after the adapter remembered the old
// one: the clone finds the old one gone, forgets what it remembered and
// clones the new one.
func TestAdapterCloneAfterTemplateReplaced(t *testing.T) {
	a, srv := vcsimAdapter(t)
	ctx := t.Context()
	c := a.c
	// A template of our own, at a path we can replace.
	base, err := c.FindVMByPath(ctx, srv.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := c.FindFolderByPath(ctx, srv.Folder, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := c.FindResourcePoolByID(ctx, srv.ResourcePoolID)
	if err != nil {
		t.Fatal(err)
	}
	makeTemplate := func() *vsphere.VM {
		t.Helper()
		vm, err := c.Clone(ctx, vsphere.CloneSpec{Source: base, Name: "golden", Folder: folder, ResourcePool: pool})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.MarkAsTemplate(ctx, vm); err != nil {
			t.Fatal(err)
		}
		return vm
	}
	old := makeTemplate()
	if _, err := a.CloneNode(ctx, adapterRequest(srv, old.InventoryPath, "node-a", 0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(ctx, old); err != nil {
		t.Fatal(err)
	}
	replacement := makeTemplate()
	if replacement.InventoryPath != old.InventoryPath || replacement.ID() == old.ID() {
		t.Fatalf("replacement %+v of %+v", replacement, old)
	}
	id, err := a.CloneNode(ctx, adapterRequest(srv, old.InventoryPath, "node-b", 1))
	if err != nil {
		t.Fatalf("a clone after the template was replaced: %v", err)
	}
	info, err := c.ReadVM(ctx, vsphere.VMRef(id.VMID))
	if err != nil || info.Name != "node-b" {
		t.Errorf("the clone: %+v %v", info, err)
	}
}
