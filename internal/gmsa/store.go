package gmsa

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// ErrNotFound is returned by Find when the GMSACredentialSpec is gone.
var ErrNotFound = errors.New("GMSACredentialSpec not found")

// Store writes and reads one credential spec's objects.
type Store struct {
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
}

// Found is a credential spec as the cluster holds it.
type Found struct {
	CredentialSpec CredentialSpec
	// ServiceAccounts are those the RoleBindings give the role to; empty
	// when the ClusterRole is missing or grants more or other than `use` on
	// this spec (the bindings then grant nothing this resource stands for).
	ServiceAccounts []ServiceAccount
}

// Find reads the GMSACredentialSpec name, its ClusterRole and bindings.
func (s Store) Find(ctx context.Context, name string) (*Found, error) {
	obj, err := s.Dynamic.Resource(GVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return nil, err
	}
	spec, err := FromObject(obj)
	if err != nil {
		return nil, err
	}
	found := &Found{CredentialSpec: spec}
	role, err := s.Clientset.RbacV1().ClusterRoles().Get(ctx, RoleName(name), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return found, nil
	case err != nil:
		return nil, err
	case !GrantsUse(role, name):
		return found, nil
	}
	bindings, err := s.bindings(ctx, name)
	if err != nil {
		return nil, err
	}
	found.ServiceAccounts = BoundAccounts(name, bindings)
	return found, nil
}

// Create creates the GMSACredentialSpec, then its role and bindings.
func (s Store) Create(ctx context.Context, spec Spec) error {
	obj, err := Object(spec.Name, spec.CredentialSpec)
	if err != nil {
		return err
	}
	if _, err := s.Dynamic.Resource(GVR).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return err
	}
	return s.applyRBAC(ctx, spec)
}

// Update makes the GMSACredentialSpec, its role and bindings match spec,
// removing the bindings of namespaces no longer listed.
func (s Store) Update(ctx context.Context, spec Spec) error {
	want, err := Object(spec.Name, spec.CredentialSpec)
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := s.Dynamic.Resource(GVR).Get(ctx, spec.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want.SetResourceVersion(cur.GetResourceVersion())
		l := cur.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[managedByLabel] = fieldManager
		want.SetLabels(l)
		_, err = s.Dynamic.Resource(GVR).Update(ctx, want, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil {
		return err
	}
	return s.applyRBAC(ctx, spec)
}

// Delete removes the bindings, the role and the GMSACredentialSpec; what
// is gone already is not an error.
func (s Store) Delete(ctx context.Context, name string) error {
	bindings, err := s.bindings(ctx, name)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		if err := ignoreNotFound(s.Clientset.RbacV1().RoleBindings(b.Namespace).Delete(ctx, b.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("deleting RoleBinding %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	if err := ignoreNotFound(s.Clientset.RbacV1().ClusterRoles().Delete(ctx, RoleName(name), metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("deleting ClusterRole %s: %w", RoleName(name), err)
	}
	return ignoreNotFound(s.Dynamic.Resource(GVR).Delete(ctx, name, metav1.DeleteOptions{}))
}

func (s Store) applyRBAC(ctx context.Context, spec Spec) error {
	roles := s.Clientset.RbacV1().ClusterRoles()
	role := ClusterRole(spec.Name)
	if err := createOrUpdate(ctx, role, roles.Create, func(ctx context.Context) error {
		cur, err := roles.Get(ctx, role.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Rules, cur.Labels = role.Rules, role.Labels
		_, err = roles.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	}); err != nil {
		return fmt.Errorf("writing ClusterRole %s: %w", role.Name, err)
	}
	want := map[string]bool{}
	for _, b := range RoleBindings(spec.Name, spec.ServiceAccounts) {
		want[b.Namespace] = true
		api := s.Clientset.RbacV1().RoleBindings(b.Namespace)
		if err := createOrUpdate(ctx, b, api.Create, func(ctx context.Context) error {
			cur, err := api.Get(ctx, b.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cur.RoleRef != b.RoleRef {
				// roleRef is immutable: replace the binding.
				if err := api.Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				_, err = api.Create(ctx, b, metav1.CreateOptions{FieldManager: fieldManager})
				return err
			}
			cur.Subjects, cur.Labels = b.Subjects, b.Labels
			_, err = api.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		}); err != nil {
			return fmt.Errorf("writing RoleBinding %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	existing, err := s.bindings(ctx, spec.Name)
	if err != nil {
		return err
	}
	for _, b := range existing {
		if !want[b.Namespace] {
			if err := ignoreNotFound(s.Clientset.RbacV1().RoleBindings(b.Namespace).Delete(ctx, b.Name, metav1.DeleteOptions{})); err != nil {
				return fmt.Errorf("deleting RoleBinding %s/%s: %w", b.Namespace, b.Name, err)
			}
		}
	}
	return nil
}

// bindings lists the RoleBindings made for name, in every namespace, by
// the label Label.
func (s Store) bindings(ctx context.Context, name string) ([]rbacv1.RoleBinding, error) {
	sel := labels.SelectorFromSet(labels.Set{Label: name}).String()
	list, err := s.Clientset.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the RoleBindings of %s: %w", name, err)
	}
	return list.Items, nil
}

func createOrUpdate[T any](ctx context.Context, obj T, create func(context.Context, T, metav1.CreateOptions) (T, error), update func(context.Context) error) error {
	_, err := create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return update(ctx) })
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
