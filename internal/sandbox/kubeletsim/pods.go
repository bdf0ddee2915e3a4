package kubeletsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// podWorker runs the pods bound to the node: it watches them with the
// field selector spec.nodeName=<node> (what the kubelet's API source does),
// reports them Running with an address from the node's pod CIDR, and
// deletes those being deleted once their "containers" stopped, so drains and
// deletions complete.
type podWorker struct {
	mu       sync.Mutex
	recorded map[string]bool // events already recorded
	n        *nodeAgent
	store    cache.Store
	queue    workqueue.TypedRateLimitingInterface[string]
}

func newPodWorker(n *nodeAgent) *podWorker {
	return &podWorker{
		n:     n,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
}

func (w *podWorker) run(ctx context.Context) {
	defer w.queue.ShutDown()
	lw := cache.NewListWatchFromClient(w.n.client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", w.n.name))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	w.store = inf.GetStore()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			w.queue.Add(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				w.n.k.log.Info("kubelet.go:2480", "SyncLoop ADD", "source", "api", "pods", []string{p.Namespace + "/" + p.Name})
			}
			enqueue(obj)
		},
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				w.n.k.log.Info("kubelet.go:2503", "SyncLoop REMOVE", "source", "api", "pods", []string{p.Namespace + "/" + p.Name})
				w.stopHostProcess(p)
				w.release(p)
			} else if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				if p, ok := d.Obj.(*corev1.Pod); ok {
					w.release(p)
				}
			}
		},
	})
	go inf.RunWithContext(ctx)
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	if runner, ok := w.n.k.cfg.Files.(processRunner); ok {
		shims := shimsOf(runner)
		// The pods' containers outlive this kubelet (shims.go).
		defer shims.detachAll(w)
		go func() {
			if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				w.cleanUpOrphans(shims)
			}
		}()
	}
	for {
		key, quit := w.queue.Get()
		if quit {
			return
		}
		err := w.sync(ctx, key)
		if err != nil && ctx.Err() == nil {
			w.n.k.log.Error("pod_workers.go:1301", err, "Error syncing pod, skipping", "pod", key)
			w.queue.AddRateLimited(key)
		} else {
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

// cleanUpOrphans ends the containers still running from before this
// kubelet started whose pods are no longer bound to its node (deleted, or
// the node renamed), once it has listed its pods: HandlePodCleanups'
// killing of unwanted pods (pkg/kubelet/kubelet_pods.go).
func (w *podWorker) cleanUpOrphans(shims *shimTable) {
	wanted := map[types.UID]bool{}
	for _, obj := range w.store.List() {
		if p, ok := obj.(*corev1.Pod); ok {
			wanted[p.UID] = true
		}
	}
	for _, p := range shims.endUnwanted(wanted) {
		w.n.k.log.Info("kubelet_pods.go:1209", "Killing unwanted pod", "podName", p.Name, "podUID", p.UID)
		w.release(p)
	}
}

func (w *podWorker) release(p *corev1.Pod) {
	w.stopIIS(p)
	w.n.mu.Lock()
	ip := w.n.ipam
	w.n.mu.Unlock()
	if ip != nil {
		ip.release(string(p.UID))
	}
}

func (w *podWorker) sync(ctx context.Context, key string) error {
	obj, exists, err := w.store.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		return w.kill(ctx, pod)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name != corev1.Windows {
		return w.reject(ctx, pod, "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS")
	}
	if isRunning(pod) && !isHostProcess(pod) {
		return nil
	}
	// The sandbox image and the containers' images, through containerd's
	// registry mirrors when it has any (registry_pull.go).
	if ok, err := w.ensureImages(ctx, pod); !ok || err != nil {
		return err
	}
	if isHostProcess(pod) {
		if specs := gmsaSpecs(pod); len(specs) > 0 {
			// Not modelled (pods_gmsa.go): refused, not run without it.
			failed := map[string]corev1.ContainerStateWaiting{}
			for name := range specs {
				failed[name] = corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: "gMSA in HostProcess containers is not modelled by the simulator"}
			}
			return w.failStart(ctx, key, pod, w.n.nodeIP(), failed)
		}
		// Its containers are processes on the host, run with the
		// container's command (pods_hostprocess.go).
		return w.startHostProcess(pod)
	}
	var ip string
	if pod.Spec.HostNetwork {
		ip = w.n.nodeIP()
	} else {
		// kubelet.go SyncPod: a pod that needs the pod network waits for
		// the runtime's network ("network is not ready: ..." event
		// NetworkNotReady); hostNetwork pods go ahead.
		if err := w.n.k.networkError(); err != nil {
			w.event(ctx, pod, corev1.EventTypeWarning, "NetworkNotReady", "network is not ready: "+networkNotReadyMessage(err))
			w.queue.AddAfter(key, cniPollInterval)
			return w.pending(ctx, pod)
		}
		if err := w.n.k.sandboxNetworkError(); err != nil {
			w.event(ctx, pod, corev1.EventTypeWarning, "FailedCreatePodSandBox",
				fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: %v", sandboxID(pod), err))
			w.queue.AddAfter(key, cniPollInterval)
			return w.pending(ctx, pod)
		}
		if conf, isCalico, err := w.n.k.calicoConf(); isCalico {
			// Calico IPAM hands out the address from the node's block,
			// whatever spec.podCIDR says (cni_calico.go).
			var block netip.Prefix
			if err == nil {
				ip, block, err = calicoAdd(ctx, w.n.k.cfg.Files, conf, w.n.name, w.n.nodeIP(), calicoHandle(pod))
			}
			if err != nil {
				w.event(ctx, pod, corev1.EventTypeWarning, "FailedCreatePodSandBox",
					fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: plugin type=\"calico\" failed (add): %v", sandboxID(pod), err))
				w.queue.AddAfter(key, cniPollInterval)
				return w.pending(ctx, pod)
			}
			w.n.useCalicoBlock(block)
		} else {
			// Without a pod CIDR the network plugin cannot give the sandbox an
			// address; the pod stays ContainerCreating until the CIDR arrives.
			select {
			case <-w.n.podCIDRSet:
			default:
				w.queue.AddAfter(key, time.Second)
				return nil
			}
			w.n.mu.Lock()
			p := w.n.ipam
			w.n.mu.Unlock()
			if ip, err = p.allocate(string(pod.UID)); err != nil {
				return err
			}
		}
	}
	if failed := w.gmsaStartErrors(ctx, pod); len(failed) > 0 {
		// HCS could not give a container its gMSA (pods_gmsa.go).
		return w.failStart(ctx, key, pod, ip, failed)
	}
	if isAgnhostPod(pod) && !pod.Spec.HostNetwork {
		return w.runAgnhost(ctx, pod, ip)
	}
	if isIISPod(pod) {
		return w.runIIS(ctx, pod, ip)
	}
	status := runningStatus(pod, w.n.nodeIP(), ip)
	updated := pod.DeepCopy()
	updated.Status = status
	_, err = w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		w.n.k.log.Info("kubelet.go:2530", "SyncLoop (PLEG): event for pod", "pod", key, "event", "ContainerStarted", "podIP", ip)
	}
	return err
}

// kill stops the pod's containers and, as the status manager does once they
// are gone, deletes the pod with grace period 0 and a UID precondition.
func (w *podWorker) kill(ctx context.Context, pod *corev1.Pod) error {
	w.n.k.log.Info("kubelet.go:2490", "SyncLoop DELETE", "source", "api", "pods", []string{pod.Namespace + "/" + pod.Name})
	w.stopHostProcess(pod)
	zero := int64(0)
	uid := pod.UID
	err := w.n.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		err = nil
	}
	if err == nil {
		w.release(pod)
		if conf, isCalico, cerr := w.n.k.calicoConf(); isCalico && cerr == nil && !pod.Spec.HostNetwork {
			// The IPAM plugin's DEL: the pod's address back to its block.
			if rerr := calicoDel(ctx, w.n.k.cfg.Files, conf, calicoHandle(pod)); rerr != nil {
				w.n.k.log.Error("pod_container_deletor.go:80", rerr, "calico failed (delete)", "pod", pod.Namespace+"/"+pod.Name)
			}
		}
		w.n.k.log.Info("status_manager.go:895", "Pod fully terminated and removed from etcd", "pod", pod.Namespace+"/"+pod.Name)
	}
	return err
}

func (w *podWorker) reject(ctx context.Context, pod *corev1.Pod, reason, msg string) error {
	updated := pod.DeepCopy()
	updated.Status.Phase = corev1.PodFailed
	updated.Status.Reason, updated.Status.Message = reason, msg
	_, err := w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// event records an Event on the pod once per reason and message, as the
// kubelet's recorder does (the API server's event aggregation aside).
func (w *podWorker) event(ctx context.Context, pod *corev1.Pod, typ, reason, msg string) {
	k := string(pod.UID) + "|" + reason + "|" + msg
	w.mu.Lock()
	if w.recorded == nil {
		w.recorded = map[string]bool{}
	}
	seen := w.recorded[k]
	w.recorded[k] = true
	w.mu.Unlock()
	if seen {
		return
	}
	now := metav1.Now()
	_, err := w.n.client.CoreV1().Events(pod.Namespace).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         reason, Message: msg, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: w.n.name},
	}, metav1.CreateOptions{})
	if err != nil && ctx.Err() == nil {
		w.n.k.log.Error("event.go:368", err, "Server rejected event (will not retry!)", "reason", reason)
	}
	w.n.k.log.Info("event.go:389", "Event occurred", "object", pod.Namespace+"/"+pod.Name, "kind", "Pod", "type", typ, "reason", reason, "message", msg)
}

// pending reports a pod whose sandbox is not up yet: Pending, its
// containers waiting in ContainerCreating.
func (w *podWorker) pending(ctx context.Context, pod *corev1.Pod) error {
	updated := pod.DeepCopy()
	st := &updated.Status
	if st.Phase == corev1.PodPending && len(st.ContainerStatuses) == len(pod.Spec.Containers) {
		return nil
	}
	st.Phase = corev1.PodPending
	st.HostIP, st.HostIPs = w.n.nodeIP(), []corev1.HostIP{{IP: w.n.nodeIP()}}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		})
	}
	_, err := w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// sandboxID is a stable stand-in for the pod sandbox's id in messages.
func sandboxID(pod *corev1.Pod) string {
	sum := sha256.Sum256([]byte(pod.UID))
	return hex.EncodeToString(sum[:])
}

func isRunning(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// runningStatus is the status the kubelet reports once every container runs.
func runningStatus(pod *corev1.Pod, hostIP, podIP string) corev1.PodStatus {
	now := metav1.Now()
	st := *pod.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	set := func(t corev1.PodConditionType) {
		for i := range st.Conditions {
			if st.Conditions[i].Type == t {
				if st.Conditions[i].Status != corev1.ConditionTrue {
					st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = corev1.ConditionTrue, now
					st.Conditions[i].Reason, st.Conditions[i].Message = "", ""
				}
				return
			}
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		set(t)
	}
	st.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), ContainerID: containerID(),
			Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now,
			}},
		})
	}
	st.ContainerStatuses = nil
	started := true
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: imageID(c.Image), ContainerID: containerID(),
			Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

func imageID(image string) string {
	sum := sha256.Sum256([]byte(image))
	return image + "@sha256:" + hex.EncodeToString(sum[:])
}

func containerID() string { return "containerd://" + randomHex(32) }
