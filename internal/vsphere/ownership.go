package vsphere

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// SourceDisksKey is the extraConfig key a clone records the device keys of
// the disks it got from its source in (comma-separated), in the clone spec
// itself, so the record exists from the VM's first moment: every other
// disk was attached later (a CSI volume, a disk added by hand), and is
// detached, not destroyed, with the VM (DetachAddedDisks). Not a guestinfo.*
// key: the guest can set those (vmtoolsd --cmd "info-set"), and it must not
// be able to make the provider destroy a disk.
const SourceDisksKey = "wincluster.source-disks"

// VCenterID is the vCenter's instance UUID: what makes a managed object id
// ("vm-42") unique across vCenters. "" when vCenter does not give one.
func (c *Client) VCenterID() string {
	return c.Client.ServiceContent.About.InstanceUuid
}

// VMGone reports whether vCenter says the VM does not exist: a
// ManagedObjectNotFound fault for its managed object id. That is the only
// proof of absence: a VM the session may not read (a folder outside its
// role) is left out of a property collector's answer without a fault, and
// a search by UUID finds nothing either, while the VM runs.
func (c *Client) VMGone(ctx context.Context, vm mo.Reference) (bool, error) {
	ref := vm.Reference()
	var m mo.VirtualMachine
	err := c.retrieveOne(ctx, ref, []string{"name"}, &m)
	if _, ok := managedObjectNotFound(err); ok {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading virtual machine %s: %w", ref.Value, err)
	}
	return false, nil
}

// sourceDiskKeys formats the keys of the disks among devices for
// SourceDisksKey.
func sourceDiskKeys(devices []types.BaseVirtualDevice) string {
	var keys []string
	for _, d := range disks(devices) {
		keys = append(keys, strconv.Itoa(int(d.Key)))
	}
	return strings.Join(keys, ",")
}

// AddedDisks are the disks of a VM that it did not get from its clone
// source, as SourceDisksKey records them, nor from its clone spec
// (CloneDisksKey). A VM without the record (cloned
// before it existed) has every disk but its first counted as added only
// when the disk's file lies outside the VM's own directory: a clone's disks
// are copied (or, linked, their child disks made) into that directory,
// while a CSI volume (a first-class disk) lives in the datastore's fcd/.
func AddedDisks(info *VMInfo) []Disk {
	if rec, ok := info.ExtraConfig[SourceDisksKey]; ok {
		var source []int32
		for f := range strings.SplitSeq(rec, ",") {
			if k, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				source = append(source, int32(k))
			}
		}
		own := cloneDiskSlots(info.ExtraConfig[CloneDisksKey])
		var added []Disk
		for _, d := range info.Disks {
			if !slices.Contains(source, d.Key) && !d.hasSlot(own) {
				added = append(added, d)
			}
		}
		return added
	}
	if len(info.Disks) < 2 {
		return nil
	}
	dir := datastoreDir(info.Disks[0].FileName)
	var added []Disk
	for _, d := range info.Disks[1:] {
		if dir == "" || datastoreDir(d.FileName) != dir {
			added = append(added, d)
		}
	}
	return added
}

// datastoreDir is the "[datastore] directory" part of a datastore path.
func datastoreDir(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// DetachDisks removes the disks with keys from the VM without deleting
// their files (no FileOperation in the device change: a detach, as the
// vSphere provider detaches its keep_on_remove and attached disks before a
// destroy, in DiskDestroyOperation). The VM must be powered off for disks
// that do not support hot removal.
func (c *Client) DetachDisks(ctx context.Context, vm mo.Reference, keys []int32) error {
	if len(keys) == 0 {
		return nil
	}
	ref := vm.Reference()
	var m mo.VirtualMachine
	if err := c.retrieveOne(ctx, ref, []string{"config.hardware.device"}, &m); err != nil {
		return notFoundOr(err, "virtual machine", ref, "reading the disks of")
	}
	if m.Config == nil {
		return fmt.Errorf("virtual machine %s has no configuration to detach disks from", ref.Value)
	}
	spec := types.VirtualMachineConfigSpec{}
	for _, d := range m.Config.Hardware.Device {
		if vd, ok := d.(*types.VirtualDisk); ok && slices.Contains(keys, vd.Key) {
			spec.DeviceChange = append(spec.DeviceChange, &types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationRemove, Device: vd,
			})
		}
	}
	if len(spec.DeviceChange) == 0 {
		return nil
	}
	return c.reconfigure(ctx, ref, spec, "detaching disks of")
}

// FindVMInFolder finds the VM named name directly in folder (one
// FindChild round trip: vCenter keeps names unique within a folder). None
// is a *NotFoundError.
func (c *Client) FindVMInFolder(ctx context.Context, folder types.ManagedObjectReference, name string) (types.ManagedObjectReference, error) {
	ref, err := object.NewSearchIndex(c.Client.Client).FindChild(ctx, object.NewFolder(c.Client.Client, folder), name)
	if err != nil {
		return types.ManagedObjectReference{}, notFoundOr(err, "folder", folder, "searching")
	}
	if ref == nil || ref.Reference().Type != TypeVirtualMachine {
		return types.ManagedObjectReference{}, &NotFoundError{Kind: "virtual machine", ID: folder.Value + "/" + name}
	}
	return ref.Reference(), nil
}
