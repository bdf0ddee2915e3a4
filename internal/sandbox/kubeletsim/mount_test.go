package kubeletsim_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
)

// TestMountRetry: a HostProcess pod whose ConfigMap volume cannot be set up
// yet (here: the ConfigMap does not exist; in a node's first seconds, the
// Node authorizer not yet knowing the pod's binding) stays
// ContainerCreating with a FailedMount event, and its container starts
// within the volume manager's retry (500 ms, doubling) once the ConfigMap
// is there: no CrashLoopBackOff (10 s), no restart counted.
func TestMountRetry(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	const name = "win-mount"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	waitForNode(t, cs, name, "Ready", nodeReady)

	pod := createHostProcessPod(t, cs, name, "mount-"+name, func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/config"}}
		p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "late-" + name}},
		}}}
	})
	waitForEvent(t, cs, pod.Name, "FailedMount", `MountVolume.SetUp failed for volume "config"`)

	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "late-" + name}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().ConfigMaps("default").Delete(context.Background(), "late-"+name, metav1.DeleteOptions{})
	})
	created := time.Now()
	p := waitForPod(t, cs, pod.Name, "its container running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	// The retry waits at most its current back-off (0.5 s, 1 s, 2 s, ... while
	// the ConfigMap was missing): well under the container back-off.
	if took := time.Since(created); took >= kubeletsim.CrashLoopBackOff.Initial {
		t.Errorf("the container ran %s after its ConfigMap appeared, want within the volume manager's retry", took.Round(time.Millisecond))
	}
	if r := p.Status.ContainerStatuses[0].RestartCount; r != 0 {
		t.Errorf("a mount retry counted %d restarts", r)
	}
}
