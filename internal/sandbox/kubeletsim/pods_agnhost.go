package kubeletsim

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/agnhost"
)

// agnhostRepository is the image the sandbox's container runtime can run in
// a (non-HostProcess) Windows pod: Kubernetes' e2e test image agnhost
// (test/images/agnhost; multi-arch with Windows Server variants), whose
// subcommands behave the same on Linux and Windows. Of them only connect is
// modelled; any other is refused. Every other image's pod runs as before:
// Running, its command not run.
const agnhostRepository = "registry.k8s.io/e2e-test-images/agnhost"

func isAgnhostPod(pod *corev1.Pod) bool {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.HostNetwork {
		return false
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if !strings.HasPrefix(c.Image, agnhostRepository+":") && !strings.HasPrefix(c.Image, agnhostRepository+"@") {
			return false
		}
	}
	return true
}

// runAgnhost runs the pod's init containers and then its containers in order,
// in the pod's network (podNet), and reports the pod as the kubelet does for
// restartPolicy Never: the first failing init container fails the pod; with
// terminationMessagePolicy FallbackToLogsOnError a failed container's last
// output is its termination message (pkg/kubelet/kuberuntime
// kuberuntime_container.go: the last 80 lines, 2048 bytes at most).
func (w *podWorker) runAgnhost(ctx context.Context, pod *corev1.Pod, podIP string) error {
	w.n.mu.Lock()
	pn := w.n.podNetwork
	w.n.mu.Unlock()
	// The CNI ADD of the pod's sandbox attaches it to the HNS network
	// (win-overlay's "network ... not found" until flanneld made it): the
	// kubelet retries the sandbox, the pod stays Pending.
	if len(readHNS(pn.files)) == 0 {
		w.event(ctx, pod, corev1.EventTypeWarning, "FailedCreatePodSandBox",
			fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: plugin type=\"win-overlay\" failed (add): no HNS network on the host", sandboxID(pod)))
		w.queue.AddAfter(pod.Namespace+"/"+pod.Name, cniPollInterval)
		return w.pending(ctx, pod)
	}
	// The images first (kuberuntime's EnsureImageExists): one the registry
	// does not serve leaves its container waiting in ErrImagePull, and the
	// pod Pending.
	ids, pulled, err := w.pullImages(ctx, pod, append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...))
	if !pulled {
		return err
	}
	dnsServer := ""
	if len(w.n.k.settings.ClusterDNS) > 0 {
		dnsServer = w.n.k.settings.ClusterDNS[0]
	}
	search := []string{pod.Namespace + ".svc." + w.n.k.settings.ClusterDomain, "svc." + w.n.k.settings.ClusterDomain, w.n.k.settings.ClusterDomain}
	st := runningStatus(pod, w.n.nodeIP(), podIP)
	now := metav1.Now()
	run := func(c corev1.Container) corev1.ContainerStatus {
		var out bytes.Buffer
		code := agnhost.Connect(ctx, agnhostNet{pn: pn, dnsServer: dnsServer, search: search}, append(append([]string{}, c.Command...), c.Args...), &out, "agnhost", "agnhost.exe")
		term := &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Completed", StartedAt: now, FinishedAt: metav1.Now()}
		if code != 0 {
			term.Reason = "Error"
			if c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
				term.Message = tailMessage(out.String())
			}
		}
		w.n.k.log.Info("kuberuntime_container.go:1019", "Container exited", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "exitCode", code)
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: ids[c.Image], ContainerID: containerID(),
			State: corev1.ContainerState{Terminated: term}}
	}
	waiting := func(c corev1.Container, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	st.InitContainerStatuses, st.ContainerStatuses = nil, nil
	failed := false
	for _, c := range pod.Spec.InitContainers {
		if failed {
			st.InitContainerStatuses = append(st.InitContainerStatuses, waiting(c, "PodInitializing"))
			continue
		}
		cs := run(c)
		failed = cs.State.Terminated.ExitCode != 0
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	for _, c := range pod.Spec.Containers {
		if failed {
			// An init container failed: the pod never initializes, or an
			// earlier container failed (a pod of several containers runs
			// them side by side; the sandbox's probe has one).
			st.ContainerStatuses = append(st.ContainerStatuses, waiting(c, "PodInitializing"))
			continue
		}
		cs := run(c)
		failed = cs.State.Terminated.ExitCode != 0
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	st.Phase = corev1.PodSucceeded
	if failed {
		st.Phase = corev1.PodFailed
	}
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
			st.Conditions[i].Status, st.Conditions[i].Reason = corev1.ConditionFalse, "PodCompleted"
		}
	}
	updated := pod.DeepCopy()
	updated.Status = st
	_, err = w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// imagePullFailed reports a pod whose container's image could not be
// pulled: Pending, that container waiting with reason ErrImagePull and
// containerd's error as its message (the others waiting PodInitializing).
func (w *podWorker) imagePullFailed(ctx context.Context, pod *corev1.Pod, container string, pullErr error) error {
	updated := pod.DeepCopy()
	updated.Status.Phase = corev1.PodPending
	waiting := func(c corev1.Container) corev1.ContainerStatus {
		st := corev1.ContainerStateWaiting{Reason: "PodInitializing"}
		if c.Name == container {
			st = corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: pullErr.Error()}
		}
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Waiting: &st}}
	}
	updated.Status.InitContainerStatuses, updated.Status.ContainerStatuses = nil, nil
	for _, c := range pod.Spec.InitContainers {
		updated.Status.InitContainerStatuses = append(updated.Status.InitContainerStatuses, waiting(c))
	}
	for _, c := range pod.Spec.Containers {
		updated.Status.ContainerStatuses = append(updated.Status.ContainerStatuses, waiting(c))
	}
	_, err := w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func tailMessage(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	s = strings.Join(lines, "\n")
	if len(s) > 2048 {
		s = s[len(s)-2048:]
	}
	return s
}

// agnhostNet is a Windows pod's network, where agnhost's connect runs:
// names resolve through the kubelet's clusterDNS with the pod's search list,
// packets go through the host's HNS (podNet.dial). A packet HNS drops (no
// load balancer for a ClusterIP) is a TIMEOUT on Windows; the simulator
// reports it at once, with the reason after it.
type agnhostNet struct {
	pn        *podNet
	dnsServer string
	search    []string
}

func (a agnhostNet) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	return lookup(ctx, a.pn, a.dnsServer, a.search, host)
}

func (a agnhostNet) Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	return a.pn.dial(ctx, network, dst)
}

func (agnhostNet) Dropped(err error) bool {
	return strings.Contains(err.Error(), "no HNS load balancer") || strings.Contains(err.Error(), "the packet is dropped")
}

// lookup resolves a name as the pod's resolver does: absolute with a
// trailing dot, else (fewer than ndots:5 dots) each search domain first.
func lookup(ctx context.Context, pn *podNet, dnsServer string, search []string, host string) (netip.Addr, error) {
	if dnsServer == "" {
		return netip.Addr{}, fmt.Errorf("lookup %s: no DNS servers (the kubelet has no clusterDNS)", host)
	}
	return agnhost.Resolve(ctx, pn.resolver(dnsServer), dnsServer, search, host)
}

// pullImages pulls the containers' images as containerd does for the CRI:
// from what the registry serves (images.go), through the site's egress
// (egress.go: a proxy-only site needs containerd's proxy), then played at
// the pull's latency. pulled is false when a pull failed and the pod was
// reported for it (err is that report's), or the pull was interrupted.
func (w *podWorker) pullImages(ctx context.Context, pod *corev1.Pod, containers []corev1.Container) (ids map[string]string, pulled bool, err error) {
	ids = map[string]string{}
	for _, c := range containers {
		id, err := pullImage(c.Image)
		if err == nil {
			err = w.n.k.reachRegistry(ctx, c.Image)
		}
		if err != nil {
			w.event(ctx, pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", c.Image, err))
			return nil, false, w.imagePullFailed(ctx, pod, c.Name, err)
		}
		if err := playPull(ctx, w.n.k.cfg.Latency, w.n.k.cfg.Host.Disk, c.Image, id); err != nil {
			return nil, false, err
		}
		ids[c.Image] = id
	}
	return ids, true, nil
}
