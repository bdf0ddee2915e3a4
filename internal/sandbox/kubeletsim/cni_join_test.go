package kubeletsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
)

// TestNotReadyUntilCNI: a joined node without a CNI network stays NotReady
// with the message kubelet+containerd report; pods that need the pod
// network wait (event NetworkNotReady) while hostNetwork pods run; once the
// conflist and its plugins are on the disk the node turns Ready and the
// waiting pod runs.
func TestNotReadyUntilCNI(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	const name = "win-nocni"
	n := newNode(t, name, hostOptions{noCNI: true})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	const want = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	waitForNode(t, cs, name, "NotReady for the network", func(node *corev1.Node) bool {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionFalse && c.Reason == "KubeletNotReady" && c.Message == want
			}
		}
		return false
	})
	hostPod := boundPod(t, cs, name, "hostnet", true)
	podPod := boundPod(t, cs, name, "podnet", false)
	waitForPod(t, cs, hostPod, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	waitForEvent(t, cs, podPod, "NetworkNotReady", "network is not ready: "+want)
	if p, _ := cs.CoreV1().Pods("default").Get(ctx, podPod, metav1.GetOptions{}); p.Status.Phase == corev1.PodRunning {
		t.Fatalf("pod %s runs without a network", podPod)
	}

	kubeletsimtest.WriteCNI(t, n.Host)
	waitForNode(t, cs, name, "Ready", nodeReady)
	waitForPod(t, cs, podPod, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" })
}

// boundPod creates a pod already bound to the node (as a DaemonSet's pods
// are, bypassing the scheduler), tolerating the node's taints.
func boundPod(t *testing.T, cs kubernetes.Interface, node, name string, hostNetwork bool) string {
	t.Helper()
	p, err := cs.CoreV1().Pods("default").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + node},
		Spec: corev1.PodSpec{
			NodeName: node, HostNetwork: hostNetwork,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "c", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
	return p.Name
}

func waitForPod(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s never %s: %v\nstatus: %+v", name, what, err, last.Status)
	}
	return last
}

func waitForEvent(t *testing.T, cs kubernetes.Interface, pod, reason, message string) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && strings.Contains(e.Message, message) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no event %s %q for %s: %v; events: %q", reason, message, pod, err, seen)
	}
}
