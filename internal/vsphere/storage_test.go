package vsphere_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

const (
	siteProvider     = "provider@vsphere.local"
	siteProviderPass = "Pr0vider-pw!"
)

// startSite is a sandbox vCenter that checks the provider's account
// against the guide's roles, and a Client logged in as that account.
func startSite(t *testing.T) (*vcsim.Server, *vsphere.Client, *vsphere.Client) {
	t.Helper()
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bundle.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vcsim.Start(t.Context(), vcsim.Options{Certificate: cert, RootCAs: bundle.CA.Pool(),
		User: "administrator@vsphere.local", Password: "s3cret-Passw0rd", ProviderUser: siteProvider, ProviderPassword: siteProviderPass})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	login := func(user, pass string) *vsphere.Client {
		c, err := vsphere.NewClient(t.Context(), vsphere.Config{Server: srv.Server, User: user, Password: pass, CAFile: bundle.CAFile})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Logout(context.Background()) })
		return c
	}
	return srv, login(siteProvider, siteProviderPass), login(srv.User, srv.Password)
}

func ref(typ, value string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: typ, Value: value}
}

// A clone placed by Storage DRS in the datastore cluster, with a storage
// policy, an extra disk and an extra NIC, as the provider's account with
// the guide's roles; then its tags and custom attributes set and changed
// in place, and the annotation.
func TestCloneOnADatacentersVSphere(t *testing.T) {
	srv, c, admin := startSite(t)
	ctx := t.Context()
	l := c.Lookups()
	source, err := l.FindVM(ctx, srv.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := l.FindFolder(ctx, srv.Folder, ref("ResourcePool", srv.ResourcePoolID), false)
	if err != nil {
		t.Fatal(err)
	}
	if name, err := c.CheckStoragePolicy(ctx, vcsim.StoragePolicyID); err != nil || name == "" {
		t.Fatalf("CheckStoragePolicy(%s) = %q, %v", vcsim.StoragePolicyID, name, err)
	}
	if _, err := c.CheckStoragePolicy(ctx, "00000000-0000-0000-0000-000000000000"); !vsphere.IsNotFound(err) {
		t.Errorf("an unknown storage policy: %v, want not found", err)
	}
	// The sandbox's second network: a distributed port group.
	var dvpg []mo.DistributedVirtualPortgroup
	v, err := view.NewManager(admin.Client.Client).CreateContainerView(ctx, admin.ServiceContent.RootFolder, []string{"DistributedVirtualPortgroup"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Retrieve(ctx, []string{"DistributedVirtualPortgroup"}, []string{"name"}, &dvpg); err != nil {
		t.Fatal(err)
	}
	var second types.ManagedObjectReference
	for _, pg := range dvpg {
		if pg.Name == "DC0_DVPG0" {
			second = pg.Self
		}
	}
	spec := vsphere.CloneSpec{
		Source: source, Name: "site-node", Folder: folder, ResourcePool: ref("ResourcePool", srv.ResourcePoolID),
		DatastoreCluster: ref("StoragePod", srv.Site.DatastoreClusterID), StoragePolicyID: vcsim.StoragePolicyID,
		ExtraDisks: []vsphere.ExtraDisk{{SizeGB: 20}}, ExtraNetworks: []mo.Reference{second}, Annotation: "first notes",
	}
	vm, err := c.Clone(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	var got mo.VirtualMachine
	if err := property.DefaultCollector(admin.Client.Client).RetrieveOne(ctx, vm.Ref, []string{"datastore", "network", "config.hardware.device", "customValue"}, &got); err != nil {
		t.Fatal(err)
	}
	if want := ref("Datastore", srv.Site.PooledDatastoreID); !slices.Contains(got.Datastore, want) {
		t.Errorf("the clone is on %v, want Storage DRS's choice in the datastore cluster, %s", got.Datastore, want.Value)
	}
	if !slices.Contains(got.Network, second) || len(got.Network) != 2 {
		t.Errorf("the clone's networks are %v, want the template's and %s", got.Network, second.Value)
	}
	devices := object.VirtualDeviceList(got.Config.Hardware.Device)
	disks := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(disks) != 2 {
		t.Fatalf("the clone has %d disks, want the template's and one extra", len(disks))
	}
	if extra := disks[1].(*types.VirtualDisk); extra.CapacityInBytes != 20<<30 {
		t.Errorf("the extra disk has %d bytes, want 20 GiB", extra.CapacityInBytes)
	}
	if n := len(devices.SelectByType((*types.VirtualEthernetCard)(nil))); n != 2 {
		t.Errorf("the clone has %d NICs, want 2", n)
	}
	info, err := c.ReadVM(ctx, vm.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if info.Annotation != "first notes" {
		t.Errorf("the clone's notes are %q, want the clone spec's (the sandbox plays vCenter there: vcsim drops them)", info.Annotation)
	}
	if added := vsphere.AddedDisks(info); len(added) != 0 {
		t.Errorf("the clone's own extra disk counts as added later (it would be detached and kept at destroy): %v", added)
	}

	key := srv.Site.CustomAttributeKey
	tag0, tag1 := srv.Site.TagIDs[0], srv.Site.TagIDs[1]
	first := vsphere.Metadata{Tags: []string{tag0}, CustomAttributes: map[string]string{key: "worker"}}
	if err := c.SetMetadata(ctx, vm.Ref, vsphere.Metadata{}, first); err != nil {
		t.Fatal(err)
	}
	checkMetadata := func(wantTags []string, wantValue string) {
		t.Helper()
		tags, err := admin.AttachedTags(ctx, vm.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tags, wantTags) {
			t.Errorf("tags %v, want %v", tags, wantTags)
		}
		var m mo.ManagedEntity
		if err := property.DefaultCollector(admin.Client.Client).RetrieveOne(ctx, vm.Ref, []string{"customValue"}, &m); err != nil {
			t.Fatal(err)
		}
		value := ""
		for _, cv := range m.CustomValue {
			if s, ok := cv.(*types.CustomFieldStringValue); ok && s.Key == mustAtoi(t, key) {
				value = s.Value
			}
		}
		if value != wantValue {
			t.Errorf("custom attribute %s = %q, want %q", key, value, wantValue)
		}
	}
	checkMetadata([]string{tag0}, "worker")
	// In place: the tag swapped, the attribute removed (cleared).
	if err := c.SetMetadata(ctx, vm.Ref, first, vsphere.Metadata{Tags: []string{tag1}}); err != nil {
		t.Fatal(err)
	}
	checkMetadata([]string{tag1}, "")
	if err := c.SetAnnotation(ctx, vm.Ref, "storage-nic node"); err != nil {
		t.Fatal(err)
	}
	if info, err = admin.ReadVM(ctx, vm.Ref); err != nil || info.Annotation != "storage-nic node" {
		t.Errorf("annotation %q, %v; want the one set", info.Annotation, err)
	}
}

// The sandbox refuses what the features need without the guide's
// privileges: an extra disk without VirtualMachine.Config.AddNewDisk, a
// custom attribute without Global.SetCustomField, a tag without
// InventoryService.Tagging.AttachTag.
func TestSiteFeaturesNeedTheirPrivileges(t *testing.T) {
	srv, c, admin := startSite(t)
	ctx := t.Context()
	am := object.NewAuthorizationManager(admin.Client.Client)
	roles, err := am.RoleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	role := roles.ByName("windows-nodes")
	without := slices.DeleteFunc(slices.Clone(role.Privilege), func(p string) bool {
		return p == "VirtualMachine.Config.AddNewDisk" || p == "Global.SetCustomField" || p == "InventoryService.Tagging.AttachTag" ||
			strings.HasPrefix(p, "System.")
	})
	l := c.Lookups()
	source, err := l.FindVM(ctx, srv.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := l.FindFolder(ctx, srv.Folder, ref("ResourcePool", srv.ResourcePoolID), false)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := c.Clone(ctx, vsphere.CloneSpec{Source: source, Name: "plain", Folder: folder, ResourcePool: ref("ResourcePool", srv.ResourcePoolID)})
	if err != nil {
		t.Fatal(err)
	}
	if err := am.UpdateRole(ctx, role.RoleId, role.Name, without); err != nil {
		t.Fatal(err)
	}
	_, err = c.Clone(ctx, vsphere.CloneSpec{Source: source, Name: "with-disk", Folder: folder, ResourcePool: ref("ResourcePool", srv.ResourcePoolID),
		ExtraDisks: []vsphere.ExtraDisk{{SizeGB: 1}}})
	if err == nil || !strings.Contains(err.Error(), "VirtualMachine.Config.AddNewDisk") {
		t.Errorf("an extra disk without VirtualMachine.Config.AddNewDisk: %v, want refused naming it", err)
	}
	err = c.SetMetadata(ctx, vm.Ref, vsphere.Metadata{}, vsphere.Metadata{CustomAttributes: map[string]string{srv.Site.CustomAttributeKey: "x"}})
	if err == nil || !strings.Contains(err.Error(), "Global.SetCustomField") {
		t.Errorf("a custom attribute without Global.SetCustomField: %v, want refused naming it", err)
	}
	err = c.SetMetadata(ctx, vm.Ref, vsphere.Metadata{}, vsphere.Metadata{Tags: srv.Site.TagIDs[:1]})
	if err == nil || !strings.Contains(err.Error(), "InventoryService.Tagging.AttachTag") {
		t.Errorf("a tag without InventoryService.Tagging.AttachTag: %v, want refused naming it", err)
	}
	if tags, err := admin.AttachedTags(ctx, vm.Ref); err != nil || len(tags) != 0 {
		t.Errorf("tags after the refusal: %v, %v; want none", tags, err)
	}
}

func mustAtoi(t *testing.T, s string) int32 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		t.Fatalf("%q is not a custom attribute key: %v", s, err)
	}
	return int32(n)
}

// TestListingTagsNeedsRead: a refresh's read of a VM's tags (AttachedTags)
// works with the guide's roles, which hold System.Read on the VMs, and the
// sandbox refuses it, naming System.Read, on a VM the account may not
// read (as vCenter's list_attached_tags needs the read privilege on the
// object).
func TestListingTagsNeedsRead(t *testing.T) {
	srv, c, admin := startSite(t)
	ctx := t.Context()
	tmpl, err := c.Lookups().FindVM(ctx, srv.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AttachedTags(ctx, tmpl); err != nil {
		t.Fatalf("the provider's account listing a template's tags: %v", err)
	}
	am := object.NewAuthorizationManager(admin.Client.Client)
	roles, err := am.RoleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	noAccess := roles.ByName("NoAccess")
	if noAccess == nil {
		t.Fatal("the simulator has no NoAccess role")
	}
	entity := tmpl.Reference()
	if err := am.SetEntityPermissions(ctx, entity, []types.Permission{{Entity: &entity, Principal: siteProvider, RoleId: noAccess.RoleId}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.AttachedTags(ctx, tmpl)
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") || !strings.Contains(err.Error(), "System.Read") {
		t.Errorf("listing the tags of a VM the account may not read: %v, want refused (403) naming System.Read", err)
	}
}
