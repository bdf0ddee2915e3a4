package vsphere

// What a site's vSphere adds to a clone beyond its datastore and network,
// as hashicorp/vsphere's vsphere_virtual_machine takes it (its
// datastore_cluster_id, storage_policy_id, disk and network_interface
// blocks; vsphere/internal/helper/storagepod and virtualdevice): Storage
// DRS placement in a datastore cluster, a storage policy (a PBM profile)
// on the VM's home and every disk, extra empty disks and extra NICs.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/pbm"
	pbmtypes "github.com/vmware/govmomi/pbm/types"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// ExtraDisk is an empty disk a clone gets beside its source's: thin
// provisioned on the source's first disk controller, in the VM's directory.
// The provider attaches it raw: nothing partitions or formats it.
type ExtraDisk struct {
	SizeGB int64
}

// CloneDisksKey is the extraConfig key a clone records the slots
// ("controllerKey:unitNumber", comma-separated) of the disks it was
// created with beside its source's (CloneSpec.ExtraDisks): like the
// source's (SourceDisksKey), they are the VM's own and go with it, while
// a disk attached later (a CSI volume) is detached first. Slots, not device
// keys: vCenter assigns a new device's key only when it adds it.
const CloneDisksKey = "wincluster.clone-disks"

// scsiReservedUnit is the unit number a SCSI controller takes itself on
// its bus (VirtualSCSIController.scsiCtlrUnitNumber, 7): no disk may use it.
const scsiReservedUnit = 7

// extraDiskChanges adds spec.ExtraDisks on the controller of the source's
// first disk, at its free unit numbers, and returns the changes and the
// slots they take (for CloneDisksKey).
func extraDiskChanges(devices object.VirtualDeviceList, extra []ExtraDisk, profile []types.BaseVirtualMachineProfileSpec, vmName string) ([]types.BaseVirtualDeviceConfigSpec, []string, error) {
	if len(extra) == 0 {
		return nil, nil, nil
	}
	ds := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(ds) == 0 {
		return nil, nil, fmt.Errorf("cloning %s: it has no disk whose controller the extra disks could share", vmName)
	}
	ctrl := ds[0].GetVirtualDevice().ControllerKey
	used := map[int32]bool{}
	if c, ok := devices.FindByKey(ctrl).(types.BaseVirtualSCSIController); ok {
		u := c.GetVirtualSCSIController().ScsiCtlrUnitNumber
		if u == 0 {
			u = scsiReservedUnit
		}
		used[u] = true
	}
	for _, d := range devices {
		if v := d.GetVirtualDevice(); v.ControllerKey == ctrl && v.UnitNumber != nil {
			used[*v.UnitNumber] = true
		}
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	var slots []string
	unit := int32(0)
	for i, e := range extra {
		for used[unit] {
			unit++
		}
		if unit > 15 {
			return nil, nil, fmt.Errorf("cloning %s: its first disk's controller has no free unit for extra disk %d (a SCSI controller has 15)", vmName, i+1)
		}
		u := unit
		used[u] = true
		disk := &types.VirtualDisk{
			VirtualDevice: types.VirtualDevice{
				Key: int32(-100 - i), ControllerKey: ctrl, UnitNumber: &u,
				Backing: &types.VirtualDiskFlatVer2BackingInfo{
					DiskMode:        string(types.VirtualDiskModePersistent),
					ThinProvisioned: types.NewBool(true),
				},
			},
			CapacityInKB:    e.SizeGB * gib / 1024,
			CapacityInBytes: e.SizeGB * gib,
		}
		changes = append(changes, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate,
			Device: disk, Profile: profile,
		})
		slots = append(slots, diskSlot(ctrl, u))
	}
	return changes, slots, nil
}

func diskSlot(controller, unit int32) string {
	return strconv.Itoa(int(controller)) + ":" + strconv.Itoa(int(unit))
}

// cloneDiskSlots reads CloneDisksKey's record.
func cloneDiskSlots(rec string) []string {
	var out []string
	for f := range strings.SplitSeq(rec, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// extraNICChanges adds one NIC per network, of the source's first NIC's
// type (vmxnet3 on the sandbox's templates and image-builder's), each
// connected at power-on.
func (c *Client) extraNICChanges(ctx context.Context, devices object.VirtualDeviceList, networks []mo.Reference, vmName string) ([]types.BaseVirtualDeviceConfigSpec, error) {
	if len(networks) == 0 {
		return nil, nil
	}
	nics := devices.SelectByType((*types.VirtualEthernetCard)(nil))
	var kind reflect.Type = reflect.TypeFor[types.VirtualVmxnet3]()
	if len(nics) > 0 {
		kind = reflect.TypeOf(nics[0]).Elem()
	}
	var out []types.BaseVirtualDeviceConfigSpec
	for i, n := range networks {
		ref := n.Reference()
		netObj, ok := object.NewReference(c.Client.Client, ref).(object.NetworkReference)
		if !ok {
			return nil, fmt.Errorf("cloning %s: %s is not a network", vmName, ref.Value)
		}
		backing, err := c.Lookups().backing(ref, func() (types.BaseVirtualDeviceBackingInfo, error) { return netObj.EthernetCardBackingInfo(ctx) })
		if err != nil {
			return nil, notFoundOr(err, kindName(ref.Type), ref, "reading the backing of")
		}
		card, ok := reflect.New(kind).Interface().(types.BaseVirtualEthernetCard)
		if !ok {
			return nil, fmt.Errorf("cloning %s: its first NIC (%s) is no Ethernet card", vmName, kind.Name())
		}
		e := card.GetVirtualEthernetCard()
		e.Key = int32(-200 - i)
		e.Backing = backing
		e.AddressType = string(types.VirtualEthernetCardMacTypeGenerated)
		e.Connectable = &types.VirtualDeviceConnectInfo{StartConnected: true, AllowGuestControl: true, Connected: true}
		out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: card.(types.BaseVirtualDevice)})
	}
	return out, nil
}

// storageProfile is the PBM profile spec of a storage policy id; nil for "".
func storageProfile(id string) []types.BaseVirtualMachineProfileSpec {
	if id == "" {
		return nil
	}
	return []types.BaseVirtualMachineProfileSpec{&types.VirtualMachineDefinedProfileSpec{ProfileId: id}}
}

// applyStoragePolicy puts the policy on the clone's home (the config's
// VmProfile, the relocate spec's Profile) and on each of the source's disks
// (a disk locator each, on the datastore the clone goes to, else the disk's
// own), as hashicorp/vsphere's clone does (virtualdevice.DiskCloneRelocateOperation).
func applyStoragePolicy(cs *types.VirtualMachineCloneSpec, devices object.VirtualDeviceList, id string) {
	profile := storageProfile(id)
	if profile == nil {
		return
	}
	cs.Config.VmProfile = profile
	cs.Location.Profile = profile
	for _, d := range devices.SelectByType((*types.VirtualDisk)(nil)) {
		disk := d.(*types.VirtualDisk)
		loc := types.VirtualMachineRelocateSpecDiskLocator{DiskId: disk.Key, Profile: profile}
		switch {
		case cs.Location.Datastore != nil:
			loc.Datastore = *cs.Location.Datastore
		default:
			b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo)
			if !ok || b.GetVirtualDeviceFileBackingInfo().Datastore == nil {
				continue
			}
			loc.Datastore = *b.GetVirtualDeviceFileBackingInfo().Datastore
		}
		if cs.Location.DiskMoveType != "" {
			loc.DiskMoveType = cs.Location.DiskMoveType
		}
		cs.Location.Disk = append(cs.Location.Disk, loc)
	}
}

// CheckStoragePolicy says whether vCenter's policy service (PBM) knows the
// storage policy id, and returns its name: a clone naming an unknown one
// fails only at vCenter, after the node's other checks.
func (c *Client) CheckStoragePolicy(ctx context.Context, id string) (string, error) {
	pc, err := pbm.NewClient(ctx, c.Client.Client)
	if err != nil {
		return "", fmt.Errorf("connecting to vCenter's storage policy service: %w", err)
	}
	profiles, err := pc.RetrieveContent(ctx, []pbmtypes.PbmProfileId{{UniqueId: id}})
	if soap.IsSoapFault(err) {
		if _, invalid := soap.ToSoapFault(err).VimFault().(types.InvalidArgument); invalid {
			// PBM's answer to an id it has no policy of.
			return "", &NotFoundError{Kind: "storage policy", ID: id}
		}
	}
	if err != nil {
		return "", fmt.Errorf("reading storage policy %s: %w", id, err)
	}
	for _, p := range profiles {
		if pp := p.GetPbmProfile(); pp.ProfileId.UniqueId == id {
			return pp.Name, nil
		}
	}
	return "", &NotFoundError{Kind: "storage policy", ID: id}
}

// recommendDatastore asks Storage DRS where the clone goes in the
// datastore cluster (StorageResourceManager.RecommendDatastores with a
// clone placement spec)
// and points the clone there: its first recommendation's destination.
// hashicorp/vsphere then applies the recommendation
// (ApplyStorageDrsRecommendation_Task), which runs the clone itself; here
// the clone is the provider's own CloneVM_Task to that datastore, so its
// queueing, interruption and identity handling (Clone) stay one path.
// govmomi's simulator implements RecommendDatastores but not the apply.
func (c *Client) recommendDatastore(ctx context.Context, spec CloneSpec, cs *types.VirtualMachineCloneSpec, source *mo.VirtualMachine) error {
	pod := spec.DatastoreCluster.Reference()
	folder := spec.Folder.Reference()
	vm := source.Self
	// The VM's placement in the pod; its disks follow it (no PodDiskLocator:
	// those name disks the spec creates, and the source's are not).
	placement := types.VmPodConfigForPlacement{StoragePod: pod}
	sps := types.StoragePlacementSpec{
		Type: string(types.StoragePlacementSpecPlacementTypeClone), CloneName: spec.Name, CloneSpec: cs,
		Folder: &folder, Vm: &vm, ResourcePool: cs.Location.Pool, Host: cs.Location.Host,
		PodSelectionSpec: types.StorageDrsPodSelectionSpec{StoragePod: &pod, InitialVmConfig: []types.VmPodConfigForPlacement{placement}},
	}
	res, err := object.NewStorageResourceManager(c.Client.Client).RecommendDatastores(ctx, sps)
	if err != nil {
		return notFoundOr(err, "datastore cluster", pod, "asking Storage DRS to place the clone in")
	}
	for _, r := range res.Recommendations {
		for _, a := range r.Action {
			if p, ok := a.(*types.StoragePlacementAction); ok {
				dest := p.Destination
				cs.Location.Datastore = &dest
				return nil
			}
		}
	}
	return fmt.Errorf("cloning %s: Storage DRS recommended no datastore in datastore cluster %s: is Storage DRS enabled on it, and has it a datastore with room?", spec.Name, pod.Value)
}

// hasSlot reports whether a disk sits at one of slots.
func (d Disk) hasSlot(slots []string) bool {
	return d.UnitNumber != nil && slices.Contains(slots, diskSlot(d.ControllerKey, *d.UnitNumber))
}
