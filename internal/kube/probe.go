package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// CheckNetworkProbe is the network probe's ID in skip_checks.
const CheckNetworkProbe = "network-probe"

// ProbeImage is the image the network probe runs, pinned by digest:
// Kubernetes' own e2e test image agnhost (test/images/agnhost), multi-arch
// with Windows Server variants, which upstream's Windows e2e tests
// (test/e2e/windows) run their pods with; its connect subcommand resolves a
// name and connects, and says which of the two failed ("DNS: ...", or
// TIMEOUT, REFUSED, OTHER). The digest is the image index registry.k8s.io
// serves for 2.53 (the ImageID containerd reports for pods that pulled
// agnhost:2.53): containerd resolves the reference by it, so a registry
// answering another image for the tag is not run. The admission policy
// terraform-provider-windows-probe (examples/rbac) admits this image alone.
const ProbeImage = "registry.k8s.io/e2e-test-images/agnhost:2.53@sha256:99c6b4bb4a1e1df3f0b3752168c89358794d02258ebebc26bf21c29399011a85"

// ProbeNamespace holds the probe pods: the provider's own namespace, where
// examples/rbac lets it create and delete pods and nothing else runs.
const ProbeNamespace = "terraform-provider-windows"

// probeTimeout bounds one probe: agnhost's own --timeout per path, the
// image pull and the pod's start.
const probeTimeout = 3 * time.Minute

// probeLabel names the probe's objects (its pod, NodePort Service and
// EndpointSlice); the admission policy terraform-provider-windows-probe
// holds the provider's objects in ProbeNamespace to it.
const probeLabel = "network-probe"

// ProbeRequest is one node's network probe.
type ProbeRequest struct {
	Node          string
	ClusterDomain string
	// NodeIP is the node's InternalIP: its own NodePort is probed there
	// ("" leaves the NodePort path out).
	NodeIP string
	// NodeLabels and NodeTaints are the Node's: the probe pod is scheduled
	// onto it as a user's pod would be, by its labels (and the RuntimeClass
	// whose scheduling matches them), tolerating its taints.
	NodeLabels map[string]string
	NodeTaints []corev1.Taint
	// RuntimeClass is the RuntimeClass the probe pod names; "" takes the
	// provider's own (windows_runtime_class) whose scheduling selects the
	// node, when there is one.
	RuntimeClass string
	// AgentNamespace and Agents are the node's networking agents: a failed
	// probe names their container log files on the host (ProbeError.AgentLogs).
	AgentNamespace string
	Agents         []Agent
	// PodNetwork names the pod network as the node's networking mode builds
	// it (networking.Probe.PodNetwork), for a failed pod-to-pod path.
	PodNetwork string
}

// ProbePath is one path the probe tries from a pod on the node.
type ProbePath struct {
	// Name is the container that tries it.
	Name string
	// What is the path in words; Target what agnhost connects to.
	What, Target string
	// Passed, and otherwise the container's output (its termination
	// message) or why it did not run.
	Passed bool
	Output string
}

// ProbeError is a failed probe: the first path that failed, what was
// expected of it, the cluster's evidence and, gathered from the host over
// its transport by the caller (HostEvidence), HNS's state and the agents'
// last log lines.
type ProbeError struct {
	Node     string
	Path     ProbePath
	Expected string
	Evidence string
	// AgentLogs are the host paths of the node agents' current container
	// logs (the kubelet's C:\var\log\pods\<ns>_<pod>_<uid>\<container>\<restarts>.log).
	AgentLogs    []string
	HostEvidence string
}

func (e *ProbeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "network probe of node %s: %s failed: %s", e.Node, e.Path.What, strings.TrimSpace(e.Path.Output))
	fmt.Fprintf(&b, "\nexpected: %s", e.Expected)
	if e.Evidence != "" {
		fmt.Fprintf(&b, "\nevidence: %s", e.Evidence)
	}
	if e.HostEvidence != "" {
		fmt.Fprintf(&b, "\nhost evidence (HNS and the node agents' last log lines):\n%s", strings.TrimRight(e.HostEvidence, "\r\n "))
	}
	return b.String()
}

// The probe's paths, by container name.
const (
	pathDNSAndService = "cluster-dns-and-service"
	pathOtherPod      = "pod-on-other-node"
	pathNodePort      = "node-port"
)

// probePaths are the paths the probe pod tries, in order: the cluster DNS
// and a ClusterIP Service at once (kube-dns by its name: the name goes
// through the cluster DNS, the connection to its ClusterIP through the
// node's kube-proxy load balancer: test/e2e/windows/dns.go and service.go
// check the two), then a pod on another node directly (a Linux node's where
// there is one: test/e2e/windows/networking.go), when the cluster has one,
// then the node's own NodePort in front of that pod (service.go's NodePort
// test), when the node's address is known.
func probePaths(domain, otherPod, nodePort string) []ProbePath {
	paths := []ProbePath{{
		Name: pathDNSAndService, What: "cluster DNS and ClusterIP Service (kube-dns.kube-system.svc." + domain + ":53 over TCP)",
		Target: "kube-dns.kube-system.svc." + domain + ":53",
	}}
	if otherPod != "" {
		paths = append(paths, ProbePath{Name: pathOtherPod, What: "a pod on another node (" + otherPod + ")", Target: otherPod})
		if nodePort != "" {
			paths = append(paths, ProbePath{Name: pathNodePort, What: "the node's own NodePort (" + nodePort + ", a NodePort Service in front of " + otherPod + ")", Target: nodePort})
		}
	}
	return paths
}

// ProbeNetwork proves a node's network path from a pod on it: it runs the
// probe pod (ProbeImage, one container per path, in order, restartPolicy
// Never; scheduled onto the node by its labels, on its RuntimeClass,
// tolerating its taints), waits for it to end on a watch, deletes it, and
// returns the paths with their outcome; a failed path is a *ProbeError with
// the cluster DNS's endpoints as evidence. For the NodePort path it creates
// a NodePort Service without a selector and its EndpointSlice (owned by the
// Service, so the garbage collector deletes it with the Service), in front
// of the pod on another node. Its API requests: the kube-dns EndpointSlices
// (one list; while none is ready, a list and a watch more, up to
// DNSReadyWait), the RuntimeClasses (one list, unless named), the Service's
// and EndpointSlice's creates, the pod's create, list+watch and delete, the
// Service's delete (a NodePort path tried again: 4 more per try); after a
// failure, one pod list for the agents' logs.
func (c *Client) ProbeNetwork(ctx context.Context, req ProbeRequest) ([]ProbePath, error) {
	dnsReady, other, err := c.waitForDNSEndpoints(ctx, req.Node)
	if err != nil {
		return nil, err
	}
	runtimeClass := req.RuntimeClass
	if runtimeClass == "" {
		if runtimeClass, err = c.probeRuntimeClass(ctx, req.NodeLabels); err != nil {
			return nil, err
		}
	}

	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := probeLabel + "-" + truncate(req.Node, 40) + "-" + hex.EncodeToString(suffix)
	labels := map[string]string{"app.kubernetes.io/name": probeLabel, LabelManagedBy: FieldManager}
	nodePort := ""
	if other != "" && req.NodeIP != "" {
		port, err := c.createProbeNodePort(ctx, name, labels, other)
		if err != nil {
			return nil, err
		}
		defer c.deleteProbeObject(ctx, func(dctx context.Context) error {
			return c.CoreV1().Services(ProbeNamespace).Delete(dctx, name, metav1.DeleteOptions{})
		})
		nodePort = net.JoinHostPort(req.NodeIP, strconv.Itoa(int(port)))
	}
	paths := probePaths(req.ClusterDomain, other, nodePort)

	if err := c.runProbePod(ctx, req, runtimeClass, name, labels, paths); err != nil {
		return paths, err
	}
	// kube-proxy programs the probe's new NodePort Service when its watch
	// tells it, which the pod may outrun, and not at all while it restarts
	// (a crash, a DaemonSet rollout): as upstream's
	// Service e2e tests poll a new NodePort until it answers, a failed
	// NodePort path is tried again, from a pod of its own, spaced by
	// nodePortRetry.
	backoff := nodePortRetry
	for attempt := 1; backoff.Steps > 0 && len(paths) > 0 && !paths[len(paths)-1].Passed &&
		paths[len(paths)-1].Name == pathNodePort && allPassedBefore(paths); attempt++ {
		t := time.NewTimer(backoff.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return paths, ctx.Err()
		case <-t.C:
		}
		retry := paths[len(paths)-1:]
		if err := c.runProbePod(ctx, req, runtimeClass, fmt.Sprintf("%s-%d", name, attempt), labels, retry); err != nil {
			return paths, err
		}
	}
	for _, p := range paths {
		if p.Passed {
			continue
		}
		e := &ProbeError{Node: req.Node, Path: p}
		switch {
		case p.Name == pathDNSAndService && strings.HasPrefix(p.Output, "DNS:"):
			e.Expected = "the name resolves through the cluster DNS (the kubelet's clusterDNS, Service kube-system/kube-dns, whose ClusterIP the node's kube-proxy load balances over UDP)"
		case p.Name == pathDNSAndService:
			e.Expected = "the name resolved; then a TCP connection to kube-dns's ClusterIP reaches a DNS pod through the node's kube-proxy load balancer (an HNS load balancer policy for the ClusterIP and port 53/TCP whose endpoints HNS has)"
		case p.Name == pathNodePort:
			e.Expected = "a TCP connection from a pod on this node to the node's own address and NodePort reaches the Service's endpoint through the node's kube-proxy load balancer (an HNS load balancer policy with no VIP for the node port)"
		default:
			e.Expected = "a TCP connection from a pod on this node reaches a pod on another node over the pod network"
			if req.PodNetwork != "" {
				e.Expected += " (" + req.PodNetwork + ")"
			}
		}
		if dnsReady == 0 {
			e.Evidence = "Service kube-system/kube-dns has no ready endpoints: nothing answers the cluster DNS (does its selector still match the DNS pods?)"
		} else {
			e.Evidence = fmt.Sprintf("Service kube-system/kube-dns has %d ready endpoint(s); the host's HNS load balancers and the node agents' logs tell which hop dropped it", dnsReady)
		}
		e.AgentLogs = c.agentLogs(ctx, req)
		return paths, e
	}
	return paths, nil
}

// nodePortRetry spaces the NodePort path's further tries (one pod each):
// 1, 2, 4, 8 and 15 s, half a minute in all. Upstream's e2e tests give
// kube-proxy up to KubeProxyLagTimeout (5 min, test/e2e/framework/service/
// const.go) to notice a new NodePort, "observed values are O(1m)"; a node
// whose kube-proxy takes longer fails here with the HNS evidence, and the
// next apply probes it again.
var nodePortRetry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 5, Cap: 15 * time.Second}

func allPassedBefore(paths []ProbePath) bool {
	for _, p := range paths[:len(paths)-1] {
		if !p.Passed {
			return false
		}
	}
	return true
}

// runProbePod runs one probe pod trying paths (one container each, in
// order), waits for it to end on a watch, deletes it, and records each
// path's outcome in paths.
func (c *Client) runProbePod(ctx context.Context, req ProbeRequest, runtimeClass, name string, labels map[string]string, paths []ProbePath) error {
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ProbeNamespace, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no,
			OS: &corev1.PodOS{Name: corev1.Windows},
		},
	}
	probeScheduling(&pod.Spec, req, runtimeClass)
	for i, p := range paths {
		ctr := corev1.Container{Name: p.Name, Image: ProbeImage, Args: []string{"connect", p.Target, "--timeout=10s"},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
		if i < len(paths)-1 {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr)
		} else {
			pod.Spec.Containers = append(pod.Spec.Containers, ctr)
		}
	}
	pods := c.CoreV1().Pods(ProbeNamespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("network probe: creating pod %s/%s: %w", ProbeNamespace, name, err)
	}
	zero := int64(0)
	defer c.deleteProbeObject(ctx, func(dctx context.Context) error {
		return pods.Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	wctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return pods.Watch(ctx, o)
		},
	}
	var done *corev1.Pod
	_, err := watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		done = p
		if why := imageNotPulled(p); why != "" {
			return false, errors.New(why)
		}
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		phase := "not scheduled"
		if done != nil {
			phase = string(done.Status.Phase)
		}
		if done != nil && imageNotPulled(done) != "" {
			return fmt.Errorf("network probe of node %s: pod %s/%s cannot start: %w (the probe runs %s: the node's container runtime must reach registry.k8s.io or a mirror of it that serves this digest)",
				req.Node, ProbeNamespace, name, err, ProbeImage)
		}
		return fmt.Errorf("network probe of node %s: pod %s/%s did not finish within %s (phase %s): %w",
			req.Node, ProbeNamespace, name, probeTimeout, phase, err)
	}
	statuses := append(append([]corev1.ContainerStatus{}, done.Status.InitContainerStatuses...), done.Status.ContainerStatuses...)
	for i := range paths {
		paths[i].Output = "did not run"
		for _, s := range statuses {
			if s.Name != paths[i].Name {
				continue
			}
			if t := s.State.Terminated; t != nil {
				paths[i].Passed = t.ExitCode == 0
				paths[i].Output = t.Message
				if !paths[i].Passed && t.Message == "" {
					paths[i].Output = fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason)
				}
			}
		}
	}
	return nil
}

// probeScheduling places the probe pod as a user's Windows pod would be:
// selected onto the node by its hostname label (not spec.nodeName, which
// would bypass the scheduler and the RuntimeClass's scheduling), on its
// RuntimeClass when it has one (whose nodeSelector and tolerations the
// RuntimeClass admission plugin merges in), else on Windows by the OS
// label, and tolerating exactly the Node's taints.
func probeScheduling(spec *corev1.PodSpec, req ProbeRequest, runtimeClass string) {
	host := req.NodeLabels[corev1.LabelHostname]
	if host == "" {
		host = req.Node
	}
	spec.NodeSelector = map[string]string{corev1.LabelHostname: host}
	if runtimeClass != "" {
		spec.RuntimeClassName = &runtimeClass
	} else {
		spec.NodeSelector[corev1.LabelOSStable] = string(corev1.Windows)
	}
	for _, t := range req.NodeTaints {
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
		if t.Value == "" {
			tol.Operator, tol.Value = corev1.TolerationOpExists, ""
		}
		spec.Tolerations = append(spec.Tolerations, tol)
	}
}

// probeRuntimeClass is the provider's own RuntimeClass (LabelManagedBy) whose
// scheduling nodeSelector the node's labels satisfy ("" when none does; the
// first by name when several do).
func (c *Client) probeRuntimeClass(ctx context.Context, nodeLabels map[string]string) (string, error) {
	rcs, err := c.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + FieldManager})
	if err != nil {
		return "", fmt.Errorf("network probe: listing the provider's RuntimeClasses: %w", err)
	}
	var names []string
	for _, rc := range rcs.Items {
		if rc.Scheduling == nil || len(rc.Scheduling.NodeSelector) == 0 || !labelsMatch(rc.Scheduling.NodeSelector, nodeLabels) {
			continue
		}
		names = append(names, rc.Name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// createProbeNodePort creates the NodePort Service in front of target (an
// address:port of a pod on another node) and its EndpointSlice, and returns
// the node port the API server allocated.
func (c *Client) createProbeNodePort(ctx context.Context, name string, labels map[string]string, target string) (int32, error) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		return 0, fmt.Errorf("network probe: target %q: %w", target, err)
	}
	port64, _ := strconv.ParseInt(portText, 10, 32)
	port := int32(port64)
	svc, err := c.CoreV1().Services(ProbeNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ProbeNamespace, Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{
			Name: "probe", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("network probe: creating NodePort Service %s/%s: %w", ProbeNamespace, name, err)
	}
	tcp, ready, portName := corev1.ProtocolTCP, true, "probe"
	sliceLabels := map[string]string{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: FieldManager}
	for k, v := range labels {
		sliceLabels[k] = v
	}
	yes := true
	if _, err := c.DiscoveryV1().EndpointSlices(ProbeNamespace).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ProbeNamespace, Labels: sliceLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: name, UID: svc.UID, BlockOwnerDeletion: &yes}}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Protocol: &tcp, Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}, metav1.CreateOptions{}); err != nil {
		c.deleteProbeObject(ctx, func(dctx context.Context) error {
			return c.CoreV1().Services(ProbeNamespace).Delete(dctx, name, metav1.DeleteOptions{})
		})
		return 0, fmt.Errorf("network probe: creating EndpointSlice %s/%s: %w", ProbeNamespace, name, err)
	}
	return svc.Spec.Ports[0].NodePort, nil
}

// deleteProbeObject deletes one of the probe's objects, even once ctx is
// done: a leftover is harmless and labelled, and the next probe does not
// depend on it.
func (c *Client) deleteProbeObject(ctx context.Context, del func(context.Context) error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := del(dctx); err != nil && !apierrors.IsNotFound(err) {
		_ = err // see above
	}
}

// imageNotPulled says why the probe pod's image was not pulled ("" when
// nothing says so): a container waiting in ErrImagePull, ImagePullBackOff or
// InvalidImageName, which no wait cures.
func imageNotPulled(p *corev1.Pod) string {
	for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "InvalidImageName") {
			return fmt.Sprintf("container %s: %s: %s", s.Name, w.Reason, w.Message)
		}
	}
	return ""
}

// agentLogs lists the host paths of the node agents' current container logs
// (one pod list; nil when it fails or there are no agents).
func (c *Client) agentLogs(ctx context.Context, req ProbeRequest) []string {
	if len(req.Agents) == 0 || req.AgentNamespace == "" {
		return nil
	}
	pods, err := c.CoreV1().Pods(req.AgentNamespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + req.Node})
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range req.Agents {
		for _, p := range pods.Items {
			if !labelsMatch(a.Selector, p.Labels) {
				continue
			}
			for _, s := range p.Status.ContainerStatuses {
				// A container that restarted: its previous run's log too
				// (kubectl logs --previous), which says why it ended.
				for n := max(s.RestartCount-1, 0); n <= s.RestartCount; n++ {
					out = append(out, fmt.Sprintf(`C:\var\log\pods\%s_%s_%s\%s\%d.log`, p.Namespace, p.Name, p.UID, s.Name, n))
				}
			}
		}
	}
	return out
}

// dnsEndpoints counts kube-dns's ready endpoints and picks one on another
// node than node to probe a pod there ("" when there is none): the DNS pods
// run on Linux nodes in a Windows cluster.
// DNSReadyWait bounds the probe's wait for the cluster DNS to have a ready
// endpoint when it has none. After a control-plane outage longer than the
// node lifecycle controller's grace period, the controller marks the DNS
// pods' nodes Unknown and their pods not Ready, and their kubelets report
// them Ready again at their next status sync (10 s), after which the
// EndpointSlice controller marks the endpoints ready: seconds, more on a
// loaded control plane (seen in CI). A DNS that stays without a ready
// endpoint fails the probe with that evidence. Tests may shorten it.
var DNSReadyWait = 2 * time.Minute

// waitForDNSEndpoints counts the ready endpoints of the cluster DNS and
// returns one on another node than node ("" if none), waiting on a watch,
// up to DNSReadyWait, while none is ready.
func (c *Client) waitForDNSEndpoints(ctx context.Context, node string) (ready int, other string, err error) {
	slices := c.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem)
	sel := discoveryv1.LabelServiceName + "=" + kubeDNSService
	list, err := slices.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, "", fmt.Errorf("network probe: listing kube-system/%s's EndpointSlices: %w", kubeDNSService, err)
	}
	if ready, other = dnsEndpoints(list.Items, node); ready > 0 {
		return ready, other, nil
	}
	wctx, cancel := context.WithTimeout(ctx, DNSReadyWait)
	defer cancel()
	lw := cache.NewFilteredListWatchFromClient(c.DiscoveryV1().RESTClient(), "endpointslices", metav1.NamespaceSystem,
		func(o *metav1.ListOptions) { o.LabelSelector = sel })
	byName := map[string]discoveryv1.EndpointSlice{}
	_, err = watchtools.UntilWithSync(wctx, lw, &discoveryv1.EndpointSlice{}, nil, func(ev watch.Event) (bool, error) {
		s, ok := ev.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			return false, nil
		}
		if ev.Type == watch.Deleted {
			delete(byName, s.Name)
		} else {
			byName[s.Name] = *s
		}
		current := make([]discoveryv1.EndpointSlice, 0, len(byName))
		for _, s := range byName {
			current = append(current, s)
		}
		ready, other = dnsEndpoints(current, node)
		return ready > 0, nil
	})
	if err != nil && ctx.Err() != nil {
		return 0, "", fmt.Errorf("network probe: waiting for kube-system/%s to have a ready endpoint: %w", kubeDNSService, ctx.Err())
	}
	// Still none after the wait: the probe runs, and its DNS path fails
	// with that evidence.
	return ready, other, nil
}

func dnsEndpoints(slices []discoveryv1.EndpointSlice, node string) (ready int, other string) {
	var others []string
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		// The DNS port over TCP (kubeadm's coredns Service names it
		// dns-tcp; the metrics port is TCP too, and not always served).
		port := 0
		for _, p := range s.Ports {
			if p.Protocol != nil && *p.Protocol == corev1.ProtocolTCP && p.Port != nil && (port == 0 && *p.Port == 53 || p.Name != nil && *p.Name == "dns-tcp") {
				port = int(*p.Port)
			}
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			ready += len(e.Addresses)
			if port != 0 && len(e.Addresses) > 0 && (e.NodeName == nil || *e.NodeName != node) {
				others = append(others, net.JoinHostPort(e.Addresses[0], strconv.Itoa(port)))
			}
		}
	}
	sort.Strings(others)
	if len(others) > 0 {
		other = others[0]
	}
	return ready, other
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// IsProbeError reports whether err is a failed network probe.
func IsProbeError(err error) bool {
	var pe *ProbeError
	return errors.As(err, &pe)
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
