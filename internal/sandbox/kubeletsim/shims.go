package kubeletsim

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod's containers on Windows are not the kubelet's processes: containerd
// runs each under a shim (containerd-shim-runhcs-v1.exe; a HostProcess
// container is a job object, hcsshim internal/jobcontainers) that goes on
// when the kubelet, or containerd itself, stops. A kubelet that starts again
// relists the runtime (pkg/kubelet/pleg/generic.go) and finds them running,
// so it neither starts them again nor counts a restart; it ends only the
// ones no pod bound to its node wants any more (HandlePodCleanups,
// pkg/kubelet/kubelet_pods.go). A new boot of the host has none.
//
// The simulator keeps each host's HostProcess pods in a shimTable beside
// its kubelets, for as long as the host's boot (winsim.Host.UpContext): the
// kube-proxy and flanneld a join's kubelet restart leaves running are still
// the same processes, with the same HNS state and statuses, as on Windows.
type shimTable struct {
	ctx  context.Context // the host's boot
	mu   sync.Mutex
	pods map[types.UID]*hostProcessPod
}

// shimTables holds each host's shimTable of its current boot.
var shimTables sync.Map // processRunner -> *shimTable

// shimsOf returns the shimTable of the host's current boot.
func shimsOf(host processRunner) *shimTable {
	boot := host.UpContext()
	for {
		v, loaded := shimTables.LoadOrStore(host, &shimTable{ctx: boot, pods: map[types.UID]*hostProcessPod{}})
		t := v.(*shimTable)
		if !loaded {
			// The boot's end takes its containers (their contexts derive
			// from it) and its table.
			context.AfterFunc(boot, func() { shimTables.CompareAndDelete(host, t) })
		}
		if t.ctx == boot {
			return t
		}
		shimTables.CompareAndDelete(host, t) // an earlier boot's
	}
}

// startOrAdopt returns the pod's running containers, attached to w: adopted
// when another kubelet (or none) held them, or new, to be started by the
// caller, when none run.
func (t *shimTable) startOrAdopt(w *podWorker, pod *corev1.Pod) (hp *hostProcessPod, adopted, started bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if hp := t.pods[pod.UID]; hp != nil {
		hp.mu.Lock()
		held := hp.w == w
		hp.mu.Unlock()
		if !held {
			hp.attach(w)
		}
		return hp, !held, false
	}
	ctx, cancel := context.WithCancel(t.ctx)
	hp = &hostProcessPod{w: w, attached: make(chan struct{}), pod: pod.DeepCopy(), ctx: ctx, cancel: cancel,
		statuses: map[string]*corev1.ContainerStatus{}}
	close(hp.attached)
	for _, c := range pod.Spec.Containers {
		hp.statuses[c.Name] = &corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageID(c.Image),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	}
	for _, c := range pod.Spec.InitContainers {
		hp.statuses[c.Name] = &corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageID(c.Image),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	}
	t.pods[pod.UID] = hp
	return hp, false, true
}

// end stops the pod's containers.
func (t *shimTable) end(uid types.UID) {
	t.mu.Lock()
	hp := t.pods[uid]
	delete(t.pods, uid)
	t.mu.Unlock()
	if hp != nil {
		hp.cancel()
	}
}

// endUnwanted stops the containers of every pod wanted does not name (the
// kubelet's cleanup of pods it has no record of) and returns them.
func (t *shimTable) endUnwanted(wanted map[types.UID]bool) []*corev1.Pod {
	t.mu.Lock()
	var ended []*hostProcessPod
	for uid, hp := range t.pods {
		if !wanted[uid] {
			ended = append(ended, hp)
			delete(t.pods, uid)
		}
	}
	t.mu.Unlock()
	var pods []*corev1.Pod
	for _, hp := range ended {
		hp.cancel()
		pods = append(pods, hp.pod)
	}
	return pods
}

// detachAll leaves w's pods without a kubelet: w's kubelet has stopped.
func (t *shimTable) detachAll(w *podWorker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, hp := range t.pods {
		hp.detach(w)
	}
}
