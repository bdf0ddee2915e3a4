package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/util/retry"
)

// GuardFieldManager is the server-side apply field manager of the Linux
// DaemonSet guard. It is separate from FieldManager so that releasing what
// the guard owns (an empty apply) cannot touch fields another resource of
// this provider owns.
const GuardFieldManager = "terraform-provider-windows-guard"

// nodeSelectorPath is the managedFields path of the pod template's node
// selector. The API declares nodeSelector `+mapType=atomic`: server-side
// apply owns it as one value, never key by key, so the guard applies the
// whole map (the DaemonSet's own entries plus kubernetes.io/os) and, when it
// lets go, gives the DaemonSet's other entries back to their manager.
var nodeSelectorPath = []string{"f:spec", "f:template", "f:spec", "f:nodeSelector"}

// containersPath identifies the manager of a DaemonSet's manifest: whoever
// owns its pod template's containers.
var containersPath = []string{"f:spec", "f:template", "f:spec", "f:containers"}

// FindDaemonSet reads a DaemonSet; a missing one is a NotFoundError.
func (c *Client) FindDaemonSet(ctx context.Context, namespace, name string) (*appsv1.DaemonSet, error) {
	ds, err := c.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, notFoundOr(err, "DaemonSet", namespace+"/"+name)
	}
	return ds, nil
}

// UnconstrainedDaemonSets names the DaemonSets of namespace whose pod
// template has no OS node selector or affinity: the ones that would put
// pods on Windows nodes, sorted.
func (c *Client) UnconstrainedDaemonSets(ctx context.Context, namespace string) ([]string, error) {
	list, err := c.AppsV1().DaemonSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing DaemonSets in %s: %w", namespace, err)
	}
	var names []string
	for i := range list.Items {
		if templatePlacement(&list.Items[i].Spec.Template.Spec) == anyOS {
			names = append(names, list.Items[i].Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// GuardedDaemonSets names the DaemonSets of namespace whose OS node selector
// the guard's field manager owns, sorted: what an imported guard manages.
func (c *Client) GuardedDaemonSets(ctx context.Context, namespace string) ([]string, error) {
	list, err := c.AppsV1().DaemonSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing DaemonSets in %s: %w", namespace, err)
	}
	var names []string
	for i := range list.Items {
		if GuardOwnsSelector(&list.Items[i]) {
			names = append(names, list.Items[i].Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// GuardDaemonSet sets the pod template's node selector kubernetes.io/os=linux
// by server-side apply under GuardFieldManager, keeping the selector's other
// entries. Force takes the selector over from the manager that set it (the
// map is atomic: see nodeSelectorPath); a selector already equal to the
// result stays shared with its manager. The apply carries the
// resourceVersion it was computed from, so a concurrent change is retried
// instead of overwritten. A missing DaemonSet is a NotFoundError (an apply
// would try to create it).
func (c *Client) GuardDaemonSet(ctx context.Context, namespace, name string) (*appsv1.DaemonSet, error) {
	var applied *appsv1.DaemonSet
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds, err := c.FindDaemonSet(ctx, namespace, name)
		if err != nil {
			return err
		}
		selector := maps.Clone(ds.Spec.Template.Spec.NodeSelector)
		if selector == nil {
			selector = map[string]string{}
		}
		selector[LabelOS] = "linux"
		cfg := appsv1ac.DaemonSet(name, namespace).WithResourceVersion(ds.ResourceVersion).
			WithSpec(appsv1ac.DaemonSetSpec().WithTemplate(corev1ac.PodTemplateSpec().
				WithSpec(corev1ac.PodSpec().WithNodeSelector(selector))))
		applied, err = c.AppsV1().DaemonSets(namespace).Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: GuardFieldManager, Force: true})
		return err
	})
	if IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("applying node selector %s=linux to DaemonSet %s/%s: %w", LabelOS, namespace, name, err)
	}
	return applied, nil
}

// UnguardDaemonSet gives the node selector back and changes nothing else:
//   - another manager owns the same selector too (the DaemonSet's manifest
//     sets kubernetes.io/os=linux itself): an empty apply under
//     GuardFieldManager releases the guard's share and the selector stays;
//   - the guard owns it alone and it holds only kubernetes.io/os: the empty
//     apply removes it;
//   - the guard owns it alone with other entries: a merge patch removes
//     kubernetes.io/os as the manager of the DaemonSet's pod template, which
//     takes the remaining entries back (an update moves ownership), so the
//     guard owns nothing any more.
//
// A DaemonSet that is gone, or whose selector the guard does not own (it was
// changed since), is left alone.
func (c *Client) UnguardDaemonSet(ctx context.Context, namespace, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds, err := c.FindDaemonSet(ctx, namespace, name)
		if IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if !GuardOwnsSelector(ds) {
			return c.releaseGuard(ctx, ds)
		}
		rest := maps.Clone(ds.Spec.Template.Spec.NodeSelector)
		delete(rest, LabelOS)
		if len(rest) == 0 || len(fieldOwners(ds, nodeSelectorPath)) > 1 {
			return c.releaseGuard(ctx, ds)
		}
		owner := templateOwner(ds)
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"template":{"spec":{"nodeSelector":{%q:null}}}}}`, ds.ResourceVersion, LabelOS)
		if _, err := c.AppsV1().DaemonSets(namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: owner}); err != nil {
			return fmt.Errorf("removing node selector %s from DaemonSet %s/%s: %w", LabelOS, namespace, name, err)
		}
		return nil
	})
}

// releaseGuard applies an empty configuration under GuardFieldManager:
// every field only the guard owns is removed, shared ones stay. It does
// nothing when the guard has no managedFields entry.
func (c *Client) releaseGuard(ctx context.Context, ds *appsv1.DaemonSet) error {
	if !slices.ContainsFunc(ds.ManagedFields, func(mf metav1.ManagedFieldsEntry) bool { return mf.Manager == GuardFieldManager }) {
		return nil
	}
	_, err := c.AppsV1().DaemonSets(ds.Namespace).Apply(ctx, appsv1ac.DaemonSet(ds.Name, ds.Namespace).WithResourceVersion(ds.ResourceVersion),
		metav1.ApplyOptions{FieldManager: GuardFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("releasing the node selector of DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}

// LinuxOnly reports whether the DaemonSet's pod template selects
// kubernetes.io/os=linux, whoever set it.
func LinuxOnly(ds *appsv1.DaemonSet) bool {
	return ds.Spec.Template.Spec.NodeSelector[LabelOS] == "linux"
}

// GuardOwnsSelector reports whether GuardFieldManager (by apply) owns the
// DaemonSet's node selector.
func GuardOwnsSelector(ds *appsv1.DaemonSet) bool {
	return slices.ContainsFunc(fieldOwners(ds, nodeSelectorPath), func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == GuardFieldManager && mf.Operation == metav1.ManagedFieldsOperationApply
	})
}

// fieldOwners returns the managedFields entries that own path.
func fieldOwners(ds *appsv1.DaemonSet, path []string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range ds.ManagedFields {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		if hasFieldPath(fields, path) {
			out = append(out, mf)
		}
	}
	return out
}

// templateOwner names the manager of the DaemonSet's manifest (the owner of
// its containers), to give the node selector's other entries back to. With
// none (every field applied by the guard is impossible) the guard's own
// name is used.
func templateOwner(ds *appsv1.DaemonSet) string {
	for _, mf := range fieldOwners(ds, containersPath) {
		if mf.Manager != GuardFieldManager {
			return mf.Manager
		}
	}
	return GuardFieldManager
}

func hasFieldPath(fields map[string]any, path []string) bool {
	for _, p := range path {
		next, ok := fields[p].(map[string]any)
		if !ok {
			return false
		}
		fields = next
	}
	return true
}
