package acctest

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// GrantNetworking lets the provider's ServiceAccount manage
// windows_node_networking in namespace ns, as the RBAC manifest tells an
// admin to (its networking documents with kube-system replaced by ns): the
// sandbox binds kube-system alone.
func GrantNetworking(t *testing.T, ns string) {
	t.Helper()
	PreCheck(t)
	objs, err := sandbox.ProviderRBAC(ns)
	if err != nil {
		t.Fatal(err)
	}
	cs := Sandbox.ControlPlane.Client
	if err := sandbox.ApplyRBAC(context.Background(), cs, objs); err != nil {
		t.Fatalf("granting the provider windows_node_networking in %s: %v", ns, err)
	}
	// The namespace's deletion takes its Role and RoleBinding; the
	// cluster-wide ones go here.
	t.Cleanup(func() {
		for _, o := range objs {
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			case *rbacv1.ClusterRoleBinding:
				_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			}
		}
	})
}
