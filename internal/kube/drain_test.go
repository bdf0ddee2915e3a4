package kube_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

const drainNS = "drain-test"

// TestDrainNode drains a Windows Node running a Deployment's pods (placed by
// the real scheduler), a DaemonSet pod and a bare pod with an emptyDir
// volume, through the real eviction API: the pods that need an option stop
// the drain before anything is evicted; a PodDisruptionBudget that allows no
// disruption holds it until the timeout; one that allows a disruption lets
// the pods move to the other Windows Node one at a time.
func TestDrainNode(t *testing.T) {
	s, c := cluster(t)
	ctx := t.Context()
	const nodeA, nodeB = "win-drain-a", "win-drain-b"
	pool := map[string]string{"example.com/pool": "drain"}
	joinNode(t, s, c, nodeA, pool)
	joinNode(t, s, c, nodeB, pool)

	// Keep B out until the pods have landed on A.
	if err := c.CordonNode(ctx, nodeB, true); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.FindNode(ctx, nodeB); n == nil || !n.Spec.Unschedulable {
		t.Fatalf("%s not cordoned", nodeB)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: drainNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Namespaces().Delete(context.WithoutCancel(t.Context()), drainNS, metav1.DeleteOptions{})
	})
	createWorkloads(t, c, pool, nodeA)
	waitForPods(t, c, "the web pods and the DaemonSet pod running on "+nodeA, func(pods []corev1.Pod) bool {
		return countRunning(pods, "app=web", nodeA) == 2 && countRunning(pods, "app=agent", nodeA) == 1 && countRunning(pods, "app=bare", nodeA) == 1
	})
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web-pdb", Namespace: drainNS},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if pdb, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else {
		waitForPDB(t, c, pdb.Name, func(p *policyv1.PodDisruptionBudget) bool {
			return p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 2
		})
	}
	if err := c.CordonNode(ctx, nodeB, false); err != nil {
		t.Fatal(err)
	}

	t.Run("pods that need an option", func(t *testing.T) {
		err := c.DrainNode(ctx, nodeA, kube.DrainOptions{Timeout: 30 * time.Second})
		var refused *kube.DrainRefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("err = %v, want a DrainRefusedError", err)
		}
		t.Logf("%v", err)
		if len(refused.DaemonSetPods) != 1 || !strings.HasPrefix(refused.DaemonSetPods[0], drainNS+"/agent-") {
			t.Errorf("DaemonSet pods %v", refused.DaemonSetPods)
		}
		bare := []string{drainNS + "/bare"}
		if !slices.Equal(refused.EmptyDirPods, bare) || !slices.Equal(refused.UnmanagedPods, bare) {
			t.Errorf("emptyDir pods %v, unmanaged pods %v, want %v", refused.EmptyDirPods, refused.UnmanagedPods, bare)
		}
		for _, want := range []string{"ignore_daemonsets = true", "delete_emptydir_data = true", "force = true", "nothing was evicted"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q", want)
			}
		}
		if n, _ := c.FindNode(ctx, nodeA); n == nil || !n.Spec.Unschedulable {
			t.Error("the drain did not cordon the Node")
		}
		pods := listPods(t, c)
		if countRunning(pods, "app=web", nodeA) != 2 || countRunning(pods, "app=bare", nodeA) != 1 {
			t.Error("a refused drain evicted pods")
		}
	})

	all := kube.DrainOptions{IgnoreDaemonSets: true, DeleteEmptyDirData: true, Force: true}

	t.Run("budget allows no disruption", func(t *testing.T) {
		opts := all
		opts.Timeout = 4 * time.Second
		start := time.Now()
		err := c.DrainNode(ctx, nodeA, opts)
		took := time.Since(start)
		var blocked *kube.EvictionBlockedError
		if !errors.As(err, &blocked) || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "drain timeout of 4s") {
			t.Fatalf("err = %v, want an EvictionBlockedError at the timeout", err)
		}
		t.Logf("after %s: %v", took.Round(time.Millisecond), err)
		for _, want := range []string{"drain-test/web-pdb (minAvailable 2", "0 disruptions allowed", "drain timeout of 4s", "disruption budget"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q", want)
			}
		}
		if took < opts.Timeout || took > opts.Timeout+2*time.Second {
			t.Errorf("returned after %s, want about %s", took, opts.Timeout)
		}
		// The bare pod (Force) went; the web pods stayed.
		pods := listPods(t, c)
		if countAll(pods, "app=bare") != 0 || countRunning(pods, "app=web", nodeA) != 2 {
			t.Errorf("bare pods %d, web pods on %s %d", countAll(pods, "app=bare"), nodeA, countRunning(pods, "app=web", nodeA))
		}
	})

	t.Run("evicted and rescheduled", func(t *testing.T) {
		// One disruption at a time: the second eviction waits (429) until
		// the first pod's replacement runs on B.
		p, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Get(ctx, "web-pdb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, new(intstr.FromInt32(1))
		if _, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitForPDB(t, c, p.Name, func(p *policyv1.PodDisruptionBudget) bool {
			return p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1
		})
		opts := all
		opts.Timeout = clusterWait
		start := time.Now()
		if err := c.DrainNode(ctx, nodeA, opts); err != nil {
			t.Fatal(err)
		}
		t.Logf("drained in %s", time.Since(start).Round(time.Millisecond))
		pods := listPods(t, c)
		if n := countAll(pods, "app=web", nodeA); n != 0 {
			t.Errorf("%d web pods left on %s", n, nodeA)
		}
		if countRunning(pods, "app=agent", nodeA) != 1 {
			t.Errorf("the DaemonSet pod on %s did not stay", nodeA)
		}
		waitForPods(t, c, "the web pods running on "+nodeB, func(pods []corev1.Pod) bool {
			return countRunning(pods, "app=web", nodeB) == 2
		})
	})

	t.Run("drained again", func(t *testing.T) {
		// Nothing left to evict but the ignored DaemonSet pod.
		if err := c.DrainNode(ctx, nodeA, kube.DrainOptions{IgnoreDaemonSets: true, Timeout: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pods that do not go", func(t *testing.T) {
		// A finalizer keeps the evicted pod after its kubelet has deleted it.
		const held = "held"
		_, err := c.CoreV1().Pods(drainNS).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: held, Labels: map[string]string{"app": held}, Finalizers: []string{"example.com/hold"}},
			Spec: corev1.PodSpec{
				NodeName:   nodeA, // bound directly: the Node is cordoned
				Containers: []corev1.Container{{Name: held, Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = c.CoreV1().Pods(drainNS).Patch(context.WithoutCancel(ctx), held, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		})
		waitForPods(t, c, "the held pod running", func(pods []corev1.Pod) bool { return countRunning(pods, "app="+held, nodeA) == 1 })
		err = c.DrainNode(ctx, nodeA, kube.DrainOptions{IgnoreDaemonSets: true, Force: true, Timeout: 3 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "evicted pods still terminating: drain-test/held") || !strings.Contains(err.Error(), "drain timeout of 3s") {
			t.Fatalf("err = %v, want the held pod named at the timeout", err)
		}
		t.Logf("%v", err)
	})

	t.Run("node not Ready", func(t *testing.T) {
		// A Node whose kubelet is gone (its VM destroyed): evicted pods can
		// never finish terminating, so the drain does not wait for them.
		const ghost = "win-drain-ghost"
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ghost}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.DeleteNode(context.WithoutCancel(ctx), ghost) })
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := c.FindNode(ctx, ghost)
			if err != nil {
				return err
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
			_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CoreV1().Pods(drainNS).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "stranded"},
			Spec:       corev1.PodSpec{NodeName: ghost, Containers: []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.DrainNode(ctx, ghost, kube.DrainOptions{Force: true, Timeout: 20 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("took %s", took)
		}
		p, err := c.CoreV1().Pods(drainNS).Get(ctx, "stranded", metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil {
			t.Error("the stranded pod was not evicted")
		}
	})

	t.Run("uncordon", func(t *testing.T) {
		if err := c.CordonNode(ctx, nodeA, false); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.FindNode(ctx, nodeA); n == nil || n.Spec.Unschedulable {
			t.Error("still cordoned")
		}
	})

	t.Run("missing node", func(t *testing.T) {
		if err := c.DrainNode(ctx, "win-absent", all); !kube.IsNotFound(err) {
			t.Errorf("drain: %v, want a NotFoundError", err)
		}
		if err := c.CordonNode(ctx, "win-absent", true); !kube.IsNotFound(err) {
			t.Errorf("cordon: %v, want a NotFoundError", err)
		}
	})
}

// createWorkloads creates, in drainNS, the Deployment "web" (2 replicas on
// the pool's Windows Nodes), the DaemonSet "agent" (one pod per pool Node)
// and the bare pod "bare" with an emptyDir volume on node.
func createWorkloads(t *testing.T, c *kube.Client, pool map[string]string, node string) {
	t.Helper()
	ctx := t.Context()
	selector := map[string]string{"kubernetes.io/os": "windows"}
	for k, v := range pool {
		selector[k] = v
	}
	tolerations := []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{
				NodeSelector: selector, Tolerations: tolerations,
				Containers: []corev1.Container{{Name: app, Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
			},
		}
	}
	replicas := int32(2)
	if _, err := c.AppsV1().Deployments(drainNS).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template("web"),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().DaemonSets(drainNS).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: template("agent"),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bare := template("bare")
	bare.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	bare.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if _, err := c.CoreV1().Pods(drainNS).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Labels: bare.Labels}, Spec: bare.Spec,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func listPods(t *testing.T, c *kube.Client) []corev1.Pod {
	t.Helper()
	list, err := c.CoreV1().Pods(drainNS).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// waitForPods polls the namespace's pods until cond holds (a test helper:
// the product code watches).
func waitForPods(t *testing.T, c *kube.Client, what string, cond func([]corev1.Pod) bool) {
	t.Helper()
	var last []corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Pods(drainNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		last = list.Items
		return cond(last), nil
	})
	if err != nil {
		var states []string
		for _, p := range last {
			states = append(states, p.Name+" "+string(p.Status.Phase)+" on "+p.Spec.NodeName)
		}
		t.Fatalf("waiting for %s: %v; pods: %v", what, err, states)
	}
}

func waitForPDB(t *testing.T, c *kube.Client, name string, cond func(*policyv1.PodDisruptionBudget) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(drainNS).Get(ctx, name, metav1.GetOptions{})
		return err == nil && cond(p), nil
	})
	if err != nil {
		t.Fatalf("PodDisruptionBudget %s: %v", name, err)
	}
}

// countRunning counts the running, not terminating pods with the label
// (k=v) on node.
func countRunning(pods []corev1.Pod, label, node string) int {
	k, v, _ := strings.Cut(label, "=")
	n := 0
	for _, p := range pods {
		if p.Labels[k] == v && p.Spec.NodeName == node && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// countAll counts the pods with the label, on node when one is given.
func countAll(pods []corev1.Pod, label string, node ...string) int {
	k, v, _ := strings.Cut(label, "=")
	n := 0
	for _, p := range pods {
		if p.Labels[k] == v && (len(node) == 0 || p.Spec.NodeName == node[0]) {
			n++
		}
	}
	return n
}
