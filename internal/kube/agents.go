package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// AgentWaitError says which node agents did not turn Running and Ready on a
// node in time, with what their pods showed.
type AgentWaitError struct {
	Node string
	// Pending are the agents not Ready, each with its evidence.
	Pending []AgentStatus
	Err     error
}

// AgentStatus is one agent's pod on one node as last seen.
type AgentStatus struct {
	Agent Agent
	Pod   *corev1.Pod // nil: no pod was scheduled to the node
}

func (e *AgentWaitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node agents not Running and Ready on Node %q (%v):", e.Node, e.Err)
	for _, s := range e.Pending {
		b.WriteString("\n  - " + s.Describe())
	}
	return b.String()
}

func (e *AgentWaitError) Unwrap() error { return e.Err }

// Describe tells an agent's state: its pod, phase, each container's state
// (waiting/terminated reason and message, exit code, restarts) and the last
// termination message. The API's pods/log needs the kubelet's server, which
// is not always reachable from where Terraform runs; the termination
// message (a container's last output lines, with
// terminationMessagePolicy FallbackToLogsOnError) is read from the pod.
func (s AgentStatus) Describe() string {
	a := s.Agent
	if s.Pod == nil {
		return fmt.Sprintf("%s (DaemonSet %s): no pod on this node; check the DaemonSet's node selector and tolerations against the node's labels and taints", a.Name, a.DaemonSet)
	}
	p := s.Pod
	msg := fmt.Sprintf("%s (DaemonSet %s): pod %s/%s is %s", a.Name, a.DaemonSet, p.Namespace, p.Name, p.Status.Phase)
	if p.Status.Reason != "" || p.Status.Message != "" {
		msg += fmt.Sprintf(" (%s: %s)", p.Status.Reason, p.Status.Message)
	}
	for _, c := range p.Status.ContainerStatuses {
		msg += fmt.Sprintf("; container %s: %s, ready=%t, restarts=%d", c.Name, containerState(c.State), c.Ready, c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil {
			msg += fmt.Sprintf("; last exit code %d (%s)", t.ExitCode, t.Reason)
			if t.Message != "" {
				msg += ", last output:\n" + indent(lastLines(t.Message, 10), "      ")
			}
		}
	}
	if len(p.Status.ContainerStatuses) == 0 {
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Message != "" {
				msg += fmt.Sprintf("; %s: %s", c.Type, c.Message)
			}
		}
	}
	return msg
}

func containerState(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return fmt.Sprintf("waiting (%s: %s)", s.Waiting.Reason, s.Waiting.Message)
	case s.Terminated != nil:
		out := fmt.Sprintf("terminated with exit code %d (%s)", s.Terminated.ExitCode, s.Terminated.Reason)
		if s.Terminated.Message != "" {
			out += ":\n" + indent(lastLines(s.Terminated.Message, 10), "      ")
		}
		return out
	}
	return "not started"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// PodRunningAndReady reports whether a pod runs and its Ready condition is
// True.
func PodRunningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// runningSince: every container of p runs, started at or after since (a
// zero since: any).
func runningSince(p *corev1.Pod, since time.Time) bool {
	if since.IsZero() {
		return true
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Running == nil || s.State.Running.StartedAt.Time.Before(since) {
			return false
		}
	}
	return true
}

// WaitForAgentsReady watches the pods of namespace bound to the node until,
// for every agent, a pod its selector matches is Running and Ready. When ctx
// ends first the error is an *AgentWaitError naming each agent that is not,
// with its pod's state.
func (c *Client) WaitForAgentsReady(ctx context.Context, node, namespace string, agents []Agent) ([]*corev1.Pod, error) {
	return c.WaitForAgentsReadySince(ctx, node, namespace, agents, time.Time{})
}

// RegisteredByKubeletAt is when the kubelet registered node, on the
// kubelet's own clock: the earliest transition of the conditions the
// kubelet sets (reason Kubelet...), which it stamps as it registers the
// Node. The zero time when there are none. It is compared with container
// start times, which the same kubelet stamps: no clock of another machine
// takes part.
func RegisteredByKubeletAt(node *corev1.Node) time.Time {
	var at time.Time
	if node == nil {
		return at
	}
	for _, c := range node.Status.Conditions {
		if !strings.HasPrefix(c.Reason, "Kubelet") || c.LastTransitionTime.IsZero() {
			continue
		}
		if t := c.LastTransitionTime.Time; at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// WaitForAgentsReadySince is WaitForAgentsReady counting only pods whose
// containers all run since since (their state.running.startedAt, whole
// seconds): after a reboot, the pods as the stopped kubelet left them,
// still Running and Ready, do not count.
func (c *Client) WaitForAgentsReadySince(ctx context.Context, node, namespace string, agents []Agent, since time.Time) ([]*corev1.Pod, error) {
	since = since.Truncate(time.Second)
	readyNow := func(p *corev1.Pod) bool { return PodRunningAndReady(p) && runningSince(p, since) }
	if len(agents) == 0 {
		return nil, nil
	}
	pods := map[string]*corev1.Pod{} // by name
	state := func() (ready []*corev1.Pod, pending []AgentStatus) {
		for _, a := range agents {
			sel := labels.SelectorFromSet(a.Selector)
			var best *corev1.Pod
			names := make([]string, 0, len(pods))
			for n := range pods {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				p := pods[n]
				if !sel.Matches(labels.Set(p.Labels)) {
					continue
				}
				if best == nil || readyNow(p) {
					best = p
				}
			}
			if best != nil && readyNow(best) {
				ready = append(ready, best)
			} else {
				pending = append(pending, AgentStatus{Agent: a, Pod: best})
			}
		}
		return ready, pending
	}
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(namespace).Watch(ctx, o)
		},
	}
	var ready []*corev1.Pod
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(e watch.Event) (bool, error) {
		p, ok := e.Object.(*corev1.Pod)
		if !ok {
			return false, nil
		}
		if e.Type == watch.Deleted {
			delete(pods, p.Name)
		} else {
			pods[p.Name] = p
		}
		var pending []AgentStatus
		ready, pending = state()
		return len(pending) == 0, nil
	})
	if err == nil {
		return ready, nil
	}
	_, pending := state()
	if ctx.Err() != nil {
		return nil, &AgentWaitError{Node: node, Pending: pending, Err: context.Cause(ctx)}
	}
	return nil, fmt.Errorf("waiting for the node agents on Node %q: %w", node, err)
}
