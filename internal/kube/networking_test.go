package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// TestNetworkingLifecycle applies the flannel mode's objects to the real
// control plane, sees no drift, changes the kube-proxy DaemonSet as another
// manager would (kubectl edit), sees the drift, puts it back, and deletes
// everything it owns.
func TestNetworkingLifecycle(t *testing.T) {
	_, c := cluster(t)
	ctx := t.Context()
	ns := "netlife"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objs, err := kube.NetworkingSpec{Namespace: ns, Mode: "flannel", APIServer: c.Host(),
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12"}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyNetworking(ctx, objs); err != nil {
		t.Fatal(err)
	}
	st, err := c.ObserveNetworking(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Drift) != 0 {
		t.Fatalf("drift right after apply: %v", st.Drift)
	}
	if st.Agents["kube-proxy"] == "" || st.Agents["flannel"] == "" {
		t.Errorf("agent summary %v lacks kube-proxy or flannel", st.Agents)
	}

	ds, err := c.AppsV1().DaemonSets(ns).Get(ctx, networking.KubeProxyWindows, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds.Spec.Template.Spec.Containers[0].Image = "example.com/other:v1"
	if _, err := c.AppsV1().DaemonSets(ns).Update(ctx, ds, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().ConfigMaps(ns).Delete(ctx, networking.FlannelWindows, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err = c.ObserveNetworking(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ConfigMap " + ns + "/" + networking.FlannelWindows + ": missing", "DaemonSet " + ns + "/" + networking.KubeProxyWindows + ": changed outside Terraform"}
	if strings.Join(st.Drift, "|") != strings.Join(want, "|") {
		t.Fatalf("drift = %q, want %q", st.Drift, want)
	}
	if err := c.ApplyNetworking(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if st, err = c.ObserveNetworking(ctx, objs); err != nil || len(st.Drift) != 0 {
		t.Fatalf("after re-apply: drift %v, err %v", st.Drift, err)
	}
	if mode, err := c.ObservedNetworkingMode(ctx, ns); err != nil || mode != "flannel" {
		t.Errorf("observed mode %q, %v; want flannel", mode, err)
	}

	// A mode change removes what the new mode does not own.
	none, _ := kube.NetworkingSpec{Namespace: ns, Mode: "none"}.Render()
	if err := c.ApplyNetworking(ctx, none); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{networking.KubeProxyWindows, networking.FlannelWindowsDS} {
		if _, err := c.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Errorf("DaemonSet %s survived the change to none", name)
		}
	}
	if crbs, _ := c.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=windows-node-networking"}); crbs != nil {
		for _, b := range crbs.Items {
			if b.Subjects[0].Namespace == ns {
				t.Errorf("ClusterRoleBinding %s survived", b.Name)
			}
		}
	}
	if err := c.DeleteNetworking(ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// TestWaitForAgentsReady: the DaemonSets put their pods on a Windows Node
// (tolerating its not-ready and os=windows taints); the wait names the agent
// whose pod is not Ready, with its container state and last output, and
// returns once both are Running and Ready. The test plays the kubelet.
func TestWaitForAgentsReady(t *testing.T) {
	_, c := cluster(t)
	ctx := t.Context()
	ns := "netwait"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	node := "agentwin-0"
	n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{kube.LabelOS: "windows"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.WithoutCancel(ctx), node, metav1.DeleteOptions{}) })
	_ = n
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
		n.Status.Allocatable = n.Status.Capacity
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "KubeletReady"}}
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	objs, err := kube.NetworkingSpec{Namespace: ns, Mode: "flannel", APIServer: c.Host(),
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12"}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyNetworking(ctx, objs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteNetworking(context.WithoutCancel(ctx), ns) })

	// The pods exist (scheduled), nothing runs them yet: the wait fails
	// naming both agents.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = c.WaitForAgentsReady(wctx, node, ns, objs.Agents())
	cancel()
	var aw *kube.AgentWaitError
	if !errors.As(err, &aw) || len(aw.Pending) != 2 {
		t.Fatalf("WaitForAgentsReady = %v, want both agents pending", err)
	}

	pods := func() []corev1.Pod {
		list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(pods()) < 2 && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	for _, p := range pods() {
		p := p
		running := strings.HasPrefix(p.Name, networking.FlannelWindowsDS)
		st := corev1.ContainerStatus{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image, RestartCount: 3}
		p.Status.Phase = corev1.PodRunning
		if running {
			st.Ready, st.State.Running = true, &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		} else {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}
			st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				Message: "source VIP 10.244.1.2\nE1123 run.go:72] \"command failed\" err=\"source-vip flag not set\""}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		if _, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel = context.WithTimeout(ctx, 3*time.Second)
	_, err = c.WaitForAgentsReady(wctx, node, ns, objs.Agents())
	cancel()
	if !errors.As(err, &aw) || len(aw.Pending) != 1 || aw.Pending[0].Agent.Name != "kube-proxy" {
		t.Fatalf("WaitForAgentsReady = %v, want kube-proxy pending", err)
	}
	for _, want := range []string{"kube-proxy (DaemonSet kube-proxy-windows)", "CrashLoopBackOff", "restarts=3", "last exit code 1", "source-vip flag not set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	// The kubelet restarts it and it comes up: the wait returns.
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := c.WaitForAgentsReady(wctx, node, ns, objs.Agents())
		done <- err
	}()
	for _, p := range pods() {
		if !strings.HasPrefix(p.Name, networking.KubeProxyWindows) {
			continue
		}
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		p.Status.ContainerStatuses[0].Ready = true
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if _, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitForAgentsReady after both Ready: %v", err)
	}
}
