package gmsa

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The GMSACredentialSpec CRD's coordinates (windows-gmsa gmsa-crd.yml: group
// windows.k8s.io, served as v1 since the CRD's v1 version; v1alpha1 is
// deprecated and not stored).
const (
	Group      = "windows.k8s.io"
	Version    = "v1"
	Kind       = "GMSACredentialSpec"
	Resource   = "gmsacredentialspecs"
	CRDName    = Resource + "." + Group
	VerbUse    = "use"
	credspecKV = "credspec"
)

// GVR is the GMSACredentialSpec resource at the version this package writes.
var GVR = schema.GroupVersionResource{Group: Group, Version: Version, Resource: Resource}

// Label marks the ClusterRole and RoleBindings made for one credential
// spec, with its name as the value, so that Read finds every binding
// (whatever its namespace) and Update removes those no longer wanted.
const Label = "windows.k8s.io/gmsa-credential-spec"

// managedBy and fieldManager are the provider's marks (kube.LabelManagedBy,
// kube.FieldManager), repeated here so the object builders need no client.
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	fieldManager   = "terraform-provider-windows"
)

// ServiceAccount is a ServiceAccount allowed to `use` the credential spec:
// its pods may name it in gmsaCredentialSpecName.
type ServiceAccount struct {
	Namespace, Name string
}

func (s ServiceAccount) String() string { return s.Namespace + "/" + s.Name }

// Spec is what the windows_gmsa_credential_spec resource manages.
type Spec struct {
	Name            string
	CredentialSpec  CredentialSpec
	ServiceAccounts []ServiceAccount
}

// RoleName is the ClusterRole (and the RoleBindings) granting `use` on the
// credential spec name, as the Kubernetes guide "Configure GMSA for
// Windows Pods and containers" names its example role after the spec.
func RoleName(name string) string { return "gmsa-" + name + "-user" }

// Object is the GMSACredentialSpec named name holding spec.
func Object(name string, spec CredentialSpec) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var content map[string]any
	if err := json.Unmarshal(raw, &content); err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Group + "/" + Version,
		"kind":       Kind,
		"metadata":   map[string]any{"name": name, "labels": map[string]any{managedByLabel: fieldManager}},
		credspecKV:   content,
	}}
	return obj, nil
}

// FromObject reads the credential spec a GMSACredentialSpec holds.
func FromObject(obj *unstructured.Unstructured) (CredentialSpec, error) {
	content, ok := obj.Object[credspecKV]
	if !ok {
		return CredentialSpec{}, fmt.Errorf("GMSACredentialSpec %q has no %s field", obj.GetName(), credspecKV)
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return CredentialSpec{}, err
	}
	spec, err := ParseCredentialSpec(raw)
	if err != nil {
		return CredentialSpec{}, fmt.Errorf("GMSACredentialSpec %q: %w", obj.GetName(), err)
	}
	return spec, nil
}

// ClusterRole grants `use` on the one GMSACredentialSpec name: the verb the
// windows-gmsa webhook checks for the pod's ServiceAccount
// (admission-webhook kube_client.go isAuthorizedToUseCredSpec, a
// LocalSubjectAccessReview of verb use, resource gmsacredentialspecs, the
// spec's name). Nothing else: no get, so the role does not let a pod's
// owner read the spec either.
func ClusterRole(name string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: RoleName(name), Labels: ownLabels(name)},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{Group}, Resources: []string{Resource},
			ResourceNames: []string{name}, Verbs: []string{VerbUse},
		}},
	}
}

// RoleBindings binds the ClusterRole to the ServiceAccounts, one RoleBinding
// per namespace: the webhook's review is namespaced (a
// LocalSubjectAccessReview in the pod's namespace), so a RoleBinding is
// enough and grants nothing in other namespaces, where a
// ClusterRoleBinding would.
func RoleBindings(name string, accounts []ServiceAccount) []*rbacv1.RoleBinding {
	byNS := map[string][]rbacv1.Subject{}
	for _, sa := range accounts {
		byNS[sa.Namespace] = append(byNS[sa.Namespace], rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace})
	}
	var out []*rbacv1.RoleBinding
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		out = append(out, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: RoleName(name), Namespace: ns, Labels: ownLabels(name)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RoleName(name)},
			Subjects:   byNS[ns],
		})
	}
	return out
}

// BoundAccounts lists the ServiceAccounts bindings give the role to, sorted;
// subjects that are no ServiceAccount (a user, a group) are left out, since
// the resource never writes them.
func BoundAccounts(name string, bindings []rbacv1.RoleBinding) []ServiceAccount {
	var out []ServiceAccount
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != RoleName(name) {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind {
				ns := s.Namespace
				if ns == "" {
					ns = b.Namespace
				}
				out = append(out, ServiceAccount{Namespace: ns, Name: s.Name})
			}
		}
	}
	slices.SortFunc(out, func(a, b ServiceAccount) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// GrantsUse reports whether role grants `use` on the credential spec name
// and nothing else: a role edited outside Terraform (another verb, another
// name, a wildcard) is drift.
func GrantsUse(role *rbacv1.ClusterRole, name string) bool {
	want := ClusterRole(name).Rules
	if len(role.Rules) != len(want) {
		return false
	}
	r, w := role.Rules[0], want[0]
	return slices.Equal(r.APIGroups, w.APIGroups) && slices.Equal(r.Resources, w.Resources) &&
		slices.Equal(r.ResourceNames, w.ResourceNames) && slices.Equal(r.Verbs, w.Verbs) && len(r.NonResourceURLs) == 0
}

func ownLabels(name string) map[string]string {
	return map[string]string{managedByLabel: fieldManager, Label: name}
}
