package winnode

import (
	"context"
	"fmt"

	vimtypes "github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// NewManager runs node operations against a vCenter session and a cluster,
// connecting to guests with remote.Connect: the one place the concrete
// clients meet the Manager's interfaces. k may be nil for operations that
// need no cluster (Read then reads the VM alone).
func NewManager(vc *vsphere.Client, k *kube.Client) *Manager {
	m := &Manager{VSphere: vsphereAdapter{vc}, Connect: remote.Connect}
	if k != nil {
		m.Kube = k
	}
	return m
}

var _ Kube = (*kube.Client)(nil)

// vsphereAdapter implements VSphere with internal/vsphere.
type vsphereAdapter struct{ c *vsphere.Client }

// CloneNode resolves the placement through the Client's lookups, which
// every node of the run shares (a template, folder or pool is looked up
// once, not once per node). A remembered object that has gone since (a
// template replaced at the same path) fails the clone as not found before
// any VM exists: the lookups are then forgotten and the clone tried once
// more with fresh ones.
func (a vsphereAdapter) CloneNode(ctx context.Context, req CloneRequest) (Identity, error) {
	id, err := a.cloneNode(ctx, req)
	if err != nil && id.VMID == "" && vsphere.IsNotFound(err) && a.c.Lookups().Forget() {
		id, err = a.cloneNode(ctx, req)
	}
	return id, err
}

func (a vsphereAdapter) cloneNode(ctx context.Context, req CloneRequest) (Identity, error) {
	l := a.c.Lookups()
	source, err := l.FindVM(ctx, req.Template)
	if err != nil {
		return Identity{}, err
	}
	sysprep := req.Sysprep
	cs := vsphere.CloneSpec{
		Source: source, Name: req.Name, NumCPUs: req.NumCPUs, MemoryMB: req.MemoryMB, DiskSizeGB: req.DiskSizeGB,
		LinkedClone: req.LinkedClone, Annotation: req.Annotation, ExtraConfig: req.ExtraConfig, Sysprep: &sysprep,
	}
	pool, err := l.FindResourcePoolByID(ctx, req.ResourcePoolID)
	if err != nil {
		return Identity{}, err
	}
	cs.ResourcePool = pool
	// After the pool: a relative folder path is relative to its datacenter.
	if cs.Folder, err = l.FindFolder(ctx, req.Folder, pool, true); err != nil {
		return Identity{}, err
	}
	if req.DatastoreID != "" {
		if cs.Datastore, err = l.FindDatastoreByID(ctx, req.DatastoreID); err != nil {
			return Identity{}, err
		}
	}
	if req.NetworkID != "" {
		if cs.Network, err = l.FindNetworkByID(ctx, req.NetworkID); err != nil {
			return Identity{}, err
		}
	}
	if req.HostID != "" {
		if cs.Host, err = l.FindHostByID(ctx, req.HostID); err != nil {
			return Identity{}, err
		}
	}
	if err := a.siteSpec(ctx, req.Site, &cs); err != nil {
		return Identity{}, err
	}
	vm, err := a.c.Clone(ctx, cs)
	if vm == nil {
		return Identity{}, err
	}
	if err == nil {
		// Right after the clone: a failure leaves a tracked VM (the caller
		// saves it), which the next apply replaces.
		if err = a.c.SetMetadata(ctx, vm.Ref, vsphere.Metadata{}, req.Site.Metadata); err != nil {
			err = fmt.Errorf("cloned %s, then: %w", vm.Name, err)
		}
	}
	// With an error too: the VM exists (its identity could not be read in
	// full), and the caller must track it.
	return Identity{VMID: vm.ID(), InstanceUUID: vm.InstanceUUID, BIOSUUID: vm.BIOSUUID, InventoryPath: vm.InventoryPath}, err
}

// siteSpec resolves a node's datastore cluster and extra networks, and
// checks its storage policy exists: a policy vCenter does not know fails
// here, naming it, before any VM exists.
func (a vsphereAdapter) siteSpec(ctx context.Context, site SiteVM, cs *vsphere.CloneSpec) error {
	l := a.c.Lookups()
	if site.DatastoreClusterID != "" {
		pod, err := l.FindDatastoreClusterByID(ctx, site.DatastoreClusterID)
		if err != nil {
			return err
		}
		cs.DatastoreCluster = pod
	}
	if site.StoragePolicyID != "" {
		if _, err := a.c.CheckStoragePolicy(ctx, site.StoragePolicyID); err != nil {
			return fmt.Errorf("storage_policy_id %s: %w", site.StoragePolicyID, err)
		}
		cs.StoragePolicyID = site.StoragePolicyID
	}
	for _, size := range site.ExtraDiskSizesGB {
		cs.ExtraDisks = append(cs.ExtraDisks, vsphere.ExtraDisk{SizeGB: size})
	}
	for _, id := range site.ExtraNetworkIDs {
		n, err := l.FindNetworkByID(ctx, id)
		if err != nil {
			return err
		}
		cs.ExtraNetworks = append(cs.ExtraNetworks, n)
	}
	return nil
}

func (a vsphereAdapter) SetMetadata(ctx context.Context, vmID string, had, want vsphere.Metadata) error {
	return a.c.SetMetadata(ctx, vsphere.VMRef(vmID), had, want)
}

func (a vsphereAdapter) SetAnnotation(ctx context.Context, vmID, text string) error {
	return a.c.SetAnnotation(ctx, vsphere.VMRef(vmID), text)
}

func (a vsphereAdapter) AttachedTags(ctx context.Context, vmID string) ([]string, error) {
	return a.c.AttachedTags(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) PowerOn(ctx context.Context, vmID string) error {
	return a.c.PowerOn(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) WaitForCustomization(ctx context.Context, vmID string) error {
	return a.c.WaitForCustomization(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) WaitForIP(ctx context.Context, vmID string) (string, error) {
	return a.c.WaitForIP(ctx, vsphere.VMRef(vmID), vsphere.IPFilter{})
}

func (a vsphereAdapter) Reconfigure(ctx context.Context, vmID string, hw vsphere.Hardware) error {
	return a.c.Reconfigure(ctx, vsphere.VMRef(vmID), hw)
}

func (a vsphereAdapter) GrowDisk(ctx context.Context, vmID string, sizeGB int64) error {
	return a.c.GrowDisk(ctx, vsphere.VMRef(vmID), sizeGB)
}

func (a vsphereAdapter) ShutdownGuest(ctx context.Context, vmID string) error {
	return a.c.ShutdownGuest(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) WaitForGuestRestart(ctx context.Context, vmID string) error {
	return a.c.WaitForGuestRestart(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) WaitForPoweredOff(ctx context.Context, vmID string) error {
	return a.c.WaitForPowerState(ctx, vsphere.VMRef(vmID), vimtypes.VirtualMachinePowerStatePoweredOff)
}

func (a vsphereAdapter) PowerOff(ctx context.Context, vmID string) error {
	return a.c.PowerOff(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) Destroy(ctx context.Context, vmID string) error {
	return a.c.Destroy(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) ReadVM(ctx context.Context, vmID string) (*vsphere.VMInfo, error) {
	return a.c.ReadVM(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) ReadVMs(ctx context.Context, vmIDs []string) (map[string]*vsphere.VMInfo, error) {
	refs := make([]vimtypes.ManagedObjectReference, 0, len(vmIDs))
	for _, id := range vmIDs {
		refs = append(refs, vsphere.VMRef(id))
	}
	infos, err := a.c.ReadVMs(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*vsphere.VMInfo, len(infos))
	for ref, info := range infos {
		out[ref.Value] = info
	}
	return out, nil
}

func (a vsphereAdapter) InventoryPaths(ctx context.Context, vmIDs []string) (map[string]string, error) {
	refs := make([]vimtypes.ManagedObjectReference, 0, len(vmIDs))
	for _, id := range vmIDs {
		refs = append(refs, vsphere.VMRef(id))
	}
	paths, err := a.c.InventoryPaths(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(paths))
	for ref, p := range paths {
		out[ref.Value] = p
	}
	return out, nil
}

func (a vsphereAdapter) FindVMByUUID(ctx context.Context, uuid string, instance bool) (string, error) {
	ref, err := a.c.FindVMByUUID(ctx, uuid, instance)
	return ref.Value, err
}

func (a vsphereAdapter) FindVMByPath(ctx context.Context, inventoryPath string) (string, error) {
	ref, err := a.c.FindVMByPath(ctx, inventoryPath)
	return ref.Value, err
}

func (a vsphereAdapter) ListVMs(ctx context.Context, folder string) ([]*vsphere.VMInfo, error) {
	var root vimtypes.ManagedObjectReference
	if folder != "" {
		var err error
		if root, err = a.c.FindFolder(ctx, folder, vimtypes.ManagedObjectReference{}, false); err != nil {
			return nil, err
		}
	}
	return a.c.ListVMs(ctx, root)
}

func (a vsphereAdapter) GuestOperations(vmID string) *remote.GuestOperations {
	ref := vsphere.VMRef(vmID)
	return &remote.GuestOperations{Client: a.c.Client.Client, VM: ref,
		WaitReady: func(ctx context.Context) error { return a.c.WaitForGuestOperations(ctx, ref) }}
}

func (a vsphereAdapter) VCenterID() string { return a.c.VCenterID() }

func (a vsphereAdapter) VMGone(ctx context.Context, vmID string) (bool, error) {
	return a.c.VMGone(ctx, vsphere.VMRef(vmID))
}

func (a vsphereAdapter) DetachDisks(ctx context.Context, vmID string, keys []int32) error {
	return a.c.DetachDisks(ctx, vsphere.VMRef(vmID), keys)
}

// FindClone resolves the folder through the run's lookups, as CloneNode
// does, and asks for the VM of the clone's name in it: one round trip when
// there is none, the usual case.
func (a vsphereAdapter) FindClone(ctx context.Context, req CloneRequest) (*vsphere.VMInfo, error) {
	l := a.c.Lookups()
	pool, err := l.FindResourcePoolByID(ctx, req.ResourcePoolID)
	if err != nil {
		return nil, err
	}
	folder, err := l.FindFolder(ctx, req.Folder, pool, false)
	if vsphere.IsNotFound(err) {
		return nil, &vsphere.NotFoundError{Kind: "virtual machine", ID: req.Folder + "/" + req.Name}
	}
	if err != nil {
		return nil, err
	}
	ref, err := a.c.FindVMInFolder(ctx, folder, req.Name)
	if err != nil {
		return nil, err
	}
	return a.c.ReadVM(ctx, ref)
}
