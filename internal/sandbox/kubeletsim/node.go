package kubeletsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// Labels the kubelet sets on its own Node.
const (
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
	betaLabelOS       = "beta.kubernetes.io/os"
	betaLabelArch     = "beta.kubernetes.io/arch"
)

// Cadences of the kubelet's loops (its defaults).
var (
	nodeStatusUpdateFrequency = 10 * time.Second
	nodeStatusReportFrequency = time.Minute
	registerBackoff           = [2]time.Duration{100 * time.Millisecond, 7 * time.Second}
)

// Ready condition reasons and messages as the kubelet writes them.
const (
	reasonReady           = "KubeletReady"
	reasonNotReady        = "KubeletNotReady"
	messageReady          = "kubelet is posting ready status"
	messageRuntimeDown    = "container runtime is down"
	messageNetworkNotInit = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	kubeNodeLeaseNS       = "kube-node-lease"
)

// nodeAgent is the part of a kubelet that talks to the API server with the
// node's own credentials: registration, status, Lease and pods.
type nodeAgent struct {
	k              *Kubelet
	client         kubernetes.Interface
	name           string
	runtimeVersion string
	bootID         string

	mu          sync.Mutex
	uid         types.UID
	podCIDR     string
	ready       bool
	lastMessage string
	lastReport  time.Time
	ipam        *ipam
	podCIDRSet  chan struct{}
	// podNetwork is what its pods' packets go through (podnet.go).
	podNetwork *podNet
}

func newNodeAgent(k *Kubelet, client kubernetes.Interface, runtimeVersion string) *nodeAgent {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return &nodeAgent{
		k: k, client: client, name: k.nodeName, runtimeVersion: runtimeVersion,
		bootID:     fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]),
		podCIDRSet: make(chan struct{}),
	}
}

// run registers the Node and runs the loops until ctx ends.
func (n *nodeAgent) run(ctx context.Context) error {
	if !n.k.settings.RegisterNode {
		n.k.log.Info("kubelet.go:1620", "Node registration is disabled (--register-node=false)")
	} else if err := n.registerWithAPIServer(ctx); err != nil {
		return err
	}
	n.k.cfg.Dataplanes.add(n)
	defer n.k.cfg.Dataplanes.remove(n)
	var wg sync.WaitGroup
	wg.Go(func() { n.watchNode(ctx) })
	wg.Go(func() { n.leaseLoop(ctx) })
	wg.Go(func() { n.statusLoop(ctx) })
	wg.Go(func() { newPodWorker(n).run(ctx) })
	wg.Wait()
	return ctx.Err()
}

// registerWithAPIServer creates the Node, retrying with back-off until it
// succeeds or ctx ends, as kubelet.registerWithAPIServer does.
func (n *nodeAgent) registerWithAPIServer(ctx context.Context) error {
	// The kubelet's start up to its first registration attempt, and the
	// attempt's retries, take the latency model's KubeletRegister.
	if err := n.k.cfg.Latency.Wait(ctx, latency.KubeletRegister); err != nil {
		return err
	}
	delay := registerBackoff[0]
	for {
		n.k.log.Info("kubelet_node_status.go:75", "Attempting to register node", "node", n.name)
		err := n.tryRegister(ctx)
		if err == nil {
			n.k.log.Info("kubelet_node_status.go:78", "Successfully registered node", "node", n.name)
			return nil
		}
		n.k.log.Error("kubelet_node_status.go:107", err, "Unable to register node with API server", "node", n.name)
		n.k.setErr(fmt.Errorf("registering node %s: %w", n.name, err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if delay *= 2; delay > registerBackoff[1] {
			delay = registerBackoff[1]
		}
	}
}

func (n *nodeAgent) tryRegister(ctx context.Context) error {
	node := n.initialNode()
	created, err := n.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		n.setUID(created.UID)
		n.notePodCIDR(created.Spec.PodCIDR)
		n.k.setErr(nil)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	// An existing Node keeps its labels, except the ones the kubelet owns.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		for k, v := range n.defaultLabels() {
			if cur.Labels[k] != v {
				cur.Labels[k], changed = v, true
			}
		}
		if !changed {
			return nil
		}
		_, err = n.client.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	n.setUID(existing.UID)
	n.notePodCIDR(existing.Spec.PodCIDR)
	n.k.setErr(nil)
	return n.updateStatus(ctx, true)
}

func (n *nodeAgent) setUID(uid types.UID) {
	n.mu.Lock()
	n.uid = uid
	n.mu.Unlock()
}

// defaultLabels are the labels a Windows kubelet sets on its Node itself.
func (n *nodeAgent) defaultLabels() map[string]string {
	return map[string]string{
		corev1.LabelHostname:   n.name,
		corev1.LabelOSStable:   "windows",
		corev1.LabelArchStable: "amd64",
		betaLabelOS:            "windows",
		betaLabelArch:          "amd64",
		LabelWindowsBuild:      windowsBuildLabel(n.k.cfg.Host.WindowsBuild),
	}
}

// windowsBuildLabel is the node.kubernetes.io/windows-build value a kubelet
// reports for the host's version: "major.minor.build", without the update
// build revision (k8s.io/kubernetes pkg/kubelet/winstats/version.go,
// OSInfo.GetBuild, which kubelet_node_status_windows.go getOSSpecificLabels
// sets as the label). version is the full "10.0.20348.2340".
func windowsBuildLabel(version string) string {
	parts := strings.SplitN(version, ".", 4)
	return strings.Join(parts[:min(len(parts), 3)], ".")
}

func (n *nodeAgent) initialNode() *corev1.Node {
	labels := map[string]string{}
	for k, v := range n.k.flags.NodeLabels {
		labels[k] = v
	}
	for k, v := range n.defaultLabels() {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   n.name,
			Labels: labels,
			Annotations: map[string]string{
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			Taints:     append([]corev1.Taint(nil), n.k.settings.RegisterWithTaints...),
			ProviderID: n.k.settings.ProviderID,
		},
	}
	n.fillStatus(&node.Status)
	return node
}

// readiness is the Ready condition the kubelet would post now.
func (n *nodeAgent) readiness() (bool, string) {
	switch {
	case !n.k.runtimeUp():
		return false, messageRuntimeDown
	case n.k.cfg.NeverReady, n.k.cfg.NotReady != nil && n.k.cfg.NotReady():
		return false, messageNetworkNotInit
	}
	if err := n.k.networkError(); err != nil {
		return false, networkNotReadyMessage(err)
	}
	return true, messageReady
}

// networkNotReadyMessage is the Ready condition's message for a runtime
// whose NetworkReady condition is false (kubelet.go updateRuntimeUp and
// containerd's status.go).
func networkNotReadyMessage(err error) string {
	return "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: " + err.Error()
}

func (n *nodeAgent) fillStatus(st *corev1.NodeStatus) {
	h := n.k.cfg.Host
	now := metav1.Now()
	cpu := resource.MustParse(fmt.Sprint(h.NumCPU))
	mem := resource.MustParse(fmt.Sprintf("%dMi", h.MemoryMB))
	pods := resource.MustParse(fmt.Sprint(n.k.settings.MaxPods))
	storage := resource.MustParse("100Gi")
	st.Capacity = corev1.ResourceList{
		corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourcePods: pods,
		corev1.ResourceEphemeralStorage: storage,
	}
	allocCPU, allocMem := cpu.DeepCopy(), mem.DeepCopy()
	r := n.k.settings.reserved(corev1.ResourceCPU)
	allocCPU.Sub(r)
	r = n.k.settings.reserved(corev1.ResourceMemory)
	allocMem.Sub(r)
	st.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU: allocCPU, corev1.ResourceMemory: allocMem, corev1.ResourcePods: pods,
		corev1.ResourceEphemeralStorage: storage,
	}
	st.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: n.nodeIP()},
		{Type: corev1.NodeHostName, Address: strings.ToLower(h.ComputerName)},
	}
	st.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}}
	st.NodeInfo = corev1.NodeSystemInfo{
		MachineID:               strings.ToLower(strings.ReplaceAll(h.BIOSUUID, "-", "")),
		SystemUUID:              strings.ToUpper(h.BIOSUUID),
		BootID:                  n.bootID,
		KernelVersion:           h.WindowsBuild,
		OSImage:                 osImage(h.WindowsBuild),
		ContainerRuntimeVersion: n.runtimeVersion,
		KubeletVersion:          n.k.version,
		OperatingSystem:         "windows",
		Architecture:            "amd64",
	}
	ready, msg := n.readiness()
	readyStatus, reason := corev1.ConditionTrue, reasonReady
	if !ready {
		readyStatus, reason = corev1.ConditionFalse, reasonNotReady
	}
	pressure := func(t corev1.NodeConditionType, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	want := []corev1.NodeCondition{
		pressure(corev1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		pressure(corev1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		pressure(corev1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		{Type: corev1.NodeReady, Status: readyStatus, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now},
	}
	for i, c := range want {
		for _, old := range st.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				want[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	// Conditions set by others (NetworkUnavailable, ...) stay.
	var keep []corev1.NodeCondition
	for _, old := range st.Conditions {
		switch old.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady:
		default:
			keep = append(keep, old)
		}
	}
	st.Conditions = append(keep, want...)
}

// nodeIP is --node-ip (its first address), else the host's IP.
func (n *nodeAgent) nodeIP() string {
	if ip := strings.TrimSpace(strings.Split(n.k.flags.NodeIP, ",")[0]); ip != "" {
		return ip
	}
	return n.k.cfg.Host.IP
}

// statusLoop posts the node status when readiness changes, and at least
// every nodeStatusReportFrequency.
func (n *nodeAgent) statusLoop(ctx context.Context) {
	// Readiness is looked at every cniPollInterval (the runtime's network
	// condition follows files on the host); updateStatus posts only on a
	// change or every nodeStatusReportFrequency.
	every := min(cniPollInterval, nodeStatusUpdateFrequency)
	if m := n.k.cfg.Latency; m.On() {
		// Under the latency model a change waits for the next sync, as
		// the real kubelet's syncNodeStatus runs every
		// nodeStatusUpdateFrequency (KubeletStatusUpdate), scaled.
		every = m.Of(latency.KubeletStatusUpdate)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := n.updateStatus(ctx, false); err != nil && ctx.Err() == nil {
			n.k.log.Error("kubelet_node_status.go:535", err, "Error updating node status, will retry")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *nodeAgent) updateStatus(ctx context.Context, force bool) error {
	ready, msg := n.readiness()
	n.mu.Lock()
	due := force || ready != n.ready || msg != n.lastMessage || time.Since(n.lastReport) >= nodeStatusReportFrequency
	n.mu.Unlock()
	if !due {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.fillStatus(&node.Status)
		_, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	n.mu.Lock()
	if ready != n.ready || msg != n.lastMessage {
		if ready {
			n.k.log.Info("kubelet_node_status.go:724", "Node became ready", "node", n.name)
		} else {
			n.k.log.Info("setters.go:618", "Node became not ready", "node", n.name, "reason", reasonNotReady, "message", msg)
		}
	}
	n.ready, n.lastMessage, n.lastReport = ready, msg, time.Now()
	n.mu.Unlock()
	return nil
}

// osImage is the product name Windows reports for a build.
func osImage(version string) string {
	parts := strings.Split(version, ".")
	build := ""
	if len(parts) >= 3 {
		build = parts[2]
	}
	switch {
	case build == "17763":
		return "Windows Server 2019 Datacenter"
	case build >= "26100":
		return "Windows Server 2025 Datacenter"
	default:
		return "Windows Server 2022 Datacenter"
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
