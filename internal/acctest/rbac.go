package acctest

import (
	"context"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
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
	// An admin's client: the sandbox's, or in lab mode the admin
	// kubeconfig's (SANDBOX_ADMIN_KUBECONFIG).
	cs := Kube(t).Interface
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

// KubeconfigWithout issues a kubeconfig for a ServiceAccount bound like the
// provider's, by the documented manifest, minus verb on resource of
// apiGroup: what a cluster whose admin left one rule out gives the provider.
func KubeconfigWithout(t *testing.T, name, apiGroup, resource, verb string) string {
	t.Helper()
	RequireSandbox(t, "a ServiceAccount kubeconfig signed by the sandbox")
	ctx := context.Background()
	objs, err := sandbox.ProviderRBAC("")
	if err != nil {
		t.Fatal(err)
	}
	objs = sandbox.RenameIdentity(objs, name)
	if !sandbox.WithoutVerb(objs, apiGroup, resource, verb) {
		t.Fatalf("the documented role grants no %q on %q (group %q)", verb, resource, apiGroup)
	}
	if err := sandbox.ApplyRBAC(ctx, Sandbox.ControlPlane.Client, objs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := Sandbox.WriteServiceAccountKubeconfig(ctx, rbac.Namespace, name, path); err != nil {
		t.Fatal(err)
	}
	return path
}
