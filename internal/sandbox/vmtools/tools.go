package vmtools

import (
	"context"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// reportGuest tells vSphere what VMware Tools in the guest would: running
// or not (a reboot is Tools stopping and running again), and once the guest
// is up its address (guest.ipAddress, guest.net: the leased or the
// customization's static one; the sandbox runs Windows customizations
// itself, customization.go) and, for a VM that was not
// customized, its host name.
func (h *Hosts) reportGuest(st *vmState, up, withName bool) {
	vm, ok := h.reg.Get(st.ref).(*simulator.VirtualMachine)
	if !ok {
		return
	}
	tools, status, guestState := types.VirtualMachineToolsRunningStatusGuestToolsNotRunning, types.VirtualMachineToolsStatusToolsNotRunning, "notRunning"
	if up {
		tools, status, guestState = types.VirtualMachineToolsRunningStatusGuestToolsRunning, types.VirtualMachineToolsStatusToolsOk, "running"
	}
	ctx := &simulator.Context{Context: context.Background(), Map: h.reg}
	ctx.WithLock(vm, func() {
		if vm.Guest == nil || (up && vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn) {
			return
		}
		changes := []types.PropertyChange{
			{Name: "guest.toolsRunningStatus", Val: string(tools)},
			{Name: "guest.toolsStatus", Val: status},
			{Name: "guest.guestState", Val: guestState},
			// Guest operations (StartProgramInGuest, file transfers) are
			// ready when VMware Tools is (guestops.go answers them then).
			{Name: "guest.guestOperationsReady", Val: up},
			{Name: "summary.guest.toolsRunningStatus", Val: string(tools)},
			{Name: "summary.guest.toolsStatus", Val: status},
		}
		if up && vm.Guest.IpAddress != st.ip {
			nets := append([]types.GuestNicInfo(nil), vm.Guest.Net...)
			if len(nets) > 0 {
				nets[0].IpAddress = []string{st.ip}
				nets[0].IpConfig = &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{{IpAddress: st.ip, PrefixLength: 8, State: "preferred"}}}
			}
			changes = append(changes,
				types.PropertyChange{Name: "guest.ipAddress", Val: st.ip},
				types.PropertyChange{Name: "summary.guest.ipAddress", Val: st.ip},
				types.PropertyChange{Name: "guest.net", Val: nets})
		}
		if up && withName && vm.Guest.HostName != st.computer {
			changes = append(changes,
				types.PropertyChange{Name: "guest.hostName", Val: st.computer},
				types.PropertyChange{Name: "summary.guest.hostName", Val: st.computer})
		}
		ctx.Update(vm, changes)
	})
}

// guestShutdown powers the VM off after its guest shut itself down.
func (h *Hosts) guestShutdown(st *vmState) {
	h.logf("guests: %s shut itself down; powering VM %s off", st.computer, st.ref.Value)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	task, err := object.NewVirtualMachine(h.vc, st.ref).PowerOff(ctx)
	if err == nil {
		_, err = task.WaitForResult(ctx)
	}
	if err != nil {
		h.logf("guests: powering VM %s off after its guest shut down: %v", st.ref.Value, err)
	}
}
