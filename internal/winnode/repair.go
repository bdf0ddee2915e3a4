package winnode

import (
	"context"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// Repair brings a NotReady node back where the provider can: it starts the
// node's services again where they stopped (containerd, then the kubelet:
// bootstrap.RepairSteps) over the node's transport, and waits on a watch for
// the Node to be Ready again. What it cannot repair (the cluster DNS, a
// network the host lost) the plan names instead.
func (m *Manager) Repair(ctx context.Context, spec Spec, id Identity) error {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	m.progress(ctx, "repair", map[string]any{"node": spec.Name})
	ip, err := m.VSphere.WaitForIP(ctx, id.VMID)
	if err != nil {
		return guest.Stage("waiting for the guest's IP address", err)
	}
	tcfg := spec.Transport
	tcfg.Host, tcfg.User, tcfg.Password = ip, spec.AdminUser, spec.GuestPassword()
	if tcfg.Protocol == remote.ProtocolVMTools {
		tcfg.Guest = m.VSphere.GuestOperations(id.VMID)
	}
	g, err := guest.Connect(ctx, m.Connect, tcfg, "repair")
	if err != nil {
		return guest.Stage("connecting to the guest", err)
	}
	defer func() { _ = g.Close() }()
	steps, err := bootstrap.RepairSteps()
	if err != nil {
		return guest.Stage("rendering the repair steps", err)
	}
	for _, step := range steps {
		m.progress(ctx, "step "+step.Name, nil)
		if _, err := g.Run(ctx, step); err != nil {
			return err
		}
	}
	m.progress(ctx, "wait for Ready", map[string]any{"node": spec.Name})
	if _, err := m.Kube.WaitForNodeReady(ctx, spec.Name); err != nil {
		return &guest.StageError{Stage: "waiting for the Node to become Ready again", Err: err,
			Evidence: g.Tail(ctx, bootstrap.KubeletLogFile, 20)}
	}
	// Repaired when it works again, as a create is done: its agents run.
	mode, err := m.networkingMode(ctx, spec)
	if err != nil {
		return guest.Stage("reading the node's networking", err)
	}
	if agents := mode.Agents(); len(agents) > 0 {
		m.progress(ctx, "wait for node agents", map[string]any{"node": spec.Name, "namespace": spec.Networking})
		if _, err := m.Kube.WaitForAgentsReady(ctx, spec.Name, spec.Networking, agents); err != nil {
			return guest.Stage("waiting for the node agents to run again", err)
		}
	}
	return nil
}
