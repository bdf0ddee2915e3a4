package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var healthAgents = []Agent{
	{Name: "kube-proxy", DaemonSet: "kube-proxy-windows", Selector: map[string]string{"windows.wincluster.io/agent": "kube-proxy-windows"}},
	{Name: "flannel", DaemonSet: "kube-flannel-ds-windows", Selector: map[string]string{"windows.wincluster.io/agent": "kube-flannel-ds-windows"}},
}

func agentPod(name, ds, node string, ready bool, since time.Time) corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"windows.wincluster.io/agent": ds}},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(since)}}}}
}

func readyNode(name string, status corev1.ConditionStatus, reason, message string, since time.Time) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.2.7"},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(since)}},
		}}
}

// TestEvaluateHealth: a node's health from its Node, its agents' pods and
// the cluster DNS: each cause named on its own line, the services the
// Ready condition tells of, the agents' states, and since when.
func TestEvaluateHealth(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	crash := agentPod("flannel-b", "kube-flannel-ds-windows", "win-b", false, t0.Add(time.Minute))
	crash.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "flannel", RestartCount: 3,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
			Message: "I0501 starting\nE0501 main.go:345] Error registering network: failed to create VXLAN network\n"}}}}
	pods := []corev1.Pod{
		agentPod("kube-proxy-a", "kube-proxy-windows", "win-a", true, t0), agentPod("flannel-a", "kube-flannel-ds-windows", "win-a", true, t0),
		agentPod("kube-proxy-b", "kube-proxy-windows", "win-b", false, t0.Add(2*time.Minute)), crash,
		agentPod("unrelated", "other", "win-a", false, t0),
	}
	s := NewHealthSnapshot(1, "kube-system", healthAgents, pods)

	h := s.Evaluate(readyNode("win-a", corev1.ConditionTrue, "KubeletReady", "", t0))
	if h.Status != HealthHealthy || len(h.Causes) != 0 || !h.NodeReady || h.Services[ServiceKubelet] != ServiceRunning ||
		h.Services[ServiceContainerd] != ServiceRunning || h.ContainerRuntimeVersion != "containerd://2.2.7" || !h.Since.IsZero() {
		t.Errorf("healthy node: %+v", h)
	}
	if got := h.AgentStates(); got["kube-proxy"] != "running" || got["flannel"] != "running" || len(got) != 2 {
		t.Errorf("healthy node's agents: %v", got)
	}

	h = s.Evaluate(readyNode("win-b", corev1.ConditionTrue, "KubeletReady", "", t0))
	if h.Status != HealthUnhealthy || !h.AgentsRepairable() || len(h.AgentsDown) != 2 || !h.Since.Equal(t0.Add(time.Minute)) {
		t.Errorf("node with agents down: %+v", h)
	}
	want := []string{"agent kube-proxy: pod kube-system/kube-proxy-b is not_ready",
		"agent flannel: pod kube-system/flannel-b is CrashLoopBackOff, 3 restarts, last exit code 1: E0501 main.go:345] Error registering network: failed to create VXLAN network"}
	if strings.Join(h.Causes, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(h.Causes, "\n"), strings.Join(want, "\n"))
	}

	h = s.Evaluate(readyNode("win-c", corev1.ConditionTrue, "KubeletReady", "", t0))
	if got := h.AgentStates(); got["kube-proxy"] != "missing" || got["flannel"] != "missing" || h.Causes[0] != "agent kube-proxy (DaemonSet kube-proxy-windows): no pod on the node" ||
		!h.AgentsRepairable() {
		t.Errorf("node without agent pods: %v %q", got, h.Causes)
	}
	startingPods := []corev1.Pod{pods[2], agentPod("flannel-b2", "kube-flannel-ds-windows", "win-b", true, t0)}
	starting := NewHealthSnapshot(1, "kube-system", healthAgents, startingPods).Evaluate(readyNode("win-b", corev1.ConditionTrue, "KubeletReady", "", t0))
	if starting.Status != HealthUnhealthy || starting.AgentsRepairable() || starting.AgentStates()["kube-proxy"] != "not_ready" {
		t.Errorf("an agent running and not yet Ready is no failure to repair: %+v", starting)
	}
	for state, failing := range map[string]bool{"missing": true, "CrashLoopBackOff": true, "ImagePullBackOff": true, "Failed": true,
		"running": false, "not_ready": false, "ContainerCreating": false, "Pending": false, "terminating": false} {
		if AgentStateFailing(state) != failing {
			t.Errorf("AgentStateFailing(%q) = %v", state, !failing)
		}
	}

	h = s.Evaluate(readyNode("win-a", corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", t0.Add(time.Hour)))
	if h.NodeReady || h.Services[ServiceKubelet] != ServiceNotReporting || h.Services[ServiceContainerd] != ServiceUnknown ||
		h.AgentsRepairable() || h.Causes[0] != "Node win-a is NotReady (NodeStatusUnknown: Kubelet stopped posting node status.)" {
		t.Errorf("kubelet stopped: %+v", h)
	}
	h = s.Evaluate(readyNode("win-a", corev1.ConditionFalse, "KubeletNotReady", "container runtime is down", t0))
	if h.Services[ServiceKubelet] != ServiceRunning || h.Services[ServiceContainerd] != ServiceDown {
		t.Errorf("containerd down: %v", h.Services)
	}

	h = NewHealthSnapshot(0, "", nil, nil).Evaluate(readyNode("win-a", corev1.ConditionTrue, "KubeletReady", "", t0))
	if h.Status != HealthUnhealthy || len(h.Causes) != 1 || h.Causes[0] != "cluster DNS: Service kube-system/kube-dns has no ready endpoints" ||
		h.AgentsRepairable() || len(h.Agents) != 0 {
		t.Errorf("cluster DNS gone, no networking: %+v", h)
	}
	if h := s.Evaluate(nil); h.Status != HealthUnhealthy || h.Causes[0] != "its Node is not in the cluster" {
		t.Errorf("no Node: %+v", h)
	}
}

// TestAgentsSelector: one set-based selector for agents sharing a key, none
// when they do not.
func TestAgentsSelector(t *testing.T) {
	if got := agentsSelector(healthAgents); got != "windows.wincluster.io/agent in (kube-flannel-ds-windows,kube-proxy-windows)" {
		t.Errorf("selector %q", got)
	}
	mixed := []Agent{{Selector: map[string]string{"a": "1"}}, {Selector: map[string]string{"b": "2"}}}
	if got := agentsSelector(mixed); got != "" {
		t.Errorf("mixed keys: %q", got)
	}
}
