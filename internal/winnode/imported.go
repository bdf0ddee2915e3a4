package winnode

import "path"

// Imported is what an import can tell of a node from its VM (and the Node
// it backs): who it is and where it is, and the build its golden image
// recorded. The template, the placement ids the clone was not asked for, the
// static IPv4 settings and the cluster overrides are not among them: the
// first update records the configuration's.
type Imported struct {
	Identity
	Name           string // the Node's, else the VM's in lower case
	Folder         string // inventory path of the VM's folder
	ResourcePoolID string // "" when the VM has no resource pool (a template)
	// LinkedClone: the VM's first disk is a delta disk on a parent, as a
	// linked clone's is.
	LinkedClone bool
	// WindowsBuildFull is the build the golden image recorded (ImageBuildKey);
	// "" for a VM not cloned from one.
	WindowsBuildFull string
}

// Imported describes the found node as an import records it.
func (f Found) Imported() Imported {
	vm := f.VM
	im := Imported{
		Identity: Identity{VMID: vm.ID(), InstanceUUID: vm.InstanceUUID, BIOSUUID: vm.BIOSUUID, InventoryPath: f.InventoryPath},
		Name:     f.Name(), Folder: path.Dir(f.InventoryPath),
		LinkedClone:      len(vm.Disks) > 0 && len(vm.Disks[0].ParentFileNames) > 0,
		WindowsBuildFull: vm.ExtraConfig[ImageBuildKey],
	}
	if vm.ResourcePool != nil {
		im.ResourcePoolID = vm.ResourcePool.Value
	}
	return im
}
