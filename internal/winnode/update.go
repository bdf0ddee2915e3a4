package winnode

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// UpdateRequest is an update of a node that exists: what it should be, the
// VM it runs on, and what changes.
type UpdateRequest struct {
	// Spec is what the node should be (its labels, taints, networking and,
	// for a join, everything a join needs).
	Spec Spec
	// Identity is the node's VM, as recorded.
	Identity Identity
	// Hardware is the change to its VM's size (PlanHardware of the recorded
	// sizing and the desired one).
	Hardware HardwareChange
	// Drain is how a power cycle for a hardware change drains the node.
	Drain kube.DrainOptions
	// Rejoin says whether and why the node joins again (PlanRejoin).
	Rejoin Rejoin
	// WindowsBuild is the build the node recorded at its join: its build
	// label when it does not join again.
	WindowsBuild string
	// AdoptNetworkingMode reads the mode the node's networking runs
	// (Spec.Networking) when it does not join again: an imported node
	// adopting its networking.
	AdoptNetworkingMode bool
	// Repair starts the node's stopped services and waits for Ready again
	// (Repair): the refresh found the Node NotReady.
	Repair bool
	// RepairAgents restarts the node's agents not Running and Ready and
	// waits for them (RepairAgents): the refresh found them so on a Ready
	// Node.
	RepairAgents bool
	// Site is the change of the VM's tags, custom attributes and notes
	// (in place); Had is what the state recorded.
	Site SiteChange
}

// UpdateResult is the node an update leaves.
type UpdateResult struct {
	// Joined is the join, when the node joined again; nil otherwise.
	Joined *Result
	// Node is the Node with its settings applied, when it did not join
	// again.
	Node *corev1.Node
	// NetworkingMode is the mode its networking runs, when the request
	// asked to adopt it.
	NetworkingMode string
	// VM is the VM as read at the end; nil when it could not be read (the
	// caller keeps what it had).
	VM *vsphere.VMInfo
}

// Update changes a running node in place, in this order: its CPUs and
// memory (a power cycle when the running VM cannot take them, Hardware),
// its disk (it only grows); then it finishes a power cycle an earlier
// update left unfinished (ResumeAfterPowerCycle), before anything that
// needs the guest; then it joins the node again (Rejoin: the Node is gone,
// or its networking changed; its VM powered on first if it is off), or
// applies the labels and taints to the Node as it is. It ends reading the
// VM. The first failure stops it; nothing was saved meanwhile.
func (m *Manager) Update(ctx context.Context, req UpdateRequest) (UpdateResult, error) {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	var out UpdateResult
	spec, id := req.Spec, req.Identity
	if hw := req.Hardware.Hardware(); hw != (vsphere.Hardware{}) {
		if err := m.Hardware(ctx, spec.Name, id.VMID, hw, req.Drain); err != nil {
			return out, err
		}
	}
	if grow := req.Hardware.GrowDisk; grow != nil {
		if err := m.GrowDisk(ctx, id.VMID, grow.To.Value); err != nil {
			return out, err
		}
	}
	if err := m.applySite(ctx, spec.Name, id.VMID, req.Site); err != nil {
		return out, err
	}

	// A power cycle of an earlier update that failed after its drain left
	// the node cordoned (and its VM off, when it failed after the
	// shutdown): power it on, and once it is Ready again let pods back.
	// Before anything that needs the guest.
	if err := m.ResumeAfterPowerCycle(ctx, spec.Name, id.VMID); err != nil {
		return out, err
	}

	if req.Repair && req.Rejoin == NoRejoin {
		if err := m.Repair(ctx, spec, id); err != nil {
			return out, err
		}
	}

	if req.RepairAgents && !req.Repair && req.Rejoin == NoRejoin {
		if err := m.RepairAgents(ctx, spec); err != nil {
			return out, err
		}
	}

	if req.Rejoin != NoRejoin {
		why := "the Node is gone from the cluster; joining again"
		if req.Rejoin == RejoinNetworking {
			// The join removes the flanneld and kube-proxy services of the
			// earlier design, writes the CNI configuration of the networking
			// mode and waits for its agents.
			why = "its networking changed; joining again in place"
		}
		m.progress(ctx, why, map[string]any{"node": spec.Name})
		poweredOn, err := m.PowerOnIfOff(ctx, id.VMID)
		if err != nil {
			return out, err
		}
		res, err := m.join(ctx, spec, id, !poweredOn)
		if err != nil {
			return out, fmt.Errorf("joining the node again: %w", err)
		}
		out.Joined = &res
	} else {
		node, err := m.SetNodeSettings(ctx, spec.Name, kube.NodeSettings{
			ProviderID: id.ProviderID(), Labels: NodeLabels(spec.Labels, req.WindowsBuild), Taints: spec.Taints,
		})
		if err != nil {
			return out, err
		}
		out.Node = node
		if req.AdoptNetworkingMode {
			mode, err := m.Kube.ObservedNetworkingMode(ctx, spec.Networking)
			if err != nil {
				return out, err
			}
			out.NetworkingMode = mode
		}
	}
	if info, err := m.VSphere.ReadVM(ctx, id.VMID); err == nil {
		out.VM = info
	}
	return out, nil
}
