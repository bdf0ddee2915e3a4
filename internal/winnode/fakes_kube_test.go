package winnode_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// fakeKube is an in-memory cluster: Nodes, bootstrap tokens, the
// discovered network and the networking mode.
type fakeKube struct {
	ops
	nodes  map[string]*corev1.Node
	tokens map[string]bool // id -> not yet deleted
	// tokenDeleteBound records, for each DeleteBootstrapToken, whether its
	// context was live and ended within the create's token-delete bound.
	tokenDeleteBound []bool
	network          kube.ClusterNetwork
	ca               []byte
	mode             string // what ObservedNetworkingMode reads
	// neverReady keeps a registered Node NotReady through every wait.
	neverReady bool
	boots      int
	// ready is closed as a Node is first seen Ready: the node agents run
	// from then on (WaitForAgentsReady waits for it). agentsHook runs then.
	ready         map[string]chan struct{}
	agentsHook    func()
	agentsWatched chan struct{}
	// applied is closed once ApplyNodeSettings has succeeded.
	applied chan struct{}
	// volumes are the volumes attached to each node (VolumeAttachments);
	// volumesChanged is closed when one detaches.
	volumes        map[string][]string
	volumesChanged chan struct{}
	// probeErr is what ProbeNetwork returns; probes counts its calls.
	probeErr error
	probes   []kube.ProbeRequest
	// hostProcessAgents are the pods HostProcessAgentsOn answers.
	hostProcessAgents []string
	// agentPods are the networking agents' pods ReadHealthSnapshot reads;
	// noDNS leaves the cluster DNS without endpoints; restarted records
	// RestartAgents' pods, snapshots the reads.
	agentPods []corev1.Pod
	noDNS     bool
	restarted []string
	snapshots int
}

// ReadHealthSnapshot answers from agentPods and noDNS.
func (k *fakeKube) ReadHealthSnapshot(_ context.Context, namespace string, agents []kube.Agent) (*kube.HealthSnapshot, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.snapshots++
	dns := 1
	if k.noDNS {
		dns = 0
	}
	return kube.NewHealthSnapshot(dns, namespace, agents, k.agentPods), nil
}

// RestartAgents records the pods and takes them away, as their eviction
// does; their DaemonSet's new pods are the test's to add.
func (k *fakeKube) RestartAgents(_ context.Context, pods []*corev1.Pod) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range pods {
		k.restarted = append(k.restarted, p.Name)
		k.agentPods = slices.DeleteFunc(k.agentPods, func(q corev1.Pod) bool { return q.Name == p.Name })
	}
	return nil
}

// ProbeNetwork records the request and answers probeErr. It is not an op:
// the create's order of operations up to it is what the op tests hold.
func (k *fakeKube) ProbeNetwork(_ context.Context, req kube.ProbeRequest) ([]kube.ProbePath, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.probes = append(k.probes, req)
	if k.probeErr != nil {
		return nil, k.probeErr
	}
	return []kube.ProbePath{{Name: "cluster-dns-and-service", Passed: true}}, nil
}

// HostProcessAgentsOn answers hostProcessAgents; not an op either.
func (k *fakeKube) HostProcessAgentsOn(context.Context, string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hostProcessAgents, nil
}

// settingsApplied is closed once ApplyNodeSettings has succeeded.
func (k *fakeKube) settingsApplied() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.applied == nil {
		k.applied = make(chan struct{})
	}
	return k.applied
}

const tokenSecret = "0123456789abcdef"

func newFakeKube() *fakeKube {
	return &fakeKube{
		ops: newOps(), nodes: map[string]*corev1.Node{}, tokens: map[string]bool{}, volumes: map[string][]string{},
		network: kube.ClusterNetwork{APIEndpoint: "https://10.0.0.10:6443", ServiceCIDRs: []string{"10.96.0.0/12"},
			ClusterCIDRs: []string{"10.244.0.0/16"}, DNSServiceIP: "10.96.0.10", ClusterDomain: "cluster.local"},
		ca:   []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		mode: "flannel",
	}
}

// register is the kubelet registering its Node (Ready unless neverReady),
// with a new boot id.
func (k *fakeKube) register(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.boots++
	n := k.nodes[name]
	if n == nil {
		n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("uid-%d", k.boots)), Labels: map[string]string{kube.LabelOS: "windows"}}}
		k.nodes[name] = n
	}
	n.Status.NodeInfo.BootID = fmt.Sprintf("boot-%d", k.boots)
	n.Status.NodeInfo.KubeletVersion = "v1.36.3"
	setReady(n, !k.neverReady)
}

func setReady(n *corev1.Node, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
}

// node returns a copy of a Node, nil when there is none.
func (k *fakeKube) node(name string) *corev1.Node {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := k.nodes[name]; n != nil {
		return n.DeepCopy()
	}
	return nil
}

// liveTokens lists the bootstrap tokens not deleted.
func (k *fakeKube) liveTokens() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for id, live := range k.tokens {
		if live {
			out = append(out, id)
		}
	}
	return out
}

func (k *fakeKube) find(name string) (*corev1.Node, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.nodes[name]
	if n == nil {
		return nil, &kube.NotFoundError{Kind: "Node", Name: name}
	}
	return n, nil
}

func (k *fakeKube) DiscoverNetwork(ctx context.Context) (*kube.ClusterNetwork, error) {
	if err := k.enter(ctx, "DiscoverNetwork"); err != nil {
		return nil, err
	}
	n := k.network
	return &n, nil
}

func (k *fakeKube) ClusterCA() ([]byte, error) {
	if err := k.enter(context.Background(), "ClusterCA"); err != nil {
		return nil, err
	}
	return k.ca, nil
}

func (k *fakeKube) ObservedNetworkingMode(ctx context.Context, namespace string) (string, error) {
	if err := k.enter(ctx, "ObservedNetworkingMode", namespace); err != nil {
		return "", err
	}
	return k.mode, nil
}

func (k *fakeKube) CreateBootstrapToken(ctx context.Context, _ time.Duration, description string) (string, string, error) {
	if err := k.enter(ctx, "CreateBootstrapToken", description); err != nil {
		return "", "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	id := fmt.Sprintf("tok%03d", len(k.tokens)+1)
	k.tokens[id] = true
	return id + "." + tokenSecret, id, nil
}

func (k *fakeKube) RefreshBootstrapToken(ctx context.Context, id string, _ time.Duration) error {
	if err := k.enter(ctx, "RefreshBootstrapToken", id); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.tokens[id] {
		return &kube.NotFoundError{Kind: "bootstrap token Secret", Name: id}
	}
	return nil
}

func (k *fakeKube) DeleteStaleBootstrapTokens(ctx context.Context, description string) error {
	return k.enter(ctx, "DeleteStaleBootstrapTokens", description)
}

func (k *fakeKube) DeleteBootstrapToken(ctx context.Context, id string) error {
	dl, ok := ctx.Deadline()
	k.mu.Lock()
	k.tokenDeleteBound = append(k.tokenDeleteBound, ok && time.Until(dl) <= 15*time.Second && ctx.Err() == nil)
	k.mu.Unlock()
	if err := k.enter(ctx, "DeleteBootstrapToken", id); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tokens[id] = false
	return nil
}

func (k *fakeKube) FindNode(ctx context.Context, name string) (*corev1.Node, error) {
	if err := k.enter(ctx, "FindNode", name); err != nil {
		return nil, err
	}
	n, err := k.find(name)
	if err != nil {
		return nil, err
	}
	return k.node(n.Name), nil
}

func (k *fakeKube) WindowsNodes(ctx context.Context) ([]corev1.Node, error) {
	if err := k.enter(ctx, "WindowsNodes"); err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []corev1.Node
	for _, name := range slices.Sorted(maps.Keys(k.nodes)) {
		if n := k.nodes[name]; n.Labels[kube.LabelOS] == "windows" {
			out = append(out, *n.DeepCopy())
		}
	}
	return out, nil
}

// waitReady is a watch that has already seen all there is: a Node that is
// not Ready now never will be (neverReady), else it turns Ready.
func (k *fakeKube) waitReady(name string) (*corev1.Node, error) {
	n, err := k.find(name)
	if err != nil {
		return nil, &kube.NodeWaitError{Name: name, Want: "Ready", Err: context.DeadlineExceeded}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.neverReady {
		return nil, &kube.NodeWaitError{Name: name, Want: "Ready", Registered: true, Node: n.DeepCopy(), Err: context.DeadlineExceeded}
	}
	setReady(n, true)
	if ch := k.readyLocked(name); ch != nil {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	return n.DeepCopy(), nil
}

// readyLocked is the channel closed once the Node has been Ready; k.mu held.
func (k *fakeKube) readyLocked(name string) chan struct{} {
	if k.ready == nil {
		k.ready = map[string]chan struct{}{}
	}
	if k.ready[name] == nil {
		k.ready[name] = make(chan struct{})
	}
	return k.ready[name]
}

func (k *fakeKube) WaitForNodeReady(ctx context.Context, name string) (*corev1.Node, error) {
	if err := k.enter(ctx, "WaitForNodeReady", name); err != nil {
		return nil, err
	}
	return k.waitReady(name)
}

func (k *fakeKube) WaitForNodeReadyAgain(ctx context.Context, prev *corev1.Node) (*corev1.Node, error) {
	if err := k.enter(ctx, "WaitForNodeReadyAgain", prev.Name); err != nil {
		return nil, err
	}
	return k.waitReady(prev.Name)
}

func (k *fakeKube) WaitForNodePodCIDR(ctx context.Context, name string) (string, error) {
	if err := k.enter(ctx, "WaitForNodePodCIDR", name); err != nil {
		return "", err
	}
	n, err := k.find(name)
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	n.Spec.PodCIDR = "10.244.1.0/24"
	return n.Spec.PodCIDR, nil
}

// WaitForAgentsReadySince: the agents after a reboot, as WaitForAgentsReady.
func (k *fakeKube) WaitForAgentsReadySince(ctx context.Context, node, namespace string, agents []kube.Agent, _ time.Time) ([]*corev1.Pod, error) {
	return k.WaitForAgentsReady(ctx, node, namespace, agents)
}

func (k *fakeKube) WaitForAgentsReady(ctx context.Context, node, namespace string, agents []kube.Agent) ([]*corev1.Pod, error) {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	if err := k.enter(ctx, "WaitForAgentsReady", node, namespace, strings.Join(names, ",")); err != nil {
		return nil, err
	}
	// The agents run, and turn Ready, once the Node is Ready.
	k.mu.Lock()
	ready := k.readyLocked(node)
	hook := k.agentsHook
	if k.agentsWatched != nil {
		select {
		case <-k.agentsWatched:
		default:
			close(k.agentsWatched)
		}
	}
	k.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, &kube.AgentWaitError{Node: node, Err: ctx.Err()}
	}
	if hook != nil {
		hook()
	}
	if err := ctx.Err(); err != nil {
		return nil, &kube.AgentWaitError{Node: node, Err: err}
	}
	return nil, nil
}

func (k *fakeKube) ApplyNodeSettings(ctx context.Context, name string, s kube.NodeSettings) (*corev1.Node, error) {
	if err := k.enter(ctx, "ApplyNodeSettings", name); err != nil {
		return nil, err
	}
	n, err := k.find(name)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if n.Spec.ProviderID != "" && s.ProviderID != "" && n.Spec.ProviderID != s.ProviderID {
		return nil, fmt.Errorf("the Node already has providerID %q", n.Spec.ProviderID)
	}
	if s.ProviderID != "" {
		n.Spec.ProviderID = s.ProviderID
	}
	maps.Copy(n.Labels, s.Labels)
	n.Labels[kube.LabelManagedBy] = kube.FieldManager
	if s.VM != "" {
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[kube.VMAnnotation] = s.VM
	}
	n.Spec.Taints = slices.Clone(s.Taints)
	if k.applied == nil {
		k.applied = make(chan struct{})
	}
	select {
	case <-k.applied:
	default:
		close(k.applied)
	}
	return n.DeepCopy(), nil
}

func (k *fakeKube) CordonNode(ctx context.Context, name string, cordon bool) error {
	if err := k.enter(ctx, "CordonNode", name, cordon); err != nil {
		return err
	}
	n, err := k.find(name)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	n.Spec.Unschedulable = cordon
	return nil
}

func (k *fakeKube) MarkCordonedForPowerCycle(ctx context.Context, name string, mark bool) error {
	if err := k.enter(ctx, "MarkCordonedForPowerCycle", name, mark); err != nil {
		return err
	}
	n, err := k.find(name)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if mark {
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[kube.CordonedForPowerCycleAnnotation] = "hardware change"
	} else {
		delete(n.Annotations, kube.CordonedForPowerCycleAnnotation)
	}
	return nil
}

// DrainNode cordons, then evicts: a drain that fails (a
// PodDisruptionBudget, the deadline) leaves the Node cordoned, as kube's
// does.
func (k *fakeKube) DrainNode(ctx context.Context, name string, opts kube.DrainOptions) error {
	k.mu.Lock()
	if n := k.nodes[name]; n != nil && ctx.Err() == nil {
		n.Spec.Unschedulable = true
	}
	k.mu.Unlock()
	return k.enter(ctx, "DrainNode", name)
}

func (k *fakeKube) DeleteNodeUID(ctx context.Context, name string, uid types.UID) error {
	if err := k.enter(ctx, "DeleteNode", name); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := k.nodes[name]; n != nil && n.UID != uid {
		return fmt.Errorf("Node %q: precondition failed: UID %s, not %s", name, n.UID, uid)
	}
	delete(k.nodes, name)
	return nil
}

// WaitForVolumesDetached waits until volumes[node] is empty (detach
// removes one and wakes the waiters).
func (k *fakeKube) WaitForVolumesDetached(ctx context.Context, node string, waiting func([]string)) error {
	if err := k.enter(ctx, "WaitForVolumesDetached", node); err != nil {
		return err
	}
	told := false
	for {
		k.mu.Lock()
		left := slices.Clone(k.volumes[node])
		changed := k.volumesChanged
		if changed == nil {
			changed = make(chan struct{})
			k.volumesChanged = changed
		}
		k.mu.Unlock()
		if len(left) == 0 {
			return nil
		}
		if !told && waiting != nil {
			told = true
			waiting(left)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("volumes still attached to Node %q: %v: %w", node, left, ctx.Err())
		}
	}
}

// detachVolume is the CSI driver detaching a volume from the node.
func (k *fakeKube) detachVolume(node, volume string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.volumes[node] = slices.DeleteFunc(k.volumes[node], func(v string) bool { return v == volume })
	if k.volumesChanged != nil {
		close(k.volumesChanged)
		k.volumesChanged = nil
	}
}
