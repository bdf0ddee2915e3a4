package acctest

import (
	"context"
	"path"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// PeerValues are what hashicorp/vsphere's data sources hand out for the
// sandbox's objects, computed the way its source computes them (v2.16.1,
// vsphere/data_source_vsphere_*.go), so tests can feed them to this
// provider as a composed configuration would.
type PeerValues struct {
	// data.vsphere_compute_cluster: id and resource_pool_id
	// (clustercomputeresource.Properties: resourcePool).
	ClusterID, ClusterResourcePoolID string
	// data.vsphere_resource_pool.id (resourcepool.FromPathOrDefault).
	ResourcePoolID string
	// data.vsphere_host: id and resource_pool_id, for a host of the cluster.
	HostID, HostResourcePoolID string
	// data.vsphere_datastore.id (datastore.FromPath).
	DatastoreID string
	// data.vsphere_network.id of "VM Network" (a standard port group,
	// "network-N") and of a distributed port group ("dvportgroup-N").
	NetworkID, DVPortgroupID string
	// data.vsphere_folder.id of the sandbox's VM folder
	// (folder.FromAbsolutePath).
	FolderID string
}

// PeerVM is what the vsphere_virtual_machine data source hands out for a
// VM or template: id and uuid are the BIOS UUID (it sets the id to
// config.uuid), instance_uuid, moid, and folder (the absolute path of the
// VM's folder: path.Dir of its inventory path).
type PeerVM struct {
	ID, InstanceUUID, MOID, Folder string
}

// Peer computes PeerValues from the sandbox.
func Peer(t *testing.T) PeerValues {
	t.Helper()
	RequireSandbox(t, "the sandbox's inventory names: DC0_C0, LocalDS_0, DC0_DVPG0")
	ctx := context.Background()
	vc := VSphere(t).Client.Client
	finder := find.NewFinder(vc, true)
	dc, err := finder.Datacenter(ctx, Sandbox.VSphere.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	finder.SetDatacenter(dc)
	var v PeerValues
	cluster, err := finder.ClusterComputeResource(ctx, "DC0_C0")
	if err != nil {
		t.Fatal(err)
	}
	var cprops mo.ClusterComputeResource
	if err := cluster.Properties(ctx, cluster.Reference(), []string{"resourcePool", "host"}, &cprops); err != nil {
		t.Fatal(err)
	}
	v.ClusterID, v.ClusterResourcePoolID = cluster.Reference().Value, cprops.ResourcePool.Value
	pool, err := finder.ResourcePool(ctx, "DC0_C0/Resources")
	if err != nil {
		t.Fatal(err)
	}
	v.ResourcePoolID = pool.Reference().Value
	// vsphere_host: the host's id, and the root pool of its compute resource
	// (hostsystem.ResourcePool: the parent's resourcePool).
	host := object.NewHostSystem(vc, cprops.Host[0])
	hostPool, err := host.ResourcePool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v.HostID, v.HostResourcePoolID = host.Reference().Value, hostPool.Reference().Value
	ds, err := finder.Datastore(ctx, "LocalDS_0")
	if err != nil {
		t.Fatal(err)
	}
	v.DatastoreID = ds.Reference().Value
	for name, dst := range map[string]*string{"VM Network": &v.NetworkID, "DC0_DVPG0": &v.DVPortgroupID} {
		n, err := finder.Network(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		*dst = n.Reference().Value
	}
	folder, err := find.NewFinder(vc, false).Folder(ctx, Sandbox.VSphere.Folder)
	if err != nil {
		t.Fatal(err)
	}
	v.FolderID = folder.Reference().Value
	return v
}

// PeerVMByMOID is the vsphere_virtual_machine data source given moid
// (virtualmachine.FromMOID, then the VM's properties).
func PeerVMByMOID(t *testing.T, moid string) PeerVM {
	t.Helper()
	ctx := context.Background()
	vc := VSphere(t).Client.Client
	obj, err := find.NewFinder(vc, false).ObjectReference(ctx, vsphere.VMRef(moid))
	if err != nil {
		t.Fatal(err)
	}
	vm := obj.(*object.VirtualMachine)
	var props mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.uuid", "config.instanceUuid"}, &props); err != nil {
		t.Fatal(err)
	}
	return PeerVM{ID: props.Config.Uuid, InstanceUUID: props.Config.InstanceUuid, MOID: moid, Folder: path.Dir(vm.InventoryPath)}
}

// PeerVMByName is the vsphere_virtual_machine data source given name (a
// path relative to the datacenter's VM folder, or a bare name):
// virtualmachine.FromPath with the datacenter.
func PeerVMByName(t *testing.T, name string) PeerVM {
	t.Helper()
	RequireSandbox(t, "the sandbox's datacenter")
	ctx := context.Background()
	vc := VSphere(t).Client.Client
	finder := find.NewFinder(vc, false)
	dc, err := finder.Datacenter(ctx, Sandbox.VSphere.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	finder.SetDatacenter(dc)
	vm, err := finder.VirtualMachine(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return PeerVMByMOID(t, vm.Reference().Value)
}
