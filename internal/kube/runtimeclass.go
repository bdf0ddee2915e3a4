package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// RuntimeClassSpec is the part of a node.k8s.io/v1 RuntimeClass the
// windows_runtime_class resource manages.
type RuntimeClassSpec struct {
	Name         string
	Handler      string
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// Overhead is the pod overhead per resource name ("cpu", "memory"); nil
	// when unset.
	Overhead corev1.ResourceList
}

// FindRuntimeClass reads a RuntimeClass; a missing one is a NotFoundError.
func (c *Client) FindRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
	rc, err := c.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, notFoundOr(err, "RuntimeClass", name)
	}
	return rc, nil
}

// CreateRuntimeClass creates the RuntimeClass described by spec.
func (c *Client) CreateRuntimeClass(ctx context.Context, spec RuntimeClassSpec) (*nodev1.RuntimeClass, error) {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: spec.Name}}
	spec.applyTo(rc)
	return c.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{FieldManager: FieldManager})
}

// UpdateRuntimeClass makes the existing RuntimeClass match spec (everything
// but the immutable handler), retrying on write conflicts with a fresh read.
func (c *Client) UpdateRuntimeClass(ctx context.Context, spec RuntimeClassSpec) (*nodev1.RuntimeClass, error) {
	var updated *nodev1.RuntimeClass
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc, err := c.FindRuntimeClass(ctx, spec.Name)
		if err != nil {
			return err
		}
		if rc.Handler != spec.Handler {
			return fmt.Errorf("RuntimeClass %q has handler %q; the handler is immutable and changing it needs a replacement", spec.Name, rc.Handler)
		}
		spec.applyTo(rc)
		updated, err = c.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{FieldManager: FieldManager})
		return err
	})
	return updated, err
}

// DeleteRuntimeClass deletes a RuntimeClass; one already gone is not an error.
func (c *Client) DeleteRuntimeClass(ctx context.Context, name string) error {
	err := c.NodeV1().RuntimeClasses().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !IsNotFound(notFoundOr(err, "RuntimeClass", name)) {
		return err
	}
	return nil
}

// applyTo writes spec into rc, with the label LabelManagedBy: the
// provider's admission policy (examples/rbac) lets it change only the
// RuntimeClasses that carry it.
func (spec RuntimeClassSpec) applyTo(rc *nodev1.RuntimeClass) {
	if rc.Labels == nil {
		rc.Labels = map[string]string{}
	}
	rc.Labels[LabelManagedBy] = FieldManager
	rc.Handler = spec.Handler
	rc.Scheduling = &nodev1.Scheduling{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	rc.Overhead = nil
	if len(spec.Overhead) > 0 {
		rc.Overhead = &nodev1.Overhead{PodFixed: spec.Overhead}
	}
}

// ParseQuantities parses resource quantities ("250m", "128Mi") keyed by
// resource name, naming the offending entry on error.
func ParseQuantities(in map[string]string) (corev1.ResourceList, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for name, value := range in {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a Kubernetes quantity (examples: 250m, 0.5, 128Mi, 1Gi)", name, value)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}
