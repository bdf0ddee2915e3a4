package winnode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// guestShutdownTimeout bounds a graceful guest shutdown before the VM is
// powered off hard (Windows services get this long to stop).
const guestShutdownTimeout = 2 * time.Minute

// Observed is both sides of a node as they are now; nil means gone.
type Observed struct {
	VM   *vsphere.VMInfo
	Node *corev1.Node
	// Health is the node's health past Ready (ReadManyHealth); nil when
	// not read, or the VM is gone.
	Health *kube.NodeHealth
	// ProbeFailure is the network probe's failure at this refresh
	// (ProbeAtRefresh, when probe_on_refresh asks); "" when it passed or
	// did not run.
	ProbeFailure string
}

// Read refreshes a node: one vSphere round trip and one Kubernetes request.
func (m *Manager) Read(ctx context.Context, vmID, nodeName string) (Observed, error) {
	var obs Observed
	info, err := m.VSphere.ReadVM(ctx, vmID)
	switch {
	case vsphere.IsNotFound(err):
	case err != nil:
		return obs, fmt.Errorf("reading VM %s: %w", vmID, err)
	default:
		obs.VM = info
	}
	if m.Kube == nil {
		return obs, nil
	}
	node, err := m.Kube.FindNode(ctx, nodeName)
	switch {
	case kube.IsNotFound(err):
	case err != nil:
		return obs, fmt.Errorf("reading Node %s: %w", nodeName, err)
	default:
		obs.Node = node
	}
	return obs, nil
}

// Delete takes a node away in Cluster API's order for a Machine
// (internal/controllers/machine: drain, waitForVolumeDetach, delete the
// infrastructure, delete the Node): cordon and drain (honouring
// PodDisruptionBudgets); wait until no VolumeAttachment is attached to the
// node, since a VM destroyed before its CSI volumes detach takes their disks
// with it; shut the guest down; detach the disks the VM did not get from its
// template (vsphere.AddedDisks: a volume whose VolumeAttachment is gone but
// whose disk is still on the VM, a disk added by hand), keeping their files;
// delete the Node, with a UID precondition (the guest is off: see below);
// then destroy the VM. A Node of
// the name that is not this VM's (ownership) stops the delete before
// anything changes: it is neither drained nor deleted. Parts already gone
// are skipped.
func (m *Manager) Delete(ctx context.Context, nodeName, vmID string, drain kube.DrainOptions) error {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	id := Identity{VMID: vmID}
	var vm *vsphere.VMInfo
	if vmID != "" {
		info, err := m.VSphere.ReadVM(ctx, vmID)
		switch {
		case vsphere.IsNotFound(err):
		case err != nil:
			return guest.Stage("reading the VM", err)
		default:
			vm = info
			id = Identity{VMID: vmID, BIOSUUID: info.BIOSUUID, InstanceUUID: info.InstanceUUID}
		}
	}
	node, err := m.Kube.FindNode(ctx, nodeName)
	switch {
	case kube.IsNotFound(err):
		node = nil
	case err != nil:
		return guest.Stage("reading the Node", err)
	case vm == nil:
		// The VM is gone: only the VM annotation can say the Node was its.
		if why := m.ownership(node, id); why != "" || id.VMID == "" {
			m.progress(ctx, "Node left alone: not provably this node's", map[string]any{"node": nodeName, "why": why})
			node = nil
		}
	default:
		if why := m.ownership(node, id); why != "" {
			return guest.Stage("checking the Node", &NodeNotOursError{Name: nodeName, Why: why,
				Fix: fmt.Sprintf("It is not drained or deleted, and VM %s is not destroyed. If that Node is stale, delete it (kubectl delete node %s) and destroy again; to keep it, remove this node from the state (terraform state rm) and destroy VM %s by hand.", vmID, nodeName, vmID)})
		}
	}
	if node != nil {
		m.progress(ctx, "drain", map[string]any{"node": nodeName})
		if err := m.Kube.DrainNode(ctx, nodeName, drain); err != nil {
			if errors.Is(ctx.Err(), context.Canceled) && !node.Spec.Unschedulable {
				return guest.Stage("draining the Node", m.uncordonInterrupted(ctx, nodeName, err))
			}
			return guest.Stage("draining the Node", err)
		}
		if kube.NodeUnreachable(node) {
			// As Cluster API: nothing on an unreachable node can unmount its
			// volumes, and waiting would block its removal for good.
			m.progress(ctx, "volumes not awaited: the Node is unreachable", map[string]any{"node": nodeName})
		} else {
			waiting := func(attached []string) {
				m.progress(ctx, "wait for volumes to detach", map[string]any{"node": nodeName, "attached": attached})
			}
			if err := m.Kube.WaitForVolumesDetached(ctx, nodeName, waiting); err != nil {
				return guest.Stage("waiting for the node's volumes to detach", err)
			}
		}
	}
	if vm != nil {
		m.progress(ctx, "shut down", map[string]any{"vm": vmID})
		if err := m.shutdown(ctx, vmID); err != nil && !vsphere.IsNotFound(err) {
			return guest.Stage("shutting the guest down", err)
		}
		if added := vsphere.AddedDisks(vm); len(added) > 0 {
			keys := make([]int32, len(added))
			files := make([]string, len(added))
			for i, d := range added {
				keys[i], files[i] = d.Key, d.FileName
			}
			m.progress(ctx, "detach disks", map[string]any{"vm": vmID, "disks": files})
			if err := m.VSphere.DetachDisks(ctx, vmID, keys); err != nil && !vsphere.IsNotFound(err) {
				return guest.Stage("detaching the disks the VM did not get from its template", err)
			}
		}
	}
	// The Node goes once the guest is off, before the VM: Cluster API
	// deletes it after the infrastructure so that a kubelet still running
	// cannot register it again, which a guest that is off cannot do either.
	// A destroy that then fails leaves a VM that is off and no Node, which
	// the next apply joins again (Rejoin powers it on) instead of a cordoned
	// Node of a stopped VM that no plan would notice.
	if node != nil {
		m.progress(ctx, "delete Node", map[string]any{"node": nodeName})
		if err := m.Kube.DeleteNodeUID(ctx, nodeName, node.UID); err != nil {
			return guest.Stage("deleting the Node", err)
		}
	}
	if vm != nil {
		m.progress(ctx, "destroy VM", map[string]any{"vm": vmID})
		if err := m.VSphere.Destroy(ctx, vmID); err != nil && !vsphere.IsNotFound(err) {
			return guest.Stage("destroying the VM", err)
		}
	}
	// The computer account last: nothing can join with it again once the
	// VM is gone, and a destroy that fails before leaves the account a
	// retry still finds (removing a missing account is no error).
	if m.RemoveComputerAccount != nil {
		m.progress(ctx, "remove computer account", map[string]any{"computer": strings.ToUpper(nodeName)})
		if _, err := m.RemoveComputerAccount(ctx, nodeName); err != nil {
			return guest.Stage("removing the computer account "+strings.ToUpper(nodeName)+" from its domain", err)
		}
	}
	return nil
}

// uncordonTimeout bounds the uncordon after an interrupted drain: the run
// is ending, and Terraform waits for it.
const uncordonTimeout = 15 * time.Second

// tokenDeleteTimeout bounds the deletion of a join's bootstrap token, which
// runs even after the create's context is done (a failure, Ctrl-C, the
// resource's create timeout): one DELETE, which an API server answers in
// milliseconds.
const tokenDeleteTimeout = 15 * time.Second

// uncordonInterrupted lifts the cordon of a drain that the run's
// cancellation interrupted (Ctrl-C: Terraform stops the provider): the node
// stays, in the cluster and in the state, so it goes back into service
// rather than sit cordoned with nothing left to lift it. A timed-out drain
// keeps its cordon (its error says so); so does a Node cordoned before the
// drain, which is not this provider's to lift.
func (m *Manager) uncordonInterrupted(ctx context.Context, nodeName string, drainErr error) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), uncordonTimeout)
	defer cancel()
	if err := m.Kube.CordonNode(uctx, nodeName, false); err != nil {
		return fmt.Errorf("%w; the destroy was interrupted and the Node is left cordoned (uncordoning it failed: %v): run kubectl uncordon %s to keep it, or destroy again", drainErr, err, nodeName)
	}
	return fmt.Errorf("%w; the destroy was interrupted, so the Node was uncordoned: it stays in service, in the cluster and in the state; destroy again to drain and remove it", drainErr)
}

// ForgetNode deletes the Node of a machine that is gone, without a drain:
// no kubelet is left to stop the pods an eviction would mark for deletion,
// so a drain would wait for them in vain. With the Node gone the pod
// garbage collector deletes its pods and their controllers recreate them
// elsewhere — what the cloud node lifecycle controller of a cloud provider
// (the vSphere one among them) does when a VM disappears. Only a Node that
// is provably the gone VM's (ownership) is deleted, with its UID as a
// precondition; another is left alone and named.
func (m *Manager) ForgetNode(ctx context.Context, nodeName string, id Identity) error {
	node, err := m.Kube.FindNode(ctx, nodeName)
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return guest.Stage("reading the Node", err)
	}
	if why := m.ownership(node, id); why != "" {
		return guest.Stage("checking the Node", &NodeNotOursError{Name: nodeName, Why: why,
			Fix: fmt.Sprintf("If that Node is stale, delete it (kubectl delete node %s).", nodeName)})
	}
	m.progress(ctx, "delete the Node of a VM that is gone", map[string]any{"node": nodeName})
	if err := m.Kube.DeleteNodeUID(ctx, nodeName, node.UID); err != nil {
		return guest.Stage("deleting the Node", err)
	}
	return nil
}

// shutdown asks the guest to shut down and waits for the power-off; a guest
// that does not finish in time is powered off.
func (m *Manager) shutdown(ctx context.Context, vmID string) error {
	if err := m.VSphere.ShutdownGuest(ctx, vmID); err != nil {
		return m.VSphere.PowerOff(ctx, vmID)
	}
	wctx, cancel := context.WithTimeout(ctx, guestShutdownTimeout)
	defer cancel()
	if err := m.VSphere.WaitForPoweredOff(wctx, vmID); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return m.VSphere.PowerOff(ctx, vmID)
	}
	return nil
}

// Hardware changes CPUs and memory. When the change cannot be made while the
// VM runs (no hot-add, or removing capacity) the node is cordoned, drained,
// shut down, reconfigured, powered on, waited for until Ready, and uncordoned.
func (m *Manager) Hardware(ctx context.Context, nodeName, vmID string, hw vsphere.Hardware, drain kube.DrainOptions) error {
	err := m.VSphere.Reconfigure(ctx, vmID, hw)
	var cycle *vsphere.PowerCycleRequiredError
	if !errors.As(err, &cycle) {
		if err != nil {
			return guest.Stage("reconfiguring the VM", err)
		}
		return nil
	}
	m.progress(ctx, "power cycle for hardware change", map[string]any{"node": nodeName, "reason": cycle.Error()})
	// Recorded first, so that a later update uncordons the node even when
	// this one fails after the drain (ResumeAfterPowerCycle).
	if err := m.Kube.MarkCordonedForPowerCycle(ctx, nodeName, true); err != nil {
		return guest.Stage("marking the Node for the power cycle", err)
	}
	if err := m.Kube.DrainNode(ctx, nodeName, drain); err != nil {
		return guest.Stage("draining the Node before the power cycle", err)
	}
	if err := m.shutdown(ctx, vmID); err != nil {
		return guest.Stage("shutting the guest down", err)
	}
	// The Node as the stopped kubelet left it: still Ready, until the node
	// lifecycle controller notices. The wait below needs a newer report.
	before, err := m.Kube.FindNode(ctx, nodeName)
	if err != nil {
		return guest.Stage("reading the Node before the power-on", err)
	}
	if err := m.VSphere.Reconfigure(ctx, vmID, hw); err != nil {
		return guest.Stage("reconfiguring the VM", err)
	}
	if err := m.VSphere.PowerOn(ctx, vmID); err != nil {
		return guest.Stage("powering the VM on", err)
	}
	if _, err := m.Kube.WaitForNodeReadyAgain(ctx, before); err != nil {
		return guest.Stage("waiting for the Node to be Ready after the power cycle", err)
	}
	return m.ResumeAfterPowerCycle(ctx, nodeName, vmID)
}

// ResumeAfterPowerCycle uncordons a Node this provider cordoned for a power
// cycle once it is Ready (waiting for that with a watch): the end of a
// successful power cycle, and the next update after one that failed midway.
// A cycle that failed after the shutdown (its reconfigure or power-on task
// failed) left the VM off: it is powered on first, and the Node waited for
// until it reports Ready again (the stopped kubelet's last report may still
// say Ready).
func (m *Manager) ResumeAfterPowerCycle(ctx context.Context, nodeName, vmID string) error {
	node, err := m.Kube.FindNode(ctx, nodeName)
	if kube.IsNotFound(err) && vmID != "" {
		return nil // no Node, no cordon: the node joins again
	}
	if err != nil {
		return guest.Stage("reading the Node", err)
	}
	if !kube.CordonedForPowerCycle(node) {
		return nil
	}
	if vmID != "" {
		info, err := m.VSphere.ReadVM(ctx, vmID)
		if err != nil {
			return guest.Stage("reading the VM", err)
		}
		if info.PowerState == vsphere.PoweredOff {
			m.progress(ctx, "power on after an unfinished power cycle", map[string]any{"node": nodeName, "vm": vmID})
			if err := m.VSphere.PowerOn(ctx, vmID); err != nil {
				return guest.Stage("powering the VM on", err)
			}
			if node, err = m.Kube.WaitForNodeReadyAgain(ctx, node); err != nil {
				return guest.Stage("waiting for the Node to be Ready after the power cycle", err)
			}
		}
	}
	if !kube.NodeIsReady(node) {
		m.progress(ctx, "wait for Ready before uncordoning", map[string]any{"node": nodeName})
		if _, err := m.Kube.WaitForNodeReady(ctx, nodeName); err != nil {
			return guest.Stage("waiting for the Node to be Ready before uncordoning it", err)
		}
	}
	if err := m.Kube.CordonNode(ctx, nodeName, false); err != nil {
		return guest.Stage("uncordoning the Node", err)
	}
	if err := m.Kube.MarkCordonedForPowerCycle(ctx, nodeName, false); err != nil {
		return guest.Stage("unmarking the Node", err)
	}
	return nil
}

// PowerOnIfOff powers a node's VM on when it is off, before it joins again:
// a power cycle that failed after its shutdown leaves the VM off, and the
// Node may be gone meanwhile (nothing then records the cycle); a node
// joins only on a running VM. It reports whether it powered the VM on.
func (m *Manager) PowerOnIfOff(ctx context.Context, vmID string) (poweredOn bool, err error) {
	info, err := m.VSphere.ReadVM(ctx, vmID)
	if err != nil {
		return false, guest.Stage("reading the VM", err)
	}
	if info.PowerState != vsphere.PoweredOff {
		return false, nil
	}
	m.progress(ctx, "power on before joining", map[string]any{"vm": vmID})
	if err := m.VSphere.PowerOn(ctx, vmID); err != nil {
		return false, guest.Stage("powering the VM on", err)
	}
	return true, nil
}

// GrowDisk grows the node's disk to sizeGB while it runs (a disk never
// shrinks: the plan refuses that).
func (m *Manager) GrowDisk(ctx context.Context, vmID string, sizeGB int64) error {
	if err := m.VSphere.GrowDisk(ctx, vmID, sizeGB); err != nil {
		return guest.Stage("growing the disk", err)
	}
	return nil
}

// SetNodeSettings applies labels and taints: only the keys this provider
// owns (kube.ApplyNodeSettings records them, so a taint the kubelet
// registered at join and we dropped later is removed too).
func (m *Manager) SetNodeSettings(ctx context.Context, nodeName string, s kube.NodeSettings) (*corev1.Node, error) {
	node, err := m.Kube.ApplyNodeSettings(ctx, nodeName, s)
	if err != nil {
		return nil, guest.Stage("setting labels and taints", err)
	}
	return node, nil
}

// ReadMany refreshes many nodes at once (a pool): one vSphere round trip for
// all their VMs and one Kubernetes request for all Windows Nodes, however
// many nodes there are. vmIDs maps node names to VM ids; a node whose VM or
// Node is gone has a nil side, as in Read.
func (m *Manager) ReadMany(ctx context.Context, vmIDs map[string]string) (map[string]Observed, error) {
	ids := make([]string, 0, len(vmIDs))
	for _, id := range vmIDs {
		if id != "" {
			ids = append(ids, id)
		}
	}
	vms, err := m.VSphere.ReadVMs(ctx, ids)
	if err != nil {
		return nil, err
	}
	byName := map[string]*corev1.Node{}
	if m.Kube != nil && len(vmIDs) > 0 {
		nodes, err := m.Kube.WindowsNodes(ctx)
		if err != nil {
			return nil, err
		}
		for i := range nodes {
			byName[nodes[i].Name] = &nodes[i]
		}
	}
	out := make(map[string]Observed, len(vmIDs))
	for name, id := range vmIDs {
		out[name] = Observed{VM: vms[id], Node: byName[name]}
	}
	return out, nil
}
