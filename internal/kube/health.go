package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// A node's health as a refresh reads it: its Node, its networking agents'
// pods and the cluster DNS's endpoints, all from the API server. A refresh
// does not run the network probe's pod again: a pod per node per refresh
// would write to the cluster on every plan (a plan with read-only
// credentials could not refresh), pull and start an image on every node,
// and cost each refresh seconds per node. What the probe's paths depend on
// that the API shows is read instead: the cluster DNS's ready endpoints
// (the probe's first path ends there), the agents that program the node's
// load balancers and overlay (kube-proxy and flannel, Running and Ready),
// and the Node's Ready condition (the kubelet and containerd).

// Health statuses.
const (
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
)

// Service states the Node's Ready condition tells of the services on the
// node, without touching the guest.
const (
	ServiceRunning = "running"
	// ServiceNotReporting: the kubelet stopped posting the Node's status
	// (the node lifecycle controller set Ready to Unknown): stopped, hung or
	// cut off from the API server.
	ServiceNotReporting = "not_reporting"
	// ServiceDown: the kubelet reports its container runtime down.
	ServiceDown    = "down"
	ServiceUnknown = "unknown"
)

// Services the Node's status tells of.
const (
	ServiceKubelet    = "kubelet"
	ServiceContainerd = "containerd"
)

// messageRuntimeDown is what the kubelet's runtime state says while the
// container runtime does not answer (pkg/kubelet/runtime.go,
// runtimeState.runtimeErrors), which its Ready condition's message carries.
const messageRuntimeDown = "container runtime is down"

// HealthSnapshot is what nodes' health is judged with besides each Node: the
// cluster DNS's ready endpoints and the networking agents' pods, read once
// for every node of a refresh (every member of a pool).
type HealthSnapshot struct {
	ClusterDNSReadyEndpoints int
	// Agents are the networking's node agents; none without networking.
	Agents []Agent
	// Namespace is the networking's namespace.
	Namespace string
	// byNode is each node's best pod of each agent.
	byNode map[string][]AgentStatus
}

// ReadHealthSnapshot reads the cluster DNS's endpoints (one EndpointSlice
// list) and, with agents, their pods in namespace (one pod list, by a label
// selector that matches the agents' pods only where their selectors allow).
func (c *Client) ReadHealthSnapshot(ctx context.Context, namespace string, agents []Agent) (*HealthSnapshot, error) {
	slices, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + kubeDNSService})
	if err != nil {
		return nil, fmt.Errorf("listing kube-system/%s's EndpointSlices: %w", kubeDNSService, err)
	}
	ready, _ := dnsEndpoints(slices.Items, "")
	s := &HealthSnapshot{ClusterDNSReadyEndpoints: ready, Agents: agents, Namespace: namespace}
	if len(agents) == 0 {
		return s, nil
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: agentsSelector(agents)})
	if err != nil {
		return nil, fmt.Errorf("listing the node agents' pods in %s: %w", namespace, err)
	}
	s.byNode = agentStates(pods.Items, agents)
	return s, nil
}

// NewHealthSnapshot is a snapshot of facts already read (tests, and callers
// that hold the pods).
func NewHealthSnapshot(dnsReady int, namespace string, agents []Agent, pods []corev1.Pod) *HealthSnapshot {
	return &HealthSnapshot{ClusterDNSReadyEndpoints: dnsReady, Agents: agents, Namespace: namespace, byNode: agentStates(pods, agents)}
}

// agentsSelector selects the pods of every agent with one selector: "key in
// (a, b)" when every agent's selector is one label of the same key (the
// networking modes' windows.wincluster.io/agent), else nothing narrower
// than the namespace.
func agentsSelector(agents []Agent) string {
	var key string
	var values []string
	for _, a := range agents {
		if len(a.Selector) != 1 {
			return ""
		}
		for k, v := range a.Selector {
			if key != "" && k != key {
				return ""
			}
			key = k
			values = append(values, v)
		}
	}
	req, err := labels.NewRequirement(key, selection.In, values)
	if err != nil {
		return ""
	}
	return labels.NewSelector().Add(*req).String()
}

// agentStates is, for every node with pods of the agents, each agent's best
// pod there (a Running and Ready one if any; nil when it has none).
func agentStates(pods []corev1.Pod, agents []Agent) map[string][]AgentStatus {
	byNode := map[string][]*corev1.Pod{}
	for i := range pods {
		if n := pods[i].Spec.NodeName; n != "" {
			byNode[n] = append(byNode[n], &pods[i])
		}
	}
	out := map[string][]AgentStatus{}
	for node, ps := range byNode {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
		for _, a := range agents {
			var best *corev1.Pod
			for _, p := range ps {
				if labelsMatch(a.Selector, p.Labels) && (best == nil || PodRunningAndReady(p)) {
					best = p
				}
			}
			out[node] = append(out[node], AgentStatus{Agent: a, Pod: best})
		}
	}
	return out
}

// AgentsOn is each agent's state on a node (Pod nil: none there).
func (s *HealthSnapshot) AgentsOn(node string) []AgentStatus {
	if got, ok := s.byNode[node]; ok {
		return got
	}
	out := make([]AgentStatus, 0, len(s.Agents))
	for _, a := range s.Agents {
		out = append(out, AgentStatus{Agent: a})
	}
	return out
}

// NodeHealth is one node's health as the API shows it.
type NodeHealth struct {
	// Status is HealthHealthy or HealthUnhealthy.
	Status string
	// Causes say what is wrong, one line each; none when healthy.
	Causes    []string
	NodeReady bool
	// Agents are the networking's agents on the node; AgentsDown those not
	// Running and Ready.
	Agents, AgentsDown []AgentStatus
	// Services are the kubelet's and containerd's states as the Node's
	// Ready condition tells them.
	Services                 map[string]string
	ClusterDNSReadyEndpoints int
	KubeletVersion           string
	ContainerRuntimeVersion  string
	// Since is when the node last turned unhealthy as far as the API
	// tells (the Ready condition's transition, an agent pod's Ready
	// transition): zero when healthy or unknown.
	Since time.Time
}

// AgentsRepairable says whether agents are failing (AgentStateFailing) on
// a Ready Node: what restarting their pods may repair.
func (h NodeHealth) AgentsRepairable() bool {
	if !h.NodeReady {
		return false
	}
	for _, a := range h.AgentsDown {
		if AgentStateFailing(a.State()) {
			return true
		}
	}
	return false
}

// Evaluate judges a node: node nil is a node whose Node is gone.
func (s *HealthSnapshot) Evaluate(node *corev1.Node) NodeHealth {
	h := NodeHealth{Status: HealthHealthy, ClusterDNSReadyEndpoints: s.ClusterDNSReadyEndpoints,
		Services: map[string]string{ServiceKubelet: ServiceUnknown, ServiceContainerd: ServiceUnknown}}
	if node == nil {
		h.Status = HealthUnhealthy
		h.Causes = append(h.Causes, "its Node is not in the cluster")
		return h
	}
	h.KubeletVersion = node.Status.NodeInfo.KubeletVersion
	h.ContainerRuntimeVersion = node.Status.NodeInfo.ContainerRuntimeVersion
	h.NodeReady = NodeIsReady(node)
	cond := NodeReadyCondition(node)
	switch {
	case h.NodeReady:
		h.Services[ServiceKubelet], h.Services[ServiceContainerd] = ServiceRunning, ServiceRunning
	case cond == nil:
		h.Causes = append(h.Causes, fmt.Sprintf("Node %s has not reported a Ready condition", node.Name))
		h.Since = node.CreationTimestamp.Time
	default:
		h.Since = cond.LastTransitionTime.Time
		switch {
		case cond.Status == corev1.ConditionUnknown:
			// The node lifecycle controller's NodeStatusUnknown.
			h.Services[ServiceKubelet] = ServiceNotReporting
		case strings.Contains(cond.Message, messageRuntimeDown):
			h.Services[ServiceKubelet], h.Services[ServiceContainerd] = ServiceRunning, ServiceDown
		default:
			h.Services[ServiceKubelet] = ServiceRunning
		}
		h.Causes = append(h.Causes, fmt.Sprintf("Node %s is NotReady (%s: %s)", node.Name, cond.Reason, strings.TrimSpace(cond.Message)))
	}
	if len(s.Agents) > 0 {
		h.Agents = s.AgentsOn(node.Name)
		for _, a := range h.Agents {
			if a.Pod != nil && PodRunningAndReady(a.Pod) {
				continue
			}
			h.AgentsDown = append(h.AgentsDown, a)
			h.Causes = append(h.Causes, "agent "+a.Summary())
			if since := a.notReadySince(); !since.IsZero() && (h.Since.IsZero() || since.Before(h.Since)) {
				h.Since = since
			}
		}
	}
	if s.ClusterDNSReadyEndpoints == 0 {
		h.Causes = append(h.Causes, fmt.Sprintf("cluster DNS: Service kube-system/%s has no ready endpoints", kubeDNSService))
	}
	if len(h.Causes) > 0 {
		h.Status = HealthUnhealthy
	}
	return h
}

// State is an agent's state in a word: running, missing (no pod on the
// node), or its pod's waiting reason (CrashLoopBackOff,
// ContainerCreating), phase or "not_ready".
func (s AgentStatus) State() string {
	p := s.Pod
	switch {
	case p == nil:
		return "missing"
	case PodRunningAndReady(p):
		return ServiceRunning
	case p.DeletionTimestamp != nil:
		return "terminating"
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
	}
	if p.Status.Phase != corev1.PodRunning && p.Status.Phase != "" {
		return string(p.Status.Phase)
	}
	return "not_ready"
}

// agentStatesNotFailing are the states of an agent that is not Running
// and Ready but not failing either: starting (its container created, or
// running and not yet Ready: kube-proxy waits for flannel's network that
// way), or going. Restarting it would not help; every other state (no pod,
// CrashLoopBackOff, an image or container error, Failed) is one a restart
// of its pod may repair.
var agentStatesNotFailing = map[string]bool{
	ServiceRunning: true, "not_ready": true, "ContainerCreating": true, "PodInitializing": true,
	string(corev1.PodPending): true, "terminating": true,
}

// AgentStateFailing says whether an agent in this State is failing, and a
// restart of its pod may repair it.
func AgentStateFailing(state string) bool { return !agentStatesNotFailing[state] }

// Summary is Describe on one line: the agent, its pod, its state and the
// last line its container wrote before it last exited.
func (s AgentStatus) Summary() string {
	a := s.Agent
	if s.Pod == nil {
		return fmt.Sprintf("%s (DaemonSet %s): no pod on the node", a.Name, a.DaemonSet)
	}
	p := s.Pod
	out := fmt.Sprintf("%s: pod %s/%s is %s", a.Name, p.Namespace, p.Name, s.State())
	for _, c := range p.Status.ContainerStatuses {
		if c.RestartCount > 0 {
			out += fmt.Sprintf(", %d restarts", c.RestartCount)
		}
		if t := c.LastTerminationState.Terminated; t != nil {
			out += fmt.Sprintf(", last exit code %d", t.ExitCode)
			if line := lastLines(strings.TrimSpace(t.Message), 1); line != "" {
				out += ": " + line
			}
		}
	}
	return out
}

// notReadySince is when the agent's pod last turned not Ready (its Ready
// condition's transition, else its creation); zero without a pod.
func (s AgentStatus) notReadySince() time.Time {
	if s.Pod == nil {
		return time.Time{}
	}
	for _, c := range s.Pod.Status.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return s.Pod.CreationTimestamp.Time
}

// AgentStates maps each agent's name to its State.
func (h NodeHealth) AgentStates() map[string]string {
	out := make(map[string]string, len(h.Agents))
	for _, a := range h.Agents {
		out[a.Agent.Name] = a.State()
	}
	return out
}

// RestartAgents evicts pods of the node agents (the eviction API, as a
// drain does, with a UID precondition), so their DaemonSets create them
// afresh: a pod held in CrashLoopBackOff's back-off, or one that lost its
// host state, starts again at once. A pod already gone or replaced counts
// as restarted.
func (c *Client) RestartAgents(ctx context.Context, pods []*corev1.Pod) error {
	sorted := slices.SortedFunc(slices.Values(pods), func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range sorted {
		if err := c.evictPod(ctx, *p, nil); err != nil {
			return fmt.Errorf("restarting node agent pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}
