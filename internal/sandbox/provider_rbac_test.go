package sandbox

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProviderRBAC: the manifest decodes into the objects the guide
// describes, every binding's subject is the provider's ServiceAccount, and
// the networking documents rewrite for another namespace whole.
func TestProviderRBAC(t *testing.T) {
	objs, err := ProviderRBAC("")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	rules := 0
	for _, o := range objs {
		m := o.(metav1.Object)
		kinds = append(kinds, typeName(o)+" "+m.GetName())
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			rules += len(o.Rules)
		case *rbacv1.Role:
			rules += len(o.Rules)
		case *rbacv1.ClusterRoleBinding:
			expectProviderSubject(t, o.Name, o.Subjects)
		case *rbacv1.RoleBinding:
			expectProviderSubject(t, o.Name, o.Subjects)
		}
	}
	if len(objs) != 10 {
		t.Errorf("%d objects, want 10: %v", len(objs), kinds)
	}
	t.Logf("%d objects, %d rules: %v", len(objs), rules, kinds)

	net, err := ProviderRBAC("tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(net) != 4 {
		t.Fatalf("%d networking objects, want 4", len(net))
	}
	for _, o := range net {
		m := o.(metav1.Object)
		if m.GetNamespace() == "kube-system" || strings.Contains(m.GetName(), "kube-system") {
			t.Errorf("%s %s/%s still names kube-system", typeName(o), m.GetNamespace(), m.GetName())
		}
		if cr, ok := o.(*rbacv1.ClusterRole); ok {
			for _, r := range cr.Rules {
				for _, n := range r.ResourceNames {
					if !strings.HasPrefix(n, "windows-node-networking:tenant-a:") {
						t.Errorf("ClusterRole %s names %s", cr.Name, n)
					}
				}
			}
		}
	}

	renamed := RenameIdentity(objs, "other")
	if !WithoutVerb(renamed, "", "secrets", "create") {
		t.Fatal("no rule grants create on secrets")
	}
	for _, o := range renamed {
		if _, ok := o.(*corev1.Namespace); ok {
			t.Error("RenameIdentity kept the shared Namespace")
		}
		if r, ok := o.(*rbacv1.Role); ok && slices.ContainsFunc(r.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.Resources, "secrets") && slices.Contains(p.Verbs, "create")
		}) {
			t.Errorf("Role %s still grants create on secrets", r.Name)
		}
	}
	for _, o := range objs {
		if r, ok := o.(*rbacv1.Role); ok && r.Name == "terraform-provider-windows" && !slices.Contains(r.Rules[0].Verbs, "create") {
			t.Error("WithoutVerb changed the original objects")
		}
	}
}

func expectProviderSubject(t *testing.T, binding string, subjects []rbacv1.Subject) {
	t.Helper()
	if len(subjects) != 1 || subjects[0].Kind != "ServiceAccount" || subjects[0].Name != "terraform-provider-windows" ||
		subjects[0].Namespace != "terraform-provider-windows" {
		t.Errorf("binding %s: subjects %v", binding, subjects)
	}
}

func typeName(o any) string {
	switch o.(type) {
	case *corev1.Namespace:
		return "Namespace"
	case *corev1.ServiceAccount:
		return "ServiceAccount"
	case *rbacv1.ClusterRole:
		return "ClusterRole"
	case *rbacv1.ClusterRoleBinding:
		return "ClusterRoleBinding"
	case *rbacv1.Role:
		return "Role"
	case *rbacv1.RoleBinding:
		return "RoleBinding"
	}
	return "?"
}
