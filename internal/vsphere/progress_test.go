package vsphere

import (
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestWaitProgressNamesWhatIsAwaited(t *testing.T) {
	vm := waitProgress(types.ManagedObjectReference{Type: TypeVirtualMachine, Value: "vm-7"}, props{
		"runtime.powerState":         types.VirtualMachinePowerStatePoweredOn,
		"guest.toolsRunningStatus":   "guestToolsRunning",
		"guest.guestOperationsReady": false,
		propCustomizationInfo:        &types.GuestInfoCustomizationInfo{CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_RUNNING)},
	})
	want := map[string]any{"object_id": "vm-7", "power_state": "poweredOn", "tools": "guestToolsRunning", "guest_operations_ready": false, "customization": "TOOLSDEPLOYPKG_RUNNING"}
	for k, v := range want {
		if vm[k] != v {
			t.Errorf("VM wait: %s = %v, want %v (all: %v)", k, vm[k], v, vm)
		}
	}
	task := waitProgress(types.ManagedObjectReference{Type: "Task", Value: "task-9"}, props{
		"info.state": types.TaskInfoStateQueued, "info.name": "CloneVM_Task", "info.entityName": "win2022-base", "info.progress": int32(0),
	})
	for k, v := range map[string]any{"state": "queued", "method": "CloneVM_Task", "object": "win2022-base", "progress_percent": int32(0)} {
		if task[k] != v {
			t.Errorf("task wait: %s = %v, want %v (all: %v)", k, task[k], v, task)
		}
	}
	if got := waitProgress(types.ManagedObjectReference{Type: "Task", Value: "task-9"}, nil)["state"]; got != "not reported yet" {
		t.Errorf("before vCenter reports: state %v", got)
	}
}
