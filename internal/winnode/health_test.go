package winnode_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// flannelPod is a pod of a flannel agent on node: Ready, or failing
// (CrashLoopBackOff) when not.
func flannelPod(t *testing.T, agent, node string, ready bool) corev1.Pod {
	t.Helper()
	mode, _ := networking.Lookup("flannel")
	for _, a := range mode.Agents() {
		if a.Name != agent {
			continue
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: agent + "-" + node, Namespace: "kube-system", Labels: a.Selector},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
		if !ready {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: agent, RestartCount: 2,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		}
		return p
	}
	t.Fatalf("no flannel agent %s", agent)
	return corev1.Pod{}
}

// TestReadManyHealth: a pool's members are judged against one snapshot,
// whatever their number; a member whose VM is gone has no health.
func TestReadManyHealth(t *testing.T) {
	w, id := joined(t)
	w.k.agentPods = []corev1.Pod{flannelPod(t, "kube-proxy", "win-1", true), flannelPod(t, "flannel", "win-1", false)}
	spec := testSpec()
	spec.CNI = "flannel"
	got, err := w.m.ReadManyHealth(t.Context(), map[string]string{"win-1": id.VMID, "win-2": "vm-gone"}, spec)
	if err != nil {
		t.Fatal(err)
	}
	h := got["win-1"].Health
	if h == nil || h.Status != kube.HealthUnhealthy || len(h.AgentsDown) != 1 || h.AgentsDown[0].Agent.Name != "flannel" || !h.AgentsRepairable() {
		t.Errorf("win-1's health: %+v", h)
	}
	if got["win-2"].VM != nil || got["win-2"].Health != nil {
		t.Errorf("a member whose VM is gone: %+v", got["win-2"])
	}
	if w.k.snapshots != 1 {
		t.Errorf("%d health snapshots read for 2 members; want 1", w.k.snapshots)
	}
}

// TestUpdateRepairAgents: the repair of agents failing on a Ready node
// restarts only those (their pods evicted: not one that is starting, nor
// another node's) and waits for every agent; an update without it restarts
// nothing.
func TestUpdateRepairAgents(t *testing.T) {
	w, id := joined(t)
	starting := flannelPod(t, "kube-proxy", "win-1", true)
	starting.Status.Conditions[0].Status = corev1.ConditionFalse
	w.k.agentPods = []corev1.Pod{starting, flannelPod(t, "flannel", "win-1", false), flannelPod(t, "flannel", "win-2", false)}
	if _, err := w.m.Update(t.Context(), updateRequest(id)); err != nil {
		t.Fatal(err)
	}
	if len(w.k.restarted) != 0 {
		t.Errorf("an update without a repair restarted %v", w.k.restarted)
	}
	req := updateRequest(id)
	req.RepairAgents = true
	if _, err := w.m.Update(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.k.restarted, []string{"flannel-win-1"}) {
		t.Errorf("restarted %v; want flannel-win-1 only", w.k.restarted)
	}
	waits := 0
	for _, c := range w.k.calls {
		if strings.HasPrefix(c, "WaitForAgentsReady") {
			waits++
		}
	}
	if waits != 1 || !slices.Contains(w.progress, "restart node agents") {
		t.Errorf("calls %v, progress %v: want one wait for the agents after the restart", w.k.calls, w.progress)
	}
}

// TestReadManyHealthError: a health read that fails leaves the members as
// read, without health, and says so.
func TestReadManyHealthError(t *testing.T) {
	w, id := joined(t)
	spec := testSpec() // no CNI: the mode is read from the cluster
	w.k.fail["ObservedNetworkingMode"] = errors.New("forbidden")
	got, err := w.m.ReadManyHealth(t.Context(), map[string]string{"win-1": id.VMID}, spec)
	var herr *winnode.HealthError
	if !errors.As(err, &herr) || got["win-1"].VM == nil || got["win-1"].Node == nil || got["win-1"].Health != nil {
		t.Errorf("err %v, observed %+v", err, got["win-1"])
	}
}
