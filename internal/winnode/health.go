package winnode

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// A node's health past Ready, as a refresh reads it from the API server
// (kube.NodeHealth: the Node, its networking agents, the cluster DNS), and
// the repair of what the provider can repair there: agents not Running and
// Ready are restarted (their pods evicted, so their DaemonSets make them
// anew, as `kubectl delete pod` would), then awaited as a create awaits
// them. Services stopped on the guest make the Node NotReady, which Repair
// handles; the cluster DNS is the cluster's, never repaired here.

// healthScope is the networking namespace and agents a node's health
// covers: none without a networking. The mode comes from the node's
// recorded CNI when it names one, else from the cluster (one DaemonSet list).
func (m *Manager) healthScope(ctx context.Context, spec Spec) (string, []kube.Agent, error) {
	if spec.Networking == "" {
		return "", nil, nil
	}
	mode, ok := networking.Lookup(spec.CNI)
	if !ok {
		var err error
		if mode, err = m.networkingMode(ctx, spec); err != nil {
			return "", nil, err
		}
	}
	return spec.Networking, mode.Agents(), nil
}

// snapshot reads the health facts: from the run's cache (HealthSnapshot)
// unless fresh, as after a change the apply made.
func (m *Manager) snapshot(ctx context.Context, namespace string, agents []kube.Agent, fresh bool) (*kube.HealthSnapshot, error) {
	if m.HealthSnapshot != nil && !fresh {
		return m.HealthSnapshot(ctx, namespace, agents)
	}
	return m.Kube.ReadHealthSnapshot(ctx, namespace, agents)
}

// ReadHealth judges one node's health (node nil: its Node is gone): from
// the run's snapshot for a refresh, read again when fresh.
func (m *Manager) ReadHealth(ctx context.Context, spec Spec, node *corev1.Node, fresh bool) (kube.NodeHealth, error) {
	ns, agents, err := m.healthScope(ctx, spec)
	if err != nil {
		return kube.NodeHealth{}, fmt.Errorf("reading the health of node %s: %w", spec.Name, err)
	}
	s, err := m.snapshot(ctx, ns, agents, fresh)
	if err != nil {
		return kube.NodeHealth{}, fmt.Errorf("reading the health of node %s: %w", spec.Name, err)
	}
	return s.Evaluate(node), nil
}

// HealthError is a health read that failed after the nodes themselves
// were read: the observations stand, without their health.
type HealthError struct{ Err error }

func (e *HealthError) Error() string { return "reading the nodes' health: " + e.Err.Error() }
func (e *HealthError) Unwrap() error { return e.Err }

// ReadManyHealth is ReadMany with each node's health, judged against one
// snapshot: whatever the number of nodes, one DaemonSet list more when
// spec names no mode, one pod list and one EndpointSlice list. spec is what
// the nodes share (their networking). A health read that fails returns the
// nodes as read, without health, and a *HealthError.
func (m *Manager) ReadManyHealth(ctx context.Context, vmIDs map[string]string, spec Spec) (map[string]Observed, error) {
	out, err := m.ReadMany(ctx, vmIDs)
	if err != nil || len(out) == 0 || m.Kube == nil {
		return out, err
	}
	ns, agents, err := m.healthScope(ctx, spec)
	if err != nil {
		return out, &HealthError{Err: err}
	}
	s, err := m.snapshot(ctx, ns, agents, false)
	if err != nil {
		return out, &HealthError{Err: err}
	}
	for name, obs := range out {
		if obs.VM != nil {
			h := s.Evaluate(obs.Node)
			obs.Health = &h
			out[name] = obs
		}
	}
	return out, nil
}

// RepairAgents restarts the node's failing agents (a fresh read:
// kube.AgentStateFailing, so not one that is starting) and waits until
// every agent is Running and Ready, as a create waits: an agent that cannot
// start again (its host state lost for good) fails the wait naming its pod,
// its state and its last output.
func (m *Manager) RepairAgents(ctx context.Context, spec Spec) error {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	ns, agents, err := m.healthScope(ctx, spec)
	if err != nil || len(agents) == 0 {
		return err
	}
	s, err := m.Kube.ReadHealthSnapshot(ctx, ns, agents)
	if err != nil {
		return fmt.Errorf("reading the node agents of %s: %w", spec.Name, err)
	}
	var restart []*corev1.Pod
	for _, a := range s.AgentsOn(spec.Name) {
		if a.Pod != nil && kube.AgentStateFailing(a.State()) {
			restart = append(restart, a.Pod)
		}
	}
	m.progress(ctx, "restart node agents", map[string]any{"node": spec.Name, "pods": len(restart)})
	if err := m.Kube.RestartAgents(ctx, restart); err != nil {
		return err
	}
	if _, err := m.Kube.WaitForAgentsReady(ctx, spec.Name, ns, agents); err != nil {
		return fmt.Errorf("waiting for the node agents to run again: %w", err)
	}
	return nil
}
