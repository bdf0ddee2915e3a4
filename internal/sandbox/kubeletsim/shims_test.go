package kubeletsim_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
)

// TestHostProcessContainersOutliveTheKubelet: as containerd's shims keep a
// pod's containers on Windows, a kubelet restart in the same boot finds its
// HostProcess containers running and adopts them (same container, no
// restart counted), ends those whose pods went away while it was stopped,
// and a reboot ends them all, to be started again.
func TestHostProcessContainersOutliveTheKubelet(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	const name = "win-shims"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	waitForNode(t, cs, name, "Ready", nodeReady)

	kept := createHostProcessPod(t, cs, name, "kept-"+name)
	gone := createHostProcessPod(t, cs, name, "gone-"+name)
	running := func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	}
	before := waitForPod(t, cs, kept.Name, "its container running", running).Status.ContainerStatuses[0]
	waitForPod(t, cs, gone.Name, "its container running", running)

	n.run(t, "Stop-Service -Name 'kubelet'")
	if got := kubeletsim.HostProcessPodsRunning(n.Host); !slices.Contains(got, string(kept.UID)) || !slices.Contains(got, string(gone.UID)) {
		t.Fatalf("with the kubelet stopped, the host runs the containers of pods %v, want %s and %s", got, kept.UID, gone.UID)
	}
	// Deleted at once (no kubelet confirms a graceful deletion): its
	// container runs on until a kubelet cleans it up.
	zero := int64(0)
	if err := cs.CoreV1().Pods("default").Delete(ctx, gone.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	n.run(t, "Start-Service -Name 'kubelet'")
	n.waitForLog(t, `"Killing unwanted pod" podName="`+gone.Name+`"`, clusterWait)
	after := waitForPod(t, cs, kept.Name, "its container running after the kubelet restart", func(p *corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].ContainerID == before.ContainerID
	}).Status.ContainerStatuses[0]
	if after.RestartCount != 0 || !after.State.Running.StartedAt.Equal(&before.State.Running.StartedAt) {
		t.Errorf("after a kubelet restart the container is %+v, want the one that ran before (%+v) with no restart", after, before)
	}
	if got := kubeletsim.HostProcessPodsRunning(n.Host); !slices.Equal(got, []string{string(kept.UID)}) {
		t.Errorf("after the kubelet's cleanup the host runs the containers of pods %v, want only %s", got, kept.UID)
	}

	n.Host.Reboot()
	waitForPod(t, cs, kept.Name, "a new container after the reboot", func(p *corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].ContainerID != before.ContainerID
	})
	// Containers ended by the boot's end (or their pod's) exited for no
	// fault of theirs: nothing reports them as exits or crashes.
	if log := n.kubeletLog(); strings.Contains(log, `"Container exited" pod="default/`+kept.Name) || strings.Contains(log, `"Container exited" pod="default/`+gone.Name) {
		t.Errorf("the kubelet reported a container ended by a reboot or a cleanup as exited:\n%s", log)
	}
}

// createHostProcessPod creates a HostProcess pod bound to node whose
// container sleeps, changed first by each of edit.
func createHostProcessPod(t *testing.T, cs kubernetes.Interface, node, name string, edit ...func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	hostProcess, user := true, `NT AUTHORITY\SYSTEM`
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName: node, HostNetwork: true,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
				HostProcess: &hostProcess, RunAsUserName: &user,
			}},
			Containers: []corev1.Container{{
				Name: "c", Image: "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
				Command: []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-Command", "Start-Sleep -Seconds 600"},
			}},
		},
	}
	for _, e := range edit {
		e(pod)
	}
	pod, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return pod
}

// TestHostProcessInitContainers: a HostProcess pod's init containers run
// one after another, each to its exit, before its containers (the pod
// Pending and not Initialized meanwhile); a failing one is restarted and
// holds the containers back; a container with a lifecycle hook is refused,
// not run without it.
func TestHostProcessInitContainers(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	const name = "win-init"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	waitForNode(t, cs, name, "Ready", nodeReady)
	ps := func(cmd string) []string {
		return []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-Command", cmd}
	}
	const first, second = `C:\k\init-first.txt`, `C:\k\init-second.txt`
	ok := createHostProcessPod(t, cs, name, "init-ok", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{
			{Name: "first", Image: p.Spec.Containers[0].Image, Command: ps(`Set-Content -Path '` + first + `' -Value 'one'`)},
			// Runs after the first: it fails unless the first's file is there.
			{Name: "second", Image: p.Spec.Containers[0].Image, Command: ps(`Get-Content -Path '` + first + `' | Out-Null; Set-Content -Path '` + second + `' -Value 'two'`)},
		}
	})
	waitForPod(t, cs, ok.Name, "initialized and running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.InitContainerStatuses) == 2 &&
			p.Status.InitContainerStatuses[1].State.Terminated != nil && p.Status.InitContainerStatuses[1].State.Terminated.ExitCode == 0 &&
			len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	if !n.Host.FileExists(second) {
		t.Errorf("the second init container did not run after the first")
	}
	failing := createHostProcessPod(t, cs, name, "init-fails", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "fails", Image: p.Spec.Containers[0].Image, Command: ps("exit 3")}}
	})
	waitForPod(t, cs, failing.Name, "its init container failing", func(p *corev1.Pod) bool {
		if len(p.Status.InitContainerStatuses) != 1 {
			return false
		}
		last := p.Status.InitContainerStatuses[0].LastTerminationState.Terminated
		return p.Status.Phase == corev1.PodPending && last != nil && last.ExitCode == 3 &&
			len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running == nil
	})
	hooked := createHostProcessPod(t, cs, name, "hooked", func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: ps("exit 0")}}}
	})
	waitForPod(t, cs, hooked.Name, "refused for its hook", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			strings.Contains(p.Status.ContainerStatuses[0].State.Waiting.Message, "lifecycle hooks")
	})
}
