package kube

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// Node labels the checks read.
const (
	LabelOS           = "kubernetes.io/os"
	labelOSBeta       = "beta.kubernetes.io/os" // still honoured by the scheduler as a plain label
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
)

// Cluster is one snapshot of everything the readiness checks look at. It is
// gathered once (DiscoverCluster) and evaluated by pure functions, so the
// checks are unit-tested against hand-made snapshots.
type Cluster struct {
	Network ClusterNetwork
	CNI     CNI
	Nodes   []corev1.Node
	// DaemonSets are those of every namespace.
	DaemonSets []appsv1.DaemonSet
	// Pods are the pods bound to a node that have not terminated: what
	// occupies the nodes' allocatable resources.
	Pods []corev1.Pod
	// ControllerManagerFlags are the flags of a kube-controller-manager
	// static pod; nil when the controller manager does not run as a visible pod.
	ControllerManagerFlags map[string]string
}

// WindowsNode is an existing Windows node.
type WindowsNode struct {
	Name string
	// Build is "10.0.<build>" from the node.kubernetes.io/windows-build label,
	// else from the kernel version the kubelet reports; "" when neither says.
	Build          string
	Ready          bool
	KubeletVersion string
}

// DiscoverCluster gathers the snapshot the readiness checks evaluate. Lists
// are not paginated: the checks need every node, DaemonSet and bound pod, and
// a full list is one request even in clusters of thousands of pods.
func (c *Client) DiscoverCluster(ctx context.Context) (*Cluster, error) {
	src, err := c.readNetworkSources(ctx)
	if err != nil {
		return nil, err
	}
	cl := &Cluster{Network: *src.network(c.Host()), ControllerManagerFlags: src.controllerManager}
	cl.CNI = *src.plugin

	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	cl.Nodes = nodes.Items
	daemonSets, err := c.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing DaemonSets: %w", err)
	}
	cl.DaemonSets = daemonSets.Items
	// The field selector keeps terminated pods (and their requests) out on
	// the server; unbound pods occupy no node.
	selector := fields.AndSelectors(
		fields.OneTermNotEqualSelector("spec.nodeName", ""),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	cl.Pods = pods.Items
	return cl, nil
}

// WindowsNodes lists the cluster's Windows nodes, by name.
func (cl *Cluster) WindowsNodes() []WindowsNode {
	var out []WindowsNode
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		if !IsWindowsNode(n) {
			continue
		}
		out = append(out, WindowsNode{
			Name:           n.Name,
			Build:          windowsBuildOf(n),
			Ready:          nodeReady(n),
			KubeletVersion: n.Status.NodeInfo.KubeletVersion,
		})
	}
	slices.SortFunc(out, func(a, b WindowsNode) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// NodeCIDRAllocation tells whether nodes get a pod CIDR from the controller
// manager: every node carries spec.podCIDR. With no nodes yet it falls back
// to the controller manager's --allocate-node-cidrs flag; known is false
// when neither can tell.
func (cl *Cluster) NodeCIDRAllocation() (enabled, known bool) {
	if len(cl.Nodes) > 0 {
		return len(cl.nodesWithoutPodCIDR()) == 0, true
	}
	if v, ok := cl.ControllerManagerFlags["allocate-node-cidrs"]; ok {
		return v == "true", true
	}
	return false, false
}

// podCIDRGrace is how long a just-registered node may be without a pod CIDR
// while other nodes have one: the controller manager allocates it moments
// after registration, and a node caught in between (many nodes joining at
// once) must not read as "allocation is off". Without any allocated node
// there is no such evidence, and every node without one counts.
const podCIDRGrace = 30 * time.Second

func (cl *Cluster) nodesWithoutPodCIDR() []string {
	allocating := cl.nodesAllocated() > 0
	var out []string
	for _, n := range cl.Nodes {
		if allocating && time.Since(n.CreationTimestamp.Time) < podCIDRGrace {
			continue
		}
		if n.Spec.PodCIDR == "" && len(n.Spec.PodCIDRs) == 0 {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// nodeWithPodCIDR returns a node that has a pod CIDR, or nil.
func (cl *Cluster) nodeWithPodCIDR() *corev1.Node {
	for i := range cl.Nodes {
		if n := &cl.Nodes[i]; n.Spec.PodCIDR != "" {
			return n
		}
	}
	return nil
}

// nodesAllocated counts the nodes that have a pod CIDR.
func (cl *Cluster) nodesAllocated() int {
	n := 0
	for i := range cl.Nodes {
		if cl.Nodes[i].Spec.PodCIDR != "" || len(cl.Nodes[i].Spec.PodCIDRs) > 0 {
			n++
		}
	}
	return n
}

// IsWindowsNode reports a node labelled (or reporting itself) as Windows.
func IsWindowsNode(n *corev1.Node) bool {
	return n.Labels[LabelOS] == "windows" || n.Status.NodeInfo.OperatingSystem == "windows"
}

func windowsBuildOf(n *corev1.Node) string {
	if b := n.Labels[LabelWindowsBuild]; b != "" {
		return b
	}
	// The kubelet on Windows reports the kernel as "10.0.20348.2340".
	if b := winversion.TrimUBR(n.Status.NodeInfo.KernelVersion); winversion.ValidateBuild(b) == nil {
		return b
	}
	return ""
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
