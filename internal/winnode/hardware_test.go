package winnode

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

func known(v int64) Size { return Size{Value: v} }

var unknown = Size{Unknown: true}

func TestPlanHardware(t *testing.T) {
	current := Sizing{NumCPUs: known(2), MemoryMB: known(4096), DiskSizeGB: known(40)}
	cases := []struct {
		name                string
		desired             Sizing
		cpus, memory        *Resize
		grow, shrink        *Resize
		reconfigures, later bool
		hw                  vsphere.Hardware
	}{
		{name: "nothing changes", desired: current},
		{name: "more CPUs", desired: Sizing{known(4), known(4096), known(40)},
			cpus: &Resize{2, known(4)}, reconfigures: true, hw: vsphere.Hardware{NumCPUs: 4}},
		{name: "less memory, a larger disk", desired: Sizing{known(2), known(2048), known(60)},
			memory: &Resize{4096, known(2048)}, grow: &Resize{40, known(60)}, reconfigures: true, hw: vsphere.Hardware{MemoryMB: 2048}},
		{name: "a smaller disk is refused, not planned", desired: Sizing{known(2), known(4096), known(30)},
			shrink: &Resize{40, known(30)}},
		{name: "CPUs known only at apply", desired: Sizing{unknown, known(8192), known(40)},
			cpus: &Resize{2, unknown}, memory: &Resize{4096, known(8192)}, reconfigures: true, later: true, hw: vsphere.Hardware{MemoryMB: 8192}},
		{name: "a disk known only at apply is decided at apply", desired: Sizing{known(2), known(4096), unknown}},
		{name: "a disk not set (a state saved mid-create) keeps its size", desired: Sizing{known(2), known(4096), known(0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PlanHardware(current, c.desired)
			same := func(what string, got, want *Resize) {
				if (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("%s = %+v, want %+v", what, got, want)
				}
			}
			same("CPUs", got.CPUs, c.cpus)
			same("Memory", got.Memory, c.memory)
			same("GrowDisk", got.GrowDisk, c.grow)
			same("ShrinkDisk", got.ShrinkDisk, c.shrink)
			if got.Reconfigures() != c.reconfigures || got.Pending() != c.later || got.Hardware() != c.hw {
				t.Errorf("Reconfigures %v, Pending %v, Hardware %+v; want %v, %v, %+v",
					got.Reconfigures(), got.Pending(), got.Hardware(), c.reconfigures, c.later, c.hw)
			}
		})
	}
}

// Current figures not yet recorded (a state saved before the VM was read)
// count as a change to the desired ones: the VM is reconfigured to them.
func TestPlanHardwareFromUnrecordedState(t *testing.T) {
	got := PlanHardware(Sizing{}, Sizing{known(4), known(8192), known(60)})
	if got.Hardware() != (vsphere.Hardware{NumCPUs: 4, MemoryMB: 8192}) || got.GrowDisk == nil || got.GrowDisk.To.Value != 60 {
		t.Errorf("PlanHardware = %+v", got)
	}
}

func TestHardwareChangePowerCycle(t *testing.T) {
	current := Sizing{NumCPUs: known(2), MemoryMB: known(4096), DiskSizeGB: known(40)}
	running := &vsphere.VMInfo{PowerState: vsphere.PoweredOn, NumCPUs: 2, MemoryMB: 4096, CPUHotAdd: true}
	cases := []struct {
		name    string
		desired Sizing
		vm      *vsphere.VMInfo
		reason  string // a fragment; "" for none
		known   bool
	}{
		{"no CPU or memory change", Sizing{known(2), known(4096), known(80)}, nil, "", true},
		{"hot-add applies it", Sizing{known(4), known(4096), known(40)}, running, "", true},
		{"removing CPUs needs hot-remove", Sizing{known(1), known(4096), known(40)}, running, "removing CPUs (2 to 1) needs CPU hot-remove", true},
		{"memory hot-add is off", Sizing{known(2), known(8192), known(40)}, running, "needs memory hot-add, which is off", true},
		{"a VM not read decides at apply", Sizing{known(4), known(4096), known(40)}, nil, "", false},
		{"an unknown figure decides at apply", Sizing{unknown, known(4096), known(40)}, running, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reason, known := PlanHardware(current, c.desired).PowerCycle(c.vm)
			if known != c.known || (c.reason == "") != (reason == "") || !strings.Contains(reason, c.reason) {
				t.Errorf("PowerCycle = %q, %v; want %q, %v", reason, known, c.reason, c.known)
			}
		})
	}
}
