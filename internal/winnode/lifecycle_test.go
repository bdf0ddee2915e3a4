package winnode_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	vimtypes "github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// joined is a world with node win-1 joined and running.
func joined(t *testing.T) (*world, winnode.Identity) {
	t.Helper()
	w := newWorld(t)
	res, err := w.m.Create(t.Context(), testSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.vs.calls, w.k.calls = nil, nil
	return w, res.Identity
}

// nodeState is what a test asserts of the Node after an operation.
type nodeState struct{ exists, cordoned, marked bool }

func (w *world) nodeState() nodeState {
	n := w.k.node("win-1")
	if n == nil {
		return nodeState{}
	}
	return nodeState{exists: true, cordoned: n.Spec.Unschedulable, marked: kube.CordonedForPowerCycle(n)}
}

// TestHardware changes CPUs and memory: in place when the VM takes it
// running, else through a power cycle whose cordon is recorded before the
// drain. Failing at each stage leaves that record, so the next update's
// ResumeAfterPowerCycle uncordons the Node (checked here too).
func TestHardware(t *testing.T) {
	hw := vsphere.Hardware{NumCPUs: 8}
	cases := []struct {
		name  string
		setup func(w *world)
		want  string
		node  nodeState
		power vimtypes.VirtualMachinePowerState
		cycle bool // the VM was shut down
	}{
		{name: "hot add", setup: func(w *world) { w.vs.hotAdd = true },
			node: nodeState{exists: true}, power: vimtypes.VirtualMachinePowerStatePoweredOn},
		{name: "power cycle", node: nodeState{exists: true}, power: vimtypes.VirtualMachinePowerStatePoweredOn, cycle: true},
		{name: "guest does not shut down in time", setup: func(w *world) { w.vs.shutdownStalls = true },
			node: nodeState{exists: true}, power: vimtypes.VirtualMachinePowerStatePoweredOn, cycle: true},
		{name: "reconfigure refused", setup: func(w *world) { w.vs.fail["Reconfigure"] = errBoom },
			want: `^reconfiguring the VM: boom$`, node: nodeState{exists: true}, power: vimtypes.VirtualMachinePowerStatePoweredOn},
		{name: "record", setup: func(w *world) { w.k.fail["MarkCordonedForPowerCycle"] = errBoom },
			want: `^marking the Node for the power cycle: boom$`, node: nodeState{exists: true}, power: vimtypes.VirtualMachinePowerStatePoweredOn},
		{name: "drain", setup: func(w *world) { w.k.fail["DrainNode"] = errBoom },
			want: `^draining the Node before the power cycle: boom$`, node: nodeState{true, true, true}, power: vimtypes.VirtualMachinePowerStatePoweredOn},
		{name: "shutdown", setup: func(w *world) { w.vs.fail["ShutdownGuest"], w.vs.fail["PowerOff"] = errBoom, errBoom },
			want: `^shutting the guest down: boom$`, node: nodeState{true, true, true}, power: vimtypes.VirtualMachinePowerStatePoweredOn, cycle: true},
		{name: "Node read before power-on", setup: func(w *world) { w.k.fail["FindNode"] = errBoom },
			want: `^reading the Node before the power-on: boom$`, node: nodeState{true, true, true}, power: vimtypes.VirtualMachinePowerStatePoweredOff, cycle: true},
		{name: "reconfigure while off", setup: func(w *world) {
			w.vs.at["Reconfigure"] = func() { w.vs.fail["Reconfigure"] = errBoom } // the second call fails
		}, want: `^reconfiguring the VM: boom$`, node: nodeState{true, true, true}, power: vimtypes.VirtualMachinePowerStatePoweredOff, cycle: true},
		{name: "power on", setup: func(w *world) { w.vs.fail["PowerOn"] = errBoom },
			want: `^powering the VM on: boom$`, node: nodeState{true, true, true}, power: vimtypes.VirtualMachinePowerStatePoweredOff, cycle: true},
		{name: "Ready again", setup: func(w *world) { w.k.neverReady = true },
			want: `^waiting for the Node to be Ready after the power cycle: Node "win-1" registered but is not Ready`, node: nodeState{true, true, true},
			power: vimtypes.VirtualMachinePowerStatePoweredOn, cycle: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, id := joined(t)
			if c.setup != nil {
				c.setup(w)
			}
			err := w.m.Hardware(t.Context(), "win-1", id.VMID, hw, kube.DrainOptions{})
			if c.want == "" && err != nil {
				t.Fatal(err)
			} else if c.want != "" {
				checkErr(t, err, c.want)
			}
			if got := w.nodeState(); got != c.node {
				t.Errorf("Node %+v, want %+v", got, c.node)
			}
			if got := w.vs.power(id.VMID); got != c.power {
				t.Errorf("VM %s, want %s", got, c.power)
			}
			if cycled := w.vs.called("ShutdownGuest"); cycled != c.cycle {
				t.Errorf("shut down: %v, want %v", cycled, c.cycle)
			}
			if w.k.called("DrainNode") && !w.k.before("MarkCordonedForPowerCycle", "DrainNode") {
				t.Errorf("cluster calls %v: the cordon is recorded before the drain", w.k.Calls())
			}
			if c.want == "" {
				if vm, _ := w.vs.vm(id.VMID); vm.NumCPUs != 8 {
					t.Errorf("%d CPUs, want 8", vm.NumCPUs)
				}
				return
			}
			if !c.node.marked {
				return
			}
			// The next update, the fault gone: the VM runs again (powered
			// on when the cycle stopped with it off), then the Node is
			// let back.
			w.vs.fail, w.k.fail, w.vs.at, w.k.neverReady = map[string]error{}, map[string]error{}, map[string]func(){}, false
			if err := w.m.ResumeAfterPowerCycle(t.Context(), "win-1", id.VMID); err != nil {
				t.Fatalf("resuming: %v", err)
			}
			if got := w.nodeState(); got != (nodeState{exists: true}) {
				t.Errorf("after resuming: Node %+v, want it uncordoned and unmarked", got)
			}
			if got := w.vs.power(id.VMID); got != vimtypes.VirtualMachinePowerStatePoweredOn {
				t.Errorf("after resuming: VM %s, want it powered on", got)
			}
		})
	}
}

// TestHardwareCancelled: an update cancelled during the drain leaves the
// record, and the VM running.
func TestHardwareCancelled(t *testing.T) {
	w, id := joined(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w.k.at["DrainNode"] = cancel
	err := w.m.Hardware(ctx, "win-1", id.VMID, vsphere.Hardware{MemoryMB: 16384}, kube.DrainOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if got := w.nodeState(); !got.marked {
		t.Errorf("Node %+v: the power-cycle record must survive the cancellation", got)
	}
	if w.vs.power(id.VMID) != vimtypes.VirtualMachinePowerStatePoweredOn || w.vs.called("ShutdownGuest") {
		t.Error("a cancelled drain must not shut the guest down")
	}
}

// TestResumeAfterPowerCycle lifts only the cordon this provider recorded,
// once the Node is Ready.
func TestResumeAfterPowerCycle(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
		want  string
		node  nodeState
		waits bool // waited for Ready
	}{
		{name: "not cordoned", node: nodeState{exists: true}},
		{name: "an operator's cordon stays", setup: func(w *world) { w.k.nodes["win-1"].Spec.Unschedulable = true },
			node: nodeState{exists: true, cordoned: true}},
		{name: "ours, Ready", setup: markCordoned, node: nodeState{exists: true}},
		{name: "ours, not Ready yet", setup: func(w *world) { markCordoned(w); setReady(w.k.nodes["win-1"], false) },
			node: nodeState{exists: true}, waits: true},
		{name: "ours, never Ready", setup: func(w *world) { markCordoned(w); setReady(w.k.nodes["win-1"], false); w.k.neverReady = true },
			want: `^waiting for the Node to be Ready before uncordoning it: `, node: nodeState{true, true, true}, waits: true},
		{name: "uncordon fails", setup: func(w *world) { markCordoned(w); w.k.fail["CordonNode"] = errBoom },
			want: `^uncordoning the Node: boom$`, node: nodeState{true, true, true}},
		{name: "unmark fails", setup: func(w *world) { markCordoned(w); w.k.fail["MarkCordonedForPowerCycle"] = errBoom },
			want: `^unmarking the Node: boom$`, node: nodeState{exists: true, marked: true}},
		{name: "Node gone", setup: func(w *world) { delete(w.k.nodes, "win-1") },
			want: `^reading the Node: Node "win-1" not found$`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, _ := joined(t)
			if c.setup != nil {
				c.setup(w)
			}
			err := w.m.ResumeAfterPowerCycle(t.Context(), "win-1", "")
			if c.want == "" && err != nil {
				t.Fatal(err)
			} else if c.want != "" {
				checkErr(t, err, c.want)
			}
			if got := w.nodeState(); got != c.node {
				t.Errorf("Node %+v, want %+v", got, c.node)
			}
			if waited := w.k.called("WaitForNodeReady"); waited != c.waits {
				t.Errorf("waited for Ready: %v, want %v", waited, c.waits)
			}
		})
	}
}

func markCordoned(w *world) {
	n := w.k.nodes["win-1"]
	n.Spec.Unschedulable = true
	n.Annotations = map[string]string{kube.CordonedForPowerCycleAnnotation: "hardware change"}
}

// TestDelete takes a node away in Cluster API's order: drain, volumes
// detached, guest, VM, then the Node; skipping what is gone, and stopping at
// the first failure with the rest untouched.
func TestDelete(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(w *world, ctxCancel func())
		noVMID  bool
		want    string
		node    nodeState
		vmLeft  bool
		hardOff bool // PowerOff tried: the guest did not shut down (or is gone)
	}{
		{name: "all of it"},
		{name: "Node already gone", setup: func(w *world, _ func()) { delete(w.k.nodes, "win-1") }},
		// Its VM annotation proves the Node the gone VM's.
		{name: "VM already gone", setup: func(w *world, _ func()) { w.vs.vms = map[string]*vsphere.VMInfo{} }},
		// Nothing proves the Node this node's: it stays.
		{name: "no VM recorded", noVMID: true, vmLeft: true, node: nodeState{exists: true}},
		{name: "guest does not shut down", setup: func(w *world, _ func()) { w.vs.shutdownStalls = true }, hardOff: true},
		{name: "Tools not running", setup: func(w *world, _ func()) { w.vs.fail["ShutdownGuest"] = errBoom }, hardOff: true},
		{name: "reading the Node", setup: func(w *world, _ func()) { w.k.fail["FindNode"] = errBoom },
			want: `^reading the Node: boom$`, node: nodeState{exists: true}, vmLeft: true},
		{name: "drain", setup: func(w *world, _ func()) { w.k.fail["DrainNode"] = errBoom },
			want: `^draining the Node: boom$`, node: nodeState{exists: true, cordoned: true}, vmLeft: true},
		// Interrupted (Ctrl-C): the node stays, so its cordon is lifted.
		{name: "drain cancelled", setup: func(w *world, cancel func()) { w.k.at["DrainNode"] = cancel },
			want: `^draining the Node: context canceled; the destroy was interrupted, so the Node was uncordoned: .*destroy again`, node: nodeState{exists: true}, vmLeft: true},
		{name: "volume wait", setup: func(w *world, _ func()) { w.k.fail["WaitForVolumesDetached"] = errBoom },
			want: `^waiting for the node's volumes to detach: boom$`, node: nodeState{exists: true, cordoned: true}, vmLeft: true},
		{name: "shutdown", setup: func(w *world, _ func()) { w.vs.fail["ShutdownGuest"], w.vs.fail["PowerOff"] = errBoom, errBoom },
			want: `^shutting the guest down: boom$`, node: nodeState{exists: true, cordoned: true}, vmLeft: true, hardOff: true},
		{name: "destroy", setup: func(w *world, _ func()) { w.vs.fail["Destroy"] = errBoom },
			want: `^destroying the VM: boom$`, node: nodeState{}, vmLeft: true},
		{name: "Node deletion", setup: func(w *world, _ func()) { w.k.fail["DeleteNode"] = errBoom },
			want: `^deleting the Node: boom$`, node: nodeState{exists: true, cordoned: true}, vmLeft: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, id := joined(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if c.setup != nil {
				c.setup(w, cancel)
			}
			vmID := id.VMID
			if c.noVMID {
				vmID = ""
			}
			err := w.m.Delete(ctx, "win-1", vmID, kube.DrainOptions{})
			if c.want == "" && err != nil {
				t.Fatal(err)
			} else if c.want != "" {
				checkErr(t, err, c.want)
			}
			if got := w.nodeState(); got != c.node {
				t.Errorf("Node %+v, want %+v", got, c.node)
			}
			if _, err := w.vs.vm(id.VMID); (err == nil) != c.vmLeft {
				t.Errorf("VM left: %v, want %v", err == nil, c.vmLeft)
			}
			if hard := w.vs.called("PowerOff"); hard != c.hardOff {
				t.Errorf("powered off hard: %v, want %v", hard, c.hardOff)
			}
			if w.k.called("DeleteNode") && !w.k.called("DrainNode") {
				t.Error("the Node was deleted without a drain")
			}
			if w.k.called("DeleteNode") && !w.k.before("WaitForVolumesDetached", "DeleteNode") {
				t.Errorf("calls %v: the volumes must be awaited before the Node goes", w.k.Calls())
			}
		})
	}
}

// TestDeleteWaitsForVolumesAndKeepsDataDisks: a volume attached to the node
// holds the destroy until its VolumeAttachment goes; the disk the VM did not
// get from its template is detached, not destroyed, before the VM is; the
// Node goes last.
func TestDeleteWaitsForVolumesAndKeepsDataDisks(t *testing.T) {
	w, id := joined(t)
	w.vs.mu.Lock()
	vm := w.vs.vms[id.VMID]
	vm.ExtraConfig[vsphere.SourceDisksKey] = "2000"
	vm.Disks = []vsphere.Disk{{Key: 2000, FileName: "[ds1] win-1/win-1.vmdk"}, {Key: 2001, FileName: "[ds1] fcd/pv-data.vmdk"}}
	w.vs.mu.Unlock()
	w.k.volumes["win-1"] = []string{"PersistentVolume pv-data"}
	var order []string
	w.m.Progress = func(stage string, fields map[string]any) {
		order = append(order, stage)
		if stage == "wait for volumes to detach" {
			if got := fmt.Sprint(fields["attached"]); got != "[PersistentVolume pv-data]" {
				t.Errorf("told of %s attached, want pv-data", got)
			}
			if w.vs.called("ShutdownGuest") {
				t.Error("the guest was shut down before the volume detached")
			}
			go w.k.detachVolume("win-1", "PersistentVolume pv-data") // the CSI driver
		}
	}
	if err := w.m.Delete(t.Context(), "win-1", id.VMID, kube.DrainOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"drain", "wait for volumes to detach", "shut down", "detach disks", "delete Node", "destroy VM"}
	if !slices.Equal(order, want) {
		t.Errorf("stages %v, want %v", order, want)
	}
	if len(w.vs.detached) != 1 || w.vs.detached[0].Key != 2001 {
		t.Errorf("detached %+v: want the data disk 2001 alone", w.vs.detached)
	}
	if !w.vs.before("DetachDisks", "Destroy") {
		t.Errorf("calls %v: the data disk must be detached before the VM is destroyed", w.vs.Calls())
	}
	if w.k.node("win-1") != nil {
		t.Error("the Node is left")
	}
}

// TestDeleteLeavesNodeOfAnotherVM: a Node of the node's name that belongs to
// another VM stops the destroy before anything changes: it is not drained,
// not deleted, and this node's VM stays.
func TestDeleteLeavesNodeOfAnotherVM(t *testing.T) {
	w, id := joined(t)
	w.k.mu.Lock()
	w.k.nodes["win-1"].Annotations[kube.VMAnnotation] = kube.NodeVM(vcenterID, "vm-999")
	w.k.mu.Unlock()
	err := w.m.Delete(t.Context(), "win-1", id.VMID, kube.DrainOptions{})
	checkErr(t, err, `^checking the Node: Node "win-1" belongs to another VM \(its windows.wincluster.io/vm annotation is "vc-0000-1111/vm-999".*nothing was deleted. .*VM vm-\d+ is not destroyed`)
	for _, op := range []string{"DrainNode", "DeleteNode", "CordonNode"} {
		if w.k.called(op) {
			t.Errorf("%s called: %v", op, w.k.Calls())
		}
	}
	if w.vs.called("Destroy") || w.vs.called("ShutdownGuest") {
		t.Errorf("the VM was touched: %v", w.vs.Calls())
	}
}

func TestRead(t *testing.T) {
	w, id := joined(t)
	obs, err := w.m.Read(t.Context(), id.VMID, "win-1")
	if err != nil || obs.VM == nil || obs.Node == nil || obs.VM.ID() != id.VMID {
		t.Fatalf("Read = %+v, %v: want both sides", obs, err)
	}
	delete(w.k.nodes, "win-1")
	if obs, err = w.m.Read(t.Context(), id.VMID, "win-1"); err != nil || obs.VM == nil || obs.Node != nil {
		t.Errorf("Node gone: %+v, %v", obs, err)
	}
	if obs, err = w.m.Read(t.Context(), "vm-999", "win-1"); err != nil || obs.VM != nil {
		t.Errorf("VM gone: %+v, %v", obs, err)
	}
	w.k.fail["FindNode"] = errBoom
	if _, err = w.m.Read(t.Context(), id.VMID, "win-1"); err == nil || err.Error() != "reading Node win-1: boom" {
		t.Errorf("Node read fails: %v", err)
	}
	w.vs.fail["ReadVM"] = errBoom
	if _, err = w.m.Read(t.Context(), id.VMID, "win-1"); err == nil || err.Error() != "reading VM "+id.VMID+": boom" {
		t.Errorf("VM read fails: %v", err)
	}
	noCluster := &winnode.Manager{VSphere: w.vs}
	delete(w.vs.fail, "ReadVM")
	if obs, err = noCluster.Read(t.Context(), id.VMID, "win-1"); err != nil || obs.VM == nil || obs.Node != nil {
		t.Errorf("without a cluster: %+v, %v", obs, err)
	}
}

// TestUpdateStages: the disk growth and the Node settings of an update name
// their stage too.
func TestUpdateStages(t *testing.T) {
	w, id := joined(t)
	if err := w.m.GrowDisk(t.Context(), id.VMID, 120); err != nil {
		t.Fatal(err)
	}
	w.vs.fail["GrowDisk"] = errBoom
	checkErr(t, w.m.GrowDisk(t.Context(), id.VMID, 140), `^growing the disk: boom$`)

	node, err := w.m.SetNodeSettings(t.Context(), "win-1", kube.NodeSettings{Labels: map[string]string{"tier": "2"}})
	if err != nil || node.Labels["tier"] != "2" {
		t.Fatalf("SetNodeSettings = %v, %v", node, err)
	}
	w.k.fail["ApplyNodeSettings"] = errBoom
	_, err = w.m.SetNodeSettings(t.Context(), "win-1", kube.NodeSettings{Taints: []corev1.Taint{}})
	checkErr(t, err, `^setting labels and taints: boom$`)
}

// TestPowerOnIfOff: a VM left off (a power cycle that failed after its
// shutdown) is powered on before the node joins again; a running one is
// left alone.
func TestPowerOnIfOff(t *testing.T) {
	w, id := joined(t)
	if on, err := w.m.PowerOnIfOff(t.Context(), id.VMID); err != nil || on || w.vs.called("PowerOn") {
		t.Fatalf("a running VM: %v, powered on again: %v", err, w.vs.called("PowerOn"))
	}
	_ = w.vs.setPower(id.VMID, vimtypes.VirtualMachinePowerStatePoweredOff)
	if on, err := w.m.PowerOnIfOff(t.Context(), id.VMID); err != nil || !on {
		t.Fatal(err)
	}
	if got := w.vs.power(id.VMID); got != vimtypes.VirtualMachinePowerStatePoweredOn {
		t.Errorf("VM %s, want powered on", got)
	}
}
