package kube

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// DeleteNodeUID deletes the Node read as uid, and nothing else: the delete
// carries a UID precondition, so a Node deleted and registered again
// between the read that judged it this provider's and the delete (another
// machine's kubelet taking the name) is left alone, and the error says so.
// One already gone is not an error.
func (c *Client) DeleteNodeUID(ctx context.Context, name string, uid types.UID) error {
	err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("Node %q was not deleted: it was replaced (another Node of that name registered, UID no longer %s) after this provider read it; nothing of the new one was touched: %w", name, uid, err)
	}
	return fmt.Errorf("deleting Node %q: %w", name, err)
}

// AttachedVolumes are the names of the PersistentVolumes (or, for an inline
// volume, of the VolumeAttachments) that VolumeAttachments say are attached
// to node. A VolumeAttachment counts while status.attached is true, as
// Cluster API counts it before it deletes a Machine's infrastructure
// (internal/controllers/machine: getVolumeAttachmentForNode).
func attachedVolumes(objs []any, node string) []string {
	var names []string
	for _, o := range objs {
		va, ok := o.(*storagev1.VolumeAttachment)
		if !ok || va.Spec.NodeName != node || !va.Status.Attached {
			continue
		}
		name := "VolumeAttachment " + va.Name // an inline volume
		if pv := va.Spec.Source.PersistentVolumeName; pv != nil {
			name = "PersistentVolume " + *pv
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// WaitForVolumesDetached watches the cluster's VolumeAttachments until none
// is attached to node: the CSI driver (vSphere CSI supports Windows nodes)
// detaches a volume from the VM once its pods are gone, and a VM destroyed
// before that takes the volume's disk with it. This is Cluster API's wait
// before it deletes a Machine's infrastructure (waitForVolumeDetach,
// shouldWaitForNodeVolumes in internal/controllers/machine). waiting is
// told what is still attached when the wait begins (not called when
// nothing is). When ctx ends first the error names what is still attached.
func (c *Client) WaitForVolumesDetached(ctx context.Context, node string, waiting func(attached []string)) error {
	volumes := c.StorageV1().VolumeAttachments()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return volumes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return volumes.Watch(ctx, o)
		},
	}
	var (
		store    cache.Store
		attached []string
		told     bool
	)
	check := func() bool {
		attached = attachedVolumes(store.List(), node)
		if len(attached) > 0 && !told && waiting != nil {
			told = true
			waiting(attached)
		}
		return len(attached) == 0
	}
	// The precondition sees the synced list; every event after it updates
	// the same store before the condition runs.
	precondition := func(s cache.Store) (bool, error) {
		store = s
		return check(), nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &storagev1.VolumeAttachment{}, precondition, func(watch.Event) (bool, error) {
		return check(), nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && len(attached) > 0 {
		return fmt.Errorf("volumes still attached to Node %q: %s (their CSI driver detaches them once no pod uses them; a pod left on the node, or a stuck detach, keeps them): %w",
			node, listNames(attached), ctx.Err())
	}
	return fmt.Errorf("waiting for the volumes of Node %q to detach: %w", node, err)
}

// NodeUnreachable reports whether the node lifecycle controller has marked
// the Node unreachable (its Ready condition Unknown: the kubelet stopped
// reporting). Cluster API does not wait for such a Node's volumes to detach
// (noderefutil.IsNodeUnreachable): nothing on it can unmount them.
func NodeUnreachable(n *corev1.Node) bool {
	c := NodeReadyCondition(n)
	return c != nil && c.Status == corev1.ConditionUnknown
}
