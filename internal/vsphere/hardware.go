package vsphere

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Hardware is a CPU/memory change; zero fields stay as they are.
type Hardware struct {
	NumCPUs  int32
	MemoryMB int64
}

// PowerCycleReason says why applying hw to the VM described by info needs
// it powered off ("" when it can be applied now): the VM runs and the change
// removes CPUs or memory, or adds them with hot-add disabled.
func PowerCycleReason(info *VMInfo, hw Hardware) string {
	if info.PowerState != PoweredOn {
		return ""
	}
	var why []string
	switch {
	case hw.NumCPUs == 0 || hw.NumCPUs == info.NumCPUs:
	case hw.NumCPUs < info.NumCPUs && !info.CPUHotRemove:
		why = append(why, fmt.Sprintf("removing CPUs (%d to %d) needs CPU hot-remove, which is off", info.NumCPUs, hw.NumCPUs))
	case hw.NumCPUs > info.NumCPUs && !info.CPUHotAdd:
		why = append(why, fmt.Sprintf("adding CPUs (%d to %d) needs CPU hot-add, which is off", info.NumCPUs, hw.NumCPUs))
	}
	switch {
	case hw.MemoryMB == 0 || hw.MemoryMB == info.MemoryMB:
	case hw.MemoryMB < info.MemoryMB:
		why = append(why, fmt.Sprintf("memory cannot be removed from a running VM (%d MB to %d MB)", info.MemoryMB, hw.MemoryMB))
	case !info.MemoryHotAdd:
		why = append(why, fmt.Sprintf("adding memory (%d MB to %d MB) needs memory hot-add, which is off", info.MemoryMB, hw.MemoryMB))
	}
	return strings.Join(why, "; ")
}

// NeedsPowerCycle reads the VM (one round trip) and says whether hw can be
// applied only with the VM powered off, and why.
func (c *Client) NeedsPowerCycle(ctx context.Context, vm mo.Reference, hw Hardware) (bool, string, error) {
	info, err := c.ReadVM(ctx, vm)
	if err != nil {
		return false, "", err
	}
	why := PowerCycleReason(info, hw)
	return why != "", why, nil
}

// Reconfigure changes CPUs and memory. When the VM runs and the change needs
// a power cycle it changes nothing and returns *PowerCycleRequiredError: the
// caller drains the node, powers the VM off, calls Reconfigure again and
// powers it back on.
func (c *Client) Reconfigure(ctx context.Context, vm mo.Reference, hw Hardware) error {
	ref := vm.Reference()
	info, err := c.ReadVM(ctx, ref)
	if err != nil {
		return err
	}
	if why := PowerCycleReason(info, hw); why != "" {
		return &PowerCycleRequiredError{VM: info.Name, Reason: why}
	}
	spec := types.VirtualMachineConfigSpec{}
	if hw.NumCPUs != 0 && hw.NumCPUs != info.NumCPUs {
		spec.NumCPUs = hw.NumCPUs
	}
	if hw.MemoryMB != 0 && hw.MemoryMB != info.MemoryMB {
		spec.MemoryMB = hw.MemoryMB
	}
	if spec.NumCPUs == 0 && spec.MemoryMB == 0 {
		return nil
	}
	return c.reconfigure(ctx, ref, spec, "reconfiguring")
}

// GrowDisk grows the VM's first disk to sizeGB (grow only; equal is a no-op).
func (c *Client) GrowDisk(ctx context.Context, vm mo.Reference, sizeGB int64) error {
	ref := vm.Reference()
	var m mo.VirtualMachine
	if err := c.retrieveOne(ctx, ref, []string{"name", "config.hardware.device"}, &m); err != nil {
		return notFoundOr(err, "virtual machine", ref, "reading the disks of")
	}
	if m.Config == nil {
		return fmt.Errorf("virtual machine %s has no configuration", ref.Value)
	}
	change, err := growDiskChange(object.VirtualDeviceList(m.Config.Hardware.Device), sizeGB, m.Name)
	if err != nil || change == nil {
		return err
	}
	return c.reconfigure(ctx, ref, types.VirtualMachineConfigSpec{DeviceChange: []types.BaseVirtualDeviceConfigSpec{change}}, "growing the disk of")
}

func (c *Client) reconfigure(ctx context.Context, ref types.ManagedObjectReference, spec types.VirtualMachineConfigSpec, doing string) error {
	task, err := object.NewVirtualMachine(c.Client.Client, ref).Reconfigure(ctx, spec)
	_, err = c.waitTask(ctx, task, err)
	return notFoundOr(err, "virtual machine", ref, doing)
}
