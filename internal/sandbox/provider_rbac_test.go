package sandbox

import (
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
)

// TestProviderRBAC: the manifest decodes into the objects the guide
// describes, every binding's subject is the provider's ServiceAccount, and
// the everyday role writes nothing a cluster installs once: no DaemonSet,
// ConfigMap, ServiceAccount, RBAC object or RuntimeClass, and no verb that
// grants more than it holds (escalate, bind, impersonate).
func TestProviderRBAC(t *testing.T) {
	objs, err := ProviderRBAC()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	rules := 0
	installOnce := map[string]bool{"daemonsets": true, "configmaps": true, "serviceaccounts": true, "runtimeclasses": true,
		"clusterroles": true, "clusterrolebindings": true, "roles": true, "rolebindings": true, "*": true}
	checkRules := func(owner string, rs []rbacv1.PolicyRule) {
		rules += len(rs)
		for _, r := range rs {
			for _, v := range r.Verbs {
				if slices.Contains([]string{"escalate", "bind", "impersonate", "*"}, v) {
					t.Errorf("%s grants %q on %v", owner, v, r.Resources)
				}
				if v == "get" || v == "list" || v == "watch" {
					continue
				}
				for _, res := range r.Resources {
					if installOnce[res] {
						t.Errorf("%s grants %q on %s: an object a cluster installs once, with an administrator's identity", owner, v, res)
					}
				}
			}
		}
	}
	for _, o := range objs {
		m := o.(metav1.Object)
		kinds = append(kinds, typeName(o)+" "+m.GetName())
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			checkRules("ClusterRole "+o.Name, o.Rules)
		case *rbacv1.Role:
			checkRules("Role "+o.Namespace+"/"+o.Name, o.Rules)
		case *rbacv1.ClusterRoleBinding:
			expectProviderSubject(t, o.Name, o.Subjects)
		case *rbacv1.RoleBinding:
			expectProviderSubject(t, o.Name, o.Subjects)
		}
	}
	if len(objs) != 18 { // 10 of RBAC, 4 admission policies and their bindings
		t.Errorf("%d objects, want 18: %v", len(objs), kinds)
	}
	t.Logf("%d objects, %d rules: %v", len(objs), rules, kinds)

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
	objs, err := ProviderRBAC()
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
			// The probe's EndpointSlices are held to the pod network kubeadm
			// publishes; no other policy takes a parameter.
			wantParams := o.Name == rbac.PolicyProbeEndpoints
			if o.Spec.PolicyName != o.Name || !slices.Equal(o.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
				(o.Spec.ParamRef != nil) != wantParams || o.Spec.MatchResources != nil {
				t.Errorf("binding %s: %+v, want the policy of its name, Deny, no narrowing, params only for %s", o.Name, o.Spec, rbac.PolicyProbeEndpoints)
			}
			if wantParams && (o.Spec.ParamRef.Name != "kubeadm-config" || o.Spec.ParamRef.Namespace != "kube-system" ||
				o.Spec.ParamRef.ParameterNotFoundAction == nil || *o.Spec.ParamRef.ParameterNotFoundAction != admissionv1.DenyAction) {
				t.Errorf("binding %s: paramRef %+v, want kube-system/kubeadm-config, Deny when missing", o.Name, o.Spec.ParamRef)
			}
		}
	}
	want := []string{rbac.PolicySecrets, rbac.PolicyNodes, rbac.PolicyProbeEndpoints, rbac.PolicyProbe}
	if !slices.Equal(policyOrder, want) || !slices.Equal(bindingOrder, want) {
		t.Errorf("policies %v, bindings %v: want both %v, in this order", policyOrder, bindingOrder, want)
	}
}
