package winnode

import "github.com/wincluster/terraform-provider-windows/internal/vsphere"

// Size is one figure of a node VM's size as a plan gives it: a value, or
// Unknown until apply (computed from another resource's output). A zero
// Value is "not set": a state saved before the VM was read.
type Size struct {
	Value   int64
	Unknown bool
}

// Sizing is a node VM's CPUs, memory (MiB) and first disk (GiB).
type Sizing struct {
	NumCPUs, MemoryMB, DiskSizeGB Size
}

// Resize is one figure that changes: From the current value To the desired
// one, which may be unknown until apply.
type Resize struct {
	From int64
	To   Size
}

// HardwareChange is what an update does to a running node's VM size. CPUs
// and memory change in place: while the VM runs when its hot-add applies the
// change, otherwise with a drain and a power cycle (Manager.Hardware). The
// first disk only grows, while the VM runs; a smaller one is refused.
type HardwareChange struct {
	CPUs, Memory *Resize // nil: unchanged
	GrowDisk     *Resize // nil: the disk keeps its size (or its size is unknown until apply)
	ShrinkDisk   *Resize // non-nil: refused, a virtual disk can only grow
}

// PlanHardware compares the sizing a node has (current, as its state
// records it) with the one its configuration asks for (desired). The plan
// and the update both decide with it: what the plan warns about is what the
// update does.
func PlanHardware(current, desired Sizing) HardwareChange {
	c := HardwareChange{
		CPUs:   resize(current.NumCPUs, desired.NumCPUs),
		Memory: resize(current.MemoryMB, desired.MemoryMB),
	}
	disk, from := desired.DiskSizeGB, current.DiskSizeGB.Value
	switch {
	case disk.Unknown || disk.Value == 0:
	case disk.Value > from:
		c.GrowDisk = &Resize{From: from, To: disk}
	case disk.Value < from:
		c.ShrinkDisk = &Resize{From: from, To: disk}
	}
	return c
}

func resize(current, desired Size) *Resize {
	if desired.Unknown || desired.Value != current.Value {
		return &Resize{From: current.Value, To: desired}
	}
	return nil
}

// Reconfigures says whether CPUs or memory change, or may: a figure unknown
// until apply. Either way the VM may be power-cycled, which restarts the
// kubelet and may give the guest another address.
func (c HardwareChange) Reconfigures() bool { return c.CPUs != nil || c.Memory != nil }

// Pending says whether a CPU or memory figure is unknown until apply.
func (c HardwareChange) Pending() bool {
	return (c.CPUs != nil && c.CPUs.To.Unknown) || (c.Memory != nil && c.Memory.To.Unknown)
}

// Hardware is the CPU and memory change to apply, of the figures known;
// zero fields stay as they are.
func (c HardwareChange) Hardware() vsphere.Hardware {
	var hw vsphere.Hardware
	if c.CPUs != nil && !c.CPUs.To.Unknown {
		hw.NumCPUs = int32(c.CPUs.To.Value)
	}
	if c.Memory != nil && !c.Memory.To.Unknown {
		hw.MemoryMB = c.Memory.To.Value
	}
	return hw
}

// PowerCycle says whether the CPU and memory change needs a drain and a
// power cycle of the VM that vm describes: why it does, or "" when the VM's
// hot-add applies it while the VM runs (or there is nothing to change).
// known is false when that is decided only at apply: a figure is unknown
// until then, or the VM could not be read (vm nil).
func (c HardwareChange) PowerCycle(vm *vsphere.VMInfo) (reason string, known bool) {
	if !c.Reconfigures() {
		return "", true
	}
	if c.Pending() || vm == nil {
		return "", false
	}
	return vsphere.PowerCycleReason(vm, c.Hardware()), true
}
