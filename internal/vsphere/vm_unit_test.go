package vsphere

import (
	"slices"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

// TestBackingChain follows a linked clone's delta disk through backings of
// different types to its base disk, and stops at a backing with no chain.
func TestBackingChain(t *testing.T) {
	base := &types.VirtualDiskFlatVer2BackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] base/base.vmdk"}}
	mid := &types.VirtualDiskSparseVer2BackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] tpl/tpl-000001.vmdk"}}
	leaf := &types.VirtualDiskSeSparseBackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] vm/vm.vmdk"}}
	// Each type's Parent is of its own type: build the chain through them.
	leaf.Parent = &types.VirtualDiskSeSparseBackingInfo{VirtualDeviceFileBackingInfo: mid.VirtualDeviceFileBackingInfo}
	mid.Parent = &types.VirtualDiskSparseVer2BackingInfo{VirtualDeviceFileBackingInfo: base.VirtualDeviceFileBackingInfo}

	file, parents := backingChain(leaf)
	if file != "[ds] vm/vm.vmdk" || !slices.Equal(parents, []string{"[ds] tpl/tpl-000001.vmdk"}) {
		t.Errorf("SeSparse chain: file %q parents %q", file, parents)
	}
	file, parents = backingChain(mid)
	if file != "[ds] tpl/tpl-000001.vmdk" || !slices.Equal(parents, []string{"[ds] base/base.vmdk"}) {
		t.Errorf("SparseVer2 chain: file %q parents %q", file, parents)
	}
	flat := &types.VirtualDiskFlatVer2BackingInfo{
		VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] c/c.vmdk"},
		Parent: &types.VirtualDiskFlatVer2BackingInfo{
			VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] b/b.vmdk"},
			Parent:                       base,
		},
	}
	file, parents = backingChain(flat)
	if file != "[ds] c/c.vmdk" || !slices.Equal(parents, []string{"[ds] b/b.vmdk", "[ds] base/base.vmdk"}) {
		t.Errorf("FlatVer2 chain: file %q parents %q", file, parents)
	}
	rdm := &types.VirtualDiskRawDiskMappingVer1BackingInfo{VirtualDeviceFileBackingInfo: types.VirtualDeviceFileBackingInfo{FileName: "[ds] r/r.vmdk"}}
	if file, parents := backingChain(rdm); file != "[ds] r/r.vmdk" || len(parents) != 0 {
		t.Errorf("RDM without parent: file %q parents %q", file, parents)
	}
	if file, parents := backingChain(&types.VirtualDiskRawDiskVer2BackingInfo{DescriptorFileName: "[ds] raw.vmdk"}); file != "" || parents != nil {
		t.Errorf("raw disk (no chain): file %q parents %q", file, parents)
	}
}
