package sandbox

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
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
	if len(objs) != 22 { // with the network probe's Role, RoleBinding, admission policy and its binding
		t.Errorf("%d objects, want 22: %v", len(objs), kinds)
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
	case *admissionv1.ValidatingAdmissionPolicy:
		return "ValidatingAdmissionPolicy"
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		return "ValidatingAdmissionPolicyBinding"
	}
	return "?"
}

// TestProviderPolicies: the manifest's admission policies each have a
// binding of the same name that denies, each matches the provider's
// identities (its namespace's ServiceAccounts and rbac.Group) and nobody
// else, and the last policy and binding is the one the sandbox waits for
// (waitForProviderPolicies' proof that all are enforced holds only then).
func TestProviderPolicies(t *testing.T) {
	objs, err := ProviderRBAC("")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]*admissionv1.ValidatingAdmissionPolicy{}
	var policyOrder, bindingOrder []string
	for _, o := range objs {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			policies[o.Name] = o
			policyOrder = append(policyOrder, o.Name)
			if o.Spec.FailurePolicy == nil || *o.Spec.FailurePolicy != admissionv1.Fail {
				t.Errorf("policy %s: failurePolicy %v, want Fail (an error must refuse, not allow)", o.Name, o.Spec.FailurePolicy)
			}
			if len(o.Spec.MatchConditions) != 1 || o.Spec.MatchConditions[0].Expression !=
				"'system:serviceaccounts:"+rbac.Namespace+"' in request.userInfo.groups || '"+rbac.Group+"' in request.userInfo.groups" {
				t.Errorf("policy %s: match conditions %v", o.Name, o.Spec.MatchConditions)
			}
			for _, v := range o.Spec.Validations {
				if v.Reason == nil || *v.Reason != metav1.StatusReasonForbidden || v.Message == "" {
					t.Errorf("policy %s: validation %q answers %v with %q, want Forbidden and a message", o.Name, v.Expression, v.Reason, v.Message)
				}
			}
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			bindingOrder = append(bindingOrder, o.Name)
			if o.Spec.PolicyName != o.Name || !slices.Equal(o.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
				o.Spec.ParamRef != nil || o.Spec.MatchResources != nil {
				t.Errorf("binding %s: %+v, want the policy of its name, Deny, no params, no narrowing", o.Name, o.Spec)
			}
		}
	}
	want := []string{rbac.PolicySecrets, rbac.PolicyDaemonSets, rbac.PolicyNodes, rbac.PolicyProbe, rbac.PolicyRuntimeClasses}
	if !slices.Equal(policyOrder, want) || !slices.Equal(bindingOrder, want) {
		t.Errorf("policies %v, bindings %v: want both %v, in this order", policyOrder, bindingOrder, want)
	}
}

// TestDaemonSetPolicyFields: the DaemonSet policy compares every field of a
// DaemonSet's spec and of its pod's spec (of the Kubernetes release the
// provider is built with) but nodeSelector and affinity. A field a newer
// release adds fails this test until the policy compares it too.
func TestDaemonSetPolicyFields(t *testing.T) {
	objs, err := ProviderRBAC("")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, o := range objs {
		if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok && p.Name == rbac.PolicyDaemonSets {
			for _, v := range p.Spec.Variables {
				vars[v.Name] = v.Expression
			}
		}
	}
	compared := func(expr, left, right string) map[string]bool {
		out := map[string]bool{}
		re := regexp.MustCompile(regexp.QuoteMeta(left) + `\.\?(\w+) == ` + regexp.QuoteMeta(right) + `\.\?(\w+)`)
		for _, m := range re.FindAllStringSubmatch(expr, -1) {
			if m[1] != m[2] {
				t.Errorf("compares %s with %s", m[1], m[2])
			}
			out[m[1]] = true
		}
		return out
	}
	check := func(typ reflect.Type, got map[string]bool, except ...string) {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			switch {
			case slices.Contains(except, name) && got[name]:
				t.Errorf("%s.%s is compared: the guard must be able to change it", typ.Name(), name)
			case !slices.Contains(except, name) && !got[name]:
				t.Errorf("%s.%s is not compared: the provider could change it on any DaemonSet", typ.Name(), name)
			}
		}
	}
	check(reflect.TypeFor[corev1.PodSpec](), compared(vars["podSpecUnchanged"], "p[0]", "p[1]"), "nodeSelector", "affinity")
	// template is compared in parts: its metadata here, its spec above.
	spec := compared(vars["specUnchanged"], "object.spec", "oldObject.spec")
	spec["template"] = compared(vars["specUnchanged"], "object.spec.template", "oldObject.spec.template")["metadata"]
	check(reflect.TypeFor[appsv1.DaemonSetSpec](), spec)
	for _, f := range []string{"labels", "ownerReferences", "finalizers"} {
		if !compared(vars["metadataUnchanged"], "object.metadata", "oldObject.metadata")[f] {
			t.Errorf("metadata.%s is not compared", f)
		}
	}
}
