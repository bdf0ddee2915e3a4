package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// FindNode reads a Node; a missing one is a NotFoundError.
func (c *Client) FindNode(ctx context.Context, name string) (*corev1.Node, error) {
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, notFoundOr(err, "Node", name)
	}
	return n, nil
}

// NodeReadyCondition returns the Node's Ready condition, or nil when the
// kubelet has not posted one yet.
func NodeReadyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// NodeIsReady reports whether the Node's Ready condition is True.
func NodeIsReady(n *corev1.Node) bool {
	c := NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

// NodeWaitError says why a wait on a Node ended before its condition held:
// the context ended (Unwrap gives its error) while the Node was absent
// (Registered false) or present but not yet as wanted (Node is its last
// state). windows_node adds the kubelet's log to it.
type NodeWaitError struct {
	Name string
	// Want is what was awaited: "Ready", "a pod CIDR".
	Want       string
	Registered bool
	// Node is the last state seen; nil when it never registered.
	Node *corev1.Node
	// Unreachable, when set, says the API server was not answering when
	// the wait ended (an *APIUnreachableError): Node and Registered are
	// what was seen before.
	Unreachable error
	Err         error
}

func (e *NodeWaitError) Error() string {
	if e.Unreachable != nil {
		seen := "it had not registered"
		if e.Registered {
			seen = "it had registered"
			if cond := NodeReadyCondition(e.Node); cond != nil {
				seen += fmt.Sprintf(", Ready %s (%s)", cond.Status, cond.Reason)
			}
		}
		return fmt.Sprintf("Node %q: could not tell whether it is %s (%v): %v. When last seen, %s", e.Name, e.Want, e.Err, e.Unreachable, seen)
	}
	if !e.Registered {
		return fmt.Sprintf("Node %q never registered with the API server (waiting for it to be %s: %v): the kubelet on the host did not start, or could not authenticate with its bootstrap kubeconfig; its log says why", e.Name, e.Want, e.Err)
	}
	switch e.Want {
	case wantReady:
		cond := NodeReadyCondition(e.Node)
		if cond == nil {
			return fmt.Sprintf("Node %q registered but is not Ready (%v): the kubelet has not reported a Ready condition", e.Name, e.Err)
		}
		return fmt.Sprintf("Node %q registered but is not Ready (%v): Ready is %s, reason %s: %s", e.Name, e.Err, cond.Status, cond.Reason, cond.Message)
	case wantPodCIDR:
		return fmt.Sprintf("Node %q has no pod CIDR (spec.podCIDR) (%v): the controller manager allocates one only when it runs with --allocate-node-cidrs=true and --cluster-cidr=<pod network>; set them, or, if your network plugin assigns pod networks itself, do not wait for the pod CIDR", e.Name, e.Err)
	}
	return fmt.Sprintf("Node %q is not %s (%v)", e.Name, e.Want, e.Err)
}

func (e *NodeWaitError) Unwrap() error { return e.Err }

const (
	wantReady   = "Ready"
	wantPodCIDR = "given a pod CIDR"
)

// WaitForNodeReady watches the Node until it exists and its Ready condition
// is True, and returns it. When ctx ends first the error is a *NodeWaitError
// saying whether the Node never registered or registered but is not Ready
// (with its Ready condition's reason and message).
func (c *Client) WaitForNodeReady(ctx context.Context, name string) (*corev1.Node, error) {
	return c.waitForNode(ctx, name, wantReady, NodeIsReady)
}

// WaitForNodeReadyAgain waits, like WaitForNodeReady, for a Node that was
// Ready as prev shows it and whose kubelet then stopped (a power cycle): the
// Ready condition it waits for must come from the kubelet running now, that
// is report a boot ID other than prev's or a heartbeat after prev's last
// one. The stale Ready condition the stopped kubelet left behind (the node
// lifecycle controller only marks it Unknown after its grace period, 40 s
// by default) does not count.
func (c *Client) WaitForNodeReadyAgain(ctx context.Context, prev *corev1.Node) (*corev1.Node, error) {
	var beat metav1.Time
	if cond := NodeReadyCondition(prev); cond != nil {
		beat = cond.LastHeartbeatTime
	}
	return c.waitForNode(ctx, prev.Name, wantReady, func(n *corev1.Node) bool {
		cond := NodeReadyCondition(n)
		if cond == nil || cond.Status != corev1.ConditionTrue {
			return false
		}
		return n.Status.NodeInfo.BootID != prev.Status.NodeInfo.BootID || cond.LastHeartbeatTime.After(beat.Time)
	})
}

// WaitForNodePodCIDR watches the Node until the controller manager has
// allocated its spec.podCIDR, and returns it. When ctx ends first the error
// is a *NodeWaitError naming the controller manager flags that allocate it.
func (c *Client) WaitForNodePodCIDR(ctx context.Context, name string) (string, error) {
	n, err := c.waitForNode(ctx, name, wantPodCIDR, func(n *corev1.Node) bool { return n.Spec.PodCIDR != "" })
	if err != nil {
		return "", err
	}
	return n.Spec.PodCIDR, nil
}

// waitForNode lists and watches the one Node (an informer, so dropped
// watches are resumed) until cond holds for it.
func (c *Client) waitForNode(ctx context.Context, name, want string, cond func(*corev1.Node) bool) (*corev1.Node, error) {
	var last *corev1.Node
	var outage apiOutage
	ev, err := watchtools.UntilWithSync(ctx, outage.listWatch(c.nodeListWatch(name)), &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		if !ok {
			return false, nil
		}
		if e.Type == watch.Deleted {
			last = nil
			return false, nil
		}
		last = n
		return cond(n), nil
	})
	if err == nil {
		return ev.Object.(*corev1.Node), nil
	}
	if ctx.Err() != nil {
		return nil, &NodeWaitError{Name: name, Want: want, Registered: last != nil, Node: last, Unreachable: outage.unreachable(), Err: context.Cause(ctx)}
	}
	return nil, fmt.Errorf("waiting for Node %q to be %s: %w", name, want, err)
}

func (c *Client) nodeListWatch(name string) *cache.ListWatch {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Nodes().Watch(ctx, o)
		},
	}
}

// CordonNode marks the Node unschedulable (cordon true) or schedulable
// again, as `kubectl cordon`/`uncordon` do; a Node already so is left
// untouched. A missing Node is a NotFoundError.
func (c *Client) CordonNode(ctx context.Context, name string, cordon bool) error {
	n, err := c.FindNode(ctx, name)
	if err != nil {
		return err
	}
	return c.cordon(ctx, n, cordon)
}

func (c *Client) cordon(ctx context.Context, n *corev1.Node, cordon bool) error {
	if n.Spec.Unschedulable == cordon {
		return nil
	}
	// A merge patch rather than an apply: spec.unschedulable is shared with
	// kubectl and other drainers, and our apply configuration (labels,
	// taints, providerID) must not gain or lose it.
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, cordon)
	_, err := c.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		verb := "cordoning"
		if !cordon {
			verb = "uncordoning"
		}
		return fmt.Errorf("%s Node %q: %w", verb, n.Name, notFoundOr(err, "Node", n.Name))
	}
	return nil
}

// CordonedForPowerCycleAnnotation marks a Node this provider cordoned for a
// power cycle (windows_node's hardware change): only such a cordon is lifted
// again, an operator's is left alone.
const CordonedForPowerCycleAnnotation = "windows.wincluster.io/cordoned-for-power-cycle"

// CordonedForPowerCycle reports whether this provider cordoned the Node for
// a power cycle and has not lifted that cordon yet.
func CordonedForPowerCycle(n *corev1.Node) bool {
	_, ok := n.Annotations[CordonedForPowerCycleAnnotation]
	return ok
}

// MarkCordonedForPowerCycle records on the Node that this provider cordons
// it for a power cycle (mark true), before the drain, so that a later
// update lifts the cordon even when this one fails midway; or removes the
// record (mark false) once the cordon is lifted. A missing Node is a
// NotFoundError.
func (c *Client) MarkCordonedForPowerCycle(ctx context.Context, name string, mark bool) error {
	// A merge patch, not our apply configuration: ApplyNodeSettings would
	// remove an annotation its next apply does not carry.
	var value *string
	if mark {
		v := "hardware change"
		value = &v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]*string{CordonedForPowerCycleAnnotation: value}}})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("recording the power-cycle cordon on Node %q: %w", name, notFoundOr(err, "Node", name))
	}
	return nil
}

// DeleteNode deletes the Node; one already gone is not an error.
func (c *Client) DeleteNode(ctx context.Context, name string) error {
	err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Node %q: %w", name, err)
	}
	return nil
}

// WindowsNodes lists the Nodes labelled kubernetes.io/os=windows.
func (c *Client) WindowsNodes(ctx context.Context) ([]corev1.Node, error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelOS + "=windows"})
	if err != nil {
		return nil, fmt.Errorf("listing Windows nodes: %w", err)
	}
	return list.Items, nil
}
