package winnode

import (
	"testing"

	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

func TestFoundImported(t *testing.T) {
	vm := &vsphere.VMInfo{
		VM: vsphere.VM{Ref: vimtypes.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-42"}, Name: "WIN-0",
			InstanceUUID: "5011aaaa-0000-0000-0000-000000000001", BIOSUUID: "4211AAAA-0000-0000-0000-000000000001"},
		ResourcePool: &vimtypes.ManagedObjectReference{Type: "ResourcePool", Value: "resgroup-7"},
		ExtraConfig:  map[string]string{ImageBuildKey: "10.0.20348.2340"},
		Disks:        []vsphere.Disk{{FileName: "[ds] win-0/win-0-000001.vmdk", ParentFileNames: []string{"[ds] img/img.vmdk"}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-0"}}
	got := Found{VM: vm, InventoryPath: "/dc1/vm/k8s/WIN-0", Node: node}.Imported()
	want := Imported{
		Identity: Identity{VMID: "vm-42", InstanceUUID: vm.InstanceUUID, BIOSUUID: vm.BIOSUUID, InventoryPath: "/dc1/vm/k8s/WIN-0"},
		Name:     "win-0", Folder: "/dc1/vm/k8s", ResourcePoolID: "resgroup-7", LinkedClone: true, WindowsBuildFull: "10.0.20348.2340",
	}
	if got != want {
		t.Errorf("Imported = %+v\nwant       %+v", got, want)
	}
	if got.ProviderID() != "vsphere://4211aaaa-0000-0000-0000-000000000001" {
		t.Errorf("ProviderID = %q", got.ProviderID())
	}

	full := Found{VM: &vsphere.VMInfo{VM: vsphere.VM{Name: "web-1"}, Disks: []vsphere.Disk{{FileName: "[ds] web-1/web-1.vmdk"}}},
		InventoryPath: "/dc1/vm/web-1"}.Imported()
	if full.LinkedClone || full.ResourcePoolID != "" || full.WindowsBuildFull != "" || full.Name != "web-1" {
		t.Errorf("a full clone without a pool or a recorded build: %+v", full)
	}
}
