package winnode

// The network probe of a node at the end of its join: the request made
// from the node and its mode, and the host's evidence when it fails.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/redact"
)

// proveNetwork runs the network probe of a joined node (kube.ProbeNetwork)
// and adds the host's evidence to a failure. A node whose mode runs no
// agents of its own (none) is probed once the cluster's CNI runs HostProcess
// agents on it; until then nothing routes a pod's traffic there, so there
// is nothing to prove (the plan warned: networking.Probe.Unproven). It
// returns no paths when it did not probe.
func (m *Manager) proveNetwork(ctx context.Context, g *guest.Session, spec Spec, join bootstrap.JoinConfig, node *corev1.Node,
	agents []kube.Agent, red *redact.Redactor) ([]kube.ProbePath, time.Duration, error) {
	if len(agents) == 0 {
		found, err := m.Kube.HostProcessAgentsOn(ctx, spec.Name)
		if err != nil {
			return nil, 0, guest.Stage("looking for the cluster CNI's agents on the node", err)
		}
		if len(found) == 0 {
			m.progress("network probe skipped: no agents on the node", map[string]any{"node": spec.Name})
			return nil, 0, nil
		}
	}
	m.progress("network probe", map[string]any{"node": spec.Name})
	start := time.Now()
	paths, err := m.Kube.ProbeNetwork(ctx, probeRequest(spec, join, node, agents))
	if err != nil {
		return nil, 0, m.probeFailed(ctx, g, err, red)
	}
	return paths, time.Since(start), nil
}

// probeRequest is the node's network probe: from a pod scheduled onto it by
// its labels and taints, reaching its own NodePort at its InternalIP, with
// its agents' logs as evidence should it fail.
func probeRequest(spec Spec, join bootstrap.JoinConfig, node *corev1.Node, agents []kube.Agent) kube.ProbeRequest {
	req := kube.ProbeRequest{Node: spec.Name, ClusterDomain: join.ClusterDomain, RuntimeClass: spec.ProbeRuntimeClass,
		NodeIP: join.NodeIP, AgentNamespace: spec.Networking, Agents: agents}
	if mode, ok := networking.Lookup(join.CNI); ok {
		req.PodNetwork = mode.Probe().PodNetwork
	}
	if node != nil {
		req.NodeLabels, req.NodeTaints = node.Labels, node.Spec.Taints
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				req.NodeIP = a.Address
			}
		}
	}
	return req
}

// probeFailed adds the host's evidence to a failed probe: HNS's networks,
// endpoints and load balancers and the agents' last log lines, read over
// the guest's transport (bootstrap.ProbeEvidenceStep) and redacted like
// every step's output.
func (m *Manager) probeFailed(ctx context.Context, g *guest.Session, err error, red *redact.Redactor) error {
	var pe *kube.ProbeError
	if errors.As(err, &pe) {
		if step, serr := bootstrap.ProbeEvidenceStep(pe.AgentLogs); serr == nil {
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeEvidenceTimeout)
			out, rerr := g.Run(ectx, step)
			cancel()
			if rerr != nil {
				out = "(could not be read: " + rerr.Error() + ")"
			}
			pe.HostEvidence = red.String(out)
		}
	}
	return guest.Stage("proving the node's network path", err)
}

// probeEvidenceTimeout bounds reading the host's evidence of a failed probe.
const probeEvidenceTimeout = time.Minute

// ProbeAtRefresh runs the network probe of a node at a refresh
// (probe_on_refresh): from a pod on the node, as at the end of its join,
// but without the guest (a refresh connects to none), so a failure carries
// the cluster's evidence only. It returns the failure as a health cause,
// "" when the probe passed or had nothing to prove (the Node not Ready, a
// node of mode none without agents); err is a probe that could not run.
func (m *Manager) ProbeAtRefresh(ctx context.Context, spec Spec, node *corev1.Node) (string, error) {
	if node == nil || !kube.NodeIsReady(node) {
		return "", nil // the Node's own health says what is wrong
	}
	mode, err := m.refreshMode(ctx, spec)
	if err != nil {
		return "", err
	}
	agents := mode.Agents()
	if len(agents) == 0 {
		found, err := m.Kube.HostProcessAgentsOn(ctx, spec.Name)
		if err != nil || len(found) == 0 {
			return "", err
		}
	}
	discover := m.Kube.DiscoverNetwork
	if m.Network != nil {
		discover = m.Network
	}
	net, err := discover(ctx)
	if err != nil {
		return "", fmt.Errorf("discovering the cluster for the network probe: %w", err)
	}
	join := bootstrap.JoinConfig{ClusterDomain: or(spec.ClusterDomain, net.ClusterDomain), CNI: mode.Name()}
	_, err = m.Kube.ProbeNetwork(ctx, probeRequest(spec, join, node, agents))
	var pe *kube.ProbeError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("network probe: %s failed: %s (expected: %s)", pe.Path.What, strings.TrimSpace(pe.Path.Output), pe.Expected), nil
	case err != nil:
		return "", fmt.Errorf("probing the network of node %s: %w", spec.Name, err)
	}
	return "", nil
}

// refreshMode is the node's mode at a refresh: the one its state recorded,
// else its networking's (one DaemonSet list).
func (m *Manager) refreshMode(ctx context.Context, spec Spec) (networking.Mode, error) {
	if mode, ok := networking.Lookup(spec.CNI); ok {
		return mode, nil
	}
	return m.networkingMode(ctx, spec)
}
