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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// CheckNetworkProbe is the network probe's ID in skip_checks.
const CheckNetworkProbe = "network-probe"

// ProbeImage is the image the network probe runs: Kubernetes' own e2e test
// image agnhost (test/images/agnhost), multi-arch with Windows Server
// variants, which upstream's Windows e2e tests (test/e2e/windows) run their
// pods with; its connect subcommand resolves a name and connects, and says
// which of the two failed ("DNS: ...", or TIMEOUT, REFUSED, OTHER).
const ProbeImage = "registry.k8s.io/e2e-test-images/agnhost:2.63.0"

// ProbeNamespace holds the probe pods: the provider's own namespace, where
// examples/rbac lets it create and delete pods and nothing else runs.
const ProbeNamespace = "terraform-provider-windows"

// probeTimeout bounds one probe: agnhost's own --timeout per path, the
// image pull and the pod's start.
const probeTimeout = 3 * time.Minute

// ProbeRequest is one node's network probe.
type ProbeRequest struct {
	Node          string
	ClusterDomain string
	// RuntimeClass is the RuntimeClass the probe pod names ("" none).
	RuntimeClass string
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
// expected of it, and the cluster's evidence.
type ProbeError struct {
	Node     string
	Path     ProbePath
	Expected string
	Evidence string
}

func (e *ProbeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "network probe of node %s: %s failed: %s", e.Node, e.Path.What, strings.TrimSpace(e.Path.Output))
	fmt.Fprintf(&b, "\nexpected: %s", e.Expected)
	if e.Evidence != "" {
		fmt.Fprintf(&b, "\nevidence: %s", e.Evidence)
	}
	return b.String()
}

// probePaths are the paths the probe pod tries, in order: the cluster DNS
// and a ClusterIP Service at once (kube-dns by its name: the name goes
// through the cluster DNS, the connection to its ClusterIP through the
// node's kube-proxy load balancer: test/e2e/windows/dns.go and service.go
// check the two), then a pod on another node directly (a Linux node's where
// there is one: test/e2e/windows/networking.go), when the cluster has one.
func probePaths(domain string, otherPod string) []ProbePath {
	paths := []ProbePath{{
		Name: "cluster-dns-and-service", What: "cluster DNS and ClusterIP Service (kube-dns.kube-system.svc." + domain + ":53 over TCP)",
		Target: "kube-dns.kube-system.svc." + domain + ":53",
	}}
	if otherPod != "" {
		paths = append(paths, ProbePath{Name: "pod-on-other-node", What: "a pod on another node (" + otherPod + ")", Target: otherPod})
	}
	return paths
}

// ProbeNetwork proves a node's network path from a pod on it: it runs the
// probe pod (ProbeImage, one container per path, in order, restartPolicy
// Never), waits for it to end on a watch, deletes it, and returns the paths
// with their outcome; a failed path is a *ProbeError with the cluster DNS's
// endpoints as evidence. Its API requests: the kube-dns EndpointSlices (one
// list), the pod's create, list+watch and delete.
func (c *Client) ProbeNetwork(ctx context.Context, req ProbeRequest) ([]ProbePath, error) {
	slices, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + kubeDNSService})
	if err != nil {
		return nil, fmt.Errorf("network probe: listing kube-system/%s's EndpointSlices: %w", kubeDNSService, err)
	}
	dnsReady, other := dnsEndpoints(slices.Items, req.Node)
	paths := probePaths(req.ClusterDomain, other)

	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := "network-probe-" + truncate(req.Node, 40) + "-" + hex.EncodeToString(suffix)
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ProbeNamespace, Labels: map[string]string{
			"app.kubernetes.io/name": "network-probe", "app.kubernetes.io/managed-by": "terraform-provider-windows"}},
		Spec: corev1.PodSpec{
			NodeName: req.Node, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no,
			OS:          &corev1.PodOS{Name: corev1.Windows},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	}
	if req.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = &req.RuntimeClass
	}
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
		return nil, fmt.Errorf("network probe: creating pod %s/%s: %w", ProbeNamespace, name, err)
	}
	defer func() {
		zero := int64(0)
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := pods.Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			_ = err // a leftover probe pod is harmless and labelled; the next probe does not depend on it
		}
	}()
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
	_, err = watchtools.UntilWithSync(wctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		done = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		phase := "not scheduled"
		if done != nil {
			phase = string(done.Status.Phase)
		}
		return paths, fmt.Errorf("network probe of node %s: pod %s/%s did not finish within %s (phase %s): %w",
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
	for _, p := range paths {
		if p.Passed {
			continue
		}
		e := &ProbeError{Node: req.Node, Path: p}
		switch p.Name {
		case "cluster-dns-and-service":
			e.Expected = "the name resolves through the cluster DNS (the kubelet's clusterDNS, Service kube-system/kube-dns) and a TCP connection to its ClusterIP reaches a DNS pod through the node's kube-proxy load balancer"
		default:
			e.Expected = "a TCP connection from a pod on this node reaches a pod on another node over the pod network (flannel's overlay)"
		}
		if dnsReady == 0 {
			e.Evidence = "Service kube-system/kube-dns has no ready endpoints: nothing answers the cluster DNS (does its selector still match the DNS pods?)"
		} else {
			e.Evidence = fmt.Sprintf("Service kube-system/kube-dns has %d ready endpoint(s); look at the node's kube-proxy and flanneld logs and its HNS load balancers (Get-HnsPolicyList)", dnsReady)
		}
		return paths, e
	}
	return paths, nil
}

// dnsEndpoints counts kube-dns's ready endpoints and picks one on another
// node than node to probe a pod there ("" when there is none): the DNS pods
// run on Linux nodes in a Windows cluster.
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

// ClusterDNSReadyEndpoints counts the ready endpoints behind
// kube-system/kube-dns (one EndpointSlice list): zero means no pod in the
// cluster resolves a name through the cluster DNS.
func (c *Client) ClusterDNSReadyEndpoints(ctx context.Context) (int, error) {
	slices, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + kubeDNSService})
	if err != nil {
		return 0, fmt.Errorf("listing kube-system/%s's EndpointSlices: %w", kubeDNSService, err)
	}
	ready, _ := dnsEndpoints(slices.Items, "")
	return ready, nil
}

// AgentsNotRunning lists, for every node with pods of the agents in
// namespace, the agents that are not Running and Ready on it (one pod list
// for every node): a refresh's view of the node agents. A node with no pod
// of an agent is absent from the pods, and reported by the caller.
func (c *Client) AgentsNotRunning(ctx context.Context, namespace string, agents []Agent) (map[string][]AgentStatus, error) {
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the node agents' pods in %s: %w", namespace, err)
	}
	return agentsNotRunning(pods.Items, agents), nil
}

// agentsNotRunning: for each node, every agent whose best pod there (a
// Running and Ready one if any) is not Running and Ready, or has none.
func agentsNotRunning(pods []corev1.Pod, agents []Agent) map[string][]AgentStatus {
	byNode := map[string][]*corev1.Pod{}
	for i := range pods {
		if n := pods[i].Spec.NodeName; n != "" {
			byNode[n] = append(byNode[n], &pods[i])
		}
	}
	out := map[string][]AgentStatus{}
	for node, ps := range byNode {
		for _, a := range agents {
			var best *corev1.Pod
			for _, p := range ps {
				if !labelsMatch(a.Selector, p.Labels) {
					continue
				}
				if best == nil || PodRunningAndReady(p) {
					best = p
				}
			}
			if best == nil || !PodRunningAndReady(best) {
				out[node] = append(out[node], AgentStatus{Agent: a, Pod: best})
			}
		}
	}
	return out
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
