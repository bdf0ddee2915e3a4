package gmsa

import (
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// newCredentialSpecOutput is the document New-CredentialSpec writes for
// the gMSA WebApp01 of contoso.com, in the shape Microsoft Learn's "Create
// gMSAs for Windows containers" prints (the SID and GUID are examples).
const newCredentialSpecOutput = `{
    "CmsPlugins":  [
                       "ActiveDirectory"
                   ],
    "DomainJoinConfig":  {
                             "Sid":  "S-1-5-21-702590844-1001920913-2680819671",
                             "MachineAccountName":  "WebApp01",
                             "Guid":  "56d9b66c-d746-4f87-bd26-26760cfdca2e",
                             "DnsTreeName":  "contoso.com",
                             "DnsName":  "contoso.com",
                             "NetBiosName":  "CONTOSO"
                         },
    "ActiveDirectoryConfig":  {
                                  "GroupManagedServiceAccounts":  [
                                                                      {
                                                                          "Name":  "WebApp01",
                                                                          "Scope":  "contoso.com"
                                                                      },
                                                                      {
                                                                          "Name":  "WebApp01",
                                                                          "Scope":  "CONTOSO"
                                                                      }
                                                                  ]
                              }
}`

func TestCredentialSpecFromNewCredentialSpec(t *testing.T) {
	spec, err := ParseCredentialSpec([]byte(newCredentialSpecOutput))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatalf("New-CredentialSpec's own output refused: %v", err)
	}
	// Through the GMSACredentialSpec object and back, unchanged.
	obj, err := Object("webapp01", spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "credspec", "DomainJoinConfig", "MachineAccountName"); got != "WebApp01" {
		t.Fatalf("credspec.DomainJoinConfig.MachineAccountName = %q", got)
	}
	if _, found, _ := unstructured.NestedMap(obj.Object, "credspec", "ActiveDirectoryConfig", "HostAccountConfig"); found {
		t.Fatal("an absent HostAccountConfig was written")
	}
	back, err := FromObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Fatalf("round trip changed the spec:\n%+v\n%+v", back, spec)
	}
	if _, err := ParseCredentialSpec([]byte(`{"CmsPlugin": ["ActiveDirectory"]}`)); err == nil || !strings.Contains(err.Error(), "CmsPlugin") {
		t.Fatalf("a misspelt field was accepted: %v", err)
	}
}

func TestCredentialSpecValidateNamesTheField(t *testing.T) {
	base, err := ParseCredentialSpec([]byte(newCredentialSpecOutput))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*CredentialSpec)
		field string
	}{
		{"user SID", func(s *CredentialSpec) { s.DomainJoinConfig.Sid = "S-1-5-21-702590844-1001920913-2680819671-1105" }, "DomainJoinConfig.Sid"},
		{"braced GUID", func(s *CredentialSpec) { s.DomainJoinConfig.Guid = "{56d9b66c-d746-4f87-bd26-26760cfdca2e}" }, "DomainJoinConfig.Guid"},
		{"long account", func(s *CredentialSpec) { s.DomainJoinConfig.MachineAccountName = "WebApplication0001" }, "DomainJoinConfig.MachineAccountName"},
		{"dotted NetBIOS", func(s *CredentialSpec) { s.DomainJoinConfig.NetBiosName = "contoso.com" }, "DomainJoinConfig.NetBiosName"},
		{"bad DNS", func(s *CredentialSpec) { s.DomainJoinConfig.DnsName = "contoso_com" }, "DomainJoinConfig.DnsName"},
		{"other gMSA", func(s *CredentialSpec) { s.ActiveDirectoryConfig.GroupManagedServiceAccounts[1].Name = "Other" }, "GroupManagedServiceAccounts[1].Name"},
		{"other domain", func(s *CredentialSpec) { s.ActiveDirectoryConfig.GroupManagedServiceAccounts[0].Scope = "fabrikam.com" }, "GroupManagedServiceAccounts[0].Scope"},
		{"no gMSA", func(s *CredentialSpec) { s.ActiveDirectoryConfig.GroupManagedServiceAccounts = nil }, "GroupManagedServiceAccounts"},
		{"CCG version", func(s *CredentialSpec) {
			s.ActiveDirectoryConfig.HostAccountConfig = &HostAccountConfig{PortableCcgVersion: "2", PluginGUID: "{859E1386-BDB4-49E8-85C7-3070B13920E1}"}
		}, "HostAccountConfig.PortableCcgVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := base
			spec.ActiveDirectoryConfig.GroupManagedServiceAccounts = append([]ServiceAccountScope(nil), base.ActiveDirectoryConfig.GroupManagedServiceAccounts...)
			tc.edit(&spec)
			err := spec.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.field)
			}
		})
	}
	// A gMSA name with its trailing $ (as Get-ADServiceAccount prints
	// SamAccountName) is the same account.
	spec := base
	spec.DomainJoinConfig.MachineAccountName = "WebApp01$"
	if err := spec.Validate(); err != nil {
		t.Fatalf("trailing $ refused: %v", err)
	}
}

func TestRBACGrantsUseOnTheOneSpec(t *testing.T) {
	role := ClusterRole("webapp01")
	if !GrantsUse(role, "webapp01") {
		t.Fatal("the role made does not grant use")
	}
	if r := role.Rules[0]; !reflect.DeepEqual(r.Verbs, []string{"use"}) || !reflect.DeepEqual(r.ResourceNames, []string{"webapp01"}) {
		t.Fatalf("rule = %+v, want use on webapp01 only", r)
	}
	widened := role.DeepCopy()
	widened.Rules[0].Verbs = append(widened.Rules[0].Verbs, "get")
	if GrantsUse(widened, "webapp01") {
		t.Fatal("a role widened outside Terraform is not drift")
	}
	any := role.DeepCopy()
	any.Rules[0].ResourceNames = nil
	if GrantsUse(any, "webapp01") {
		t.Fatal("a role on every credential spec is not drift")
	}

	accounts := []ServiceAccount{{"web", "iis"}, {"batch", "jobs"}, {"web", "api"}}
	bindings := RoleBindings("webapp01", accounts)
	if len(bindings) != 2 || bindings[0].Namespace != "batch" || bindings[1].Namespace != "web" || len(bindings[1].Subjects) != 2 {
		t.Fatalf("bindings = %+v, want one per namespace", bindings)
	}
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != "gmsa-webapp01-user" || b.Labels[Label] != "webapp01" {
			t.Fatalf("binding %s/%s = %+v", b.Namespace, b.Name, b)
		}
	}
	var listed []rbacv1.RoleBinding
	for _, b := range bindings {
		listed = append(listed, *b)
	}
	listed = append(listed, rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "x", Namespace: "web"}}})
	want := []ServiceAccount{{"batch", "jobs"}, {"web", "api"}, {"web", "iis"}}
	if got := BoundAccounts("webapp01", listed); !reflect.DeepEqual(got, want) {
		t.Fatalf("BoundAccounts = %v, want %v", got, want)
	}
}

func TestInstallationProblems(t *testing.T) {
	none := Installation{}
	p := none.Problems()
	if len(p) != 3 || !strings.Contains(p[0], CRDName) || !strings.Contains(p[1], "MutatingWebhookConfiguration") || !strings.Contains(p[2], "ValidatingWebhookConfiguration") {
		t.Fatalf("Problems() = %q", p)
	}
	old := Installation{CRDVersions: []string{"v1alpha1"}, Mutating: "gmsa", Validating: "gmsa"}
	if p := old.Problems(); len(p) != 1 || !strings.Contains(p[0], "serves v1alpha1 but not v1") {
		t.Fatalf("Problems() = %q", p)
	}
	ok := Installation{CRDVersions: []string{"v1alpha1", "v1"}, Mutating: "gmsa", Validating: "gmsa", ChartVersion: chartVersion(map[string]string{"chart": "gmsa-0.13.0"})}
	if p := ok.Problems(); len(p) != 0 || ok.Version() != "0.13.0" {
		t.Fatalf("Problems() = %q, Version() = %q", p, ok.Version())
	}
	if v := (Installation{}).Version(); v != "unknown" {
		t.Fatalf("Version() without a chart label = %q", v)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"versions": []any{
		map[string]any{"name": "v1alpha1", "served": false}, map[string]any{"name": "v1", "served": true},
	}}}}
	if got := servedVersions(crd); !reflect.DeepEqual(got, []string{"v1"}) {
		t.Fatalf("servedVersions = %v", got)
	}
}
