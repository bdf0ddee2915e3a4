package resources

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/gmsa"
)

func gmsaModel() gmsaCredentialSpecModel {
	s := types.StringValue
	return gmsaCredentialSpecModel{
		Name: s("webapp01"), CmsPlugins: stringList([]string{"ActiveDirectory"}),
		DomainJoinConfig: &gmsaDomainJoinConfigModel{
			Sid: s("S-1-5-21-702590844-1001920913-2680819671"), MachineAccountName: s("WebApp01"), GUID: s("56d9b66c-d746-4f87-bd26-26760cfdca2e"),
			DNSTreeName: s("contoso.com"), DNSName: s("contoso.com"), NetBiosName: s("CONTOSO"),
		},
		GroupManagedServiceAccounts: []gmsaAccountScopeModel{{s("WebApp01"), s("contoso.com")}, {s("WebApp01"), s("CONTOSO")}},
		ServiceAccounts:             []gmsaServiceAccountModel{{s("web"), s("iis")}, {s("batch"), s("jobs")}},
	}
}

// The model becomes New-CredentialSpec's document field for field, and the
// cluster's answer comes back into the same model: the ServiceAccounts in
// the configuration's order when the cluster binds the same set, the
// cluster's set (drift) when not.
func TestGMSAModelRoundTrip(t *testing.T) {
	var diags diag.Diagnostics
	m := gmsaModel()
	spec := m.spec(context.Background(), &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if err := spec.CredentialSpec.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := spec.CredentialSpec.DomainJoinConfig; d.Guid != "56d9b66c-d746-4f87-bd26-26760cfdca2e" || d.NetBiosName != "CONTOSO" {
		t.Fatalf("DomainJoinConfig = %+v", d)
	}
	found := &gmsa.Found{CredentialSpec: spec.CredentialSpec,
		ServiceAccounts: []gmsa.ServiceAccount{{Namespace: "batch", Name: "jobs"}, {Namespace: "web", Name: "iis"}}}
	back := gmsaModel()
	back.fromCluster("webapp01", found)
	if !reflect.DeepEqual(back.ServiceAccounts, m.ServiceAccounts) || back.ClusterRole.ValueString() != "gmsa-webapp01-user" {
		t.Fatalf("same set read back as %v, role %s", back.ServiceAccounts, back.ClusterRole)
	}
	if !reflect.DeepEqual(back.DomainJoinConfig, m.DomainJoinConfig) || !reflect.DeepEqual(back.GroupManagedServiceAccounts, m.GroupManagedServiceAccounts) {
		t.Fatalf("credential spec read back as %+v %+v", back.DomainJoinConfig, back.GroupManagedServiceAccounts)
	}
	// A binding gone (or a role widened: Find reports none bound).
	found.ServiceAccounts = found.ServiceAccounts[:1]
	drift := gmsaModel()
	drift.fromCluster("webapp01", found)
	if len(drift.ServiceAccounts) != 1 || drift.ServiceAccounts[0].Name.ValueString() != "jobs" {
		t.Fatalf("drift read back as %v", drift.ServiceAccounts)
	}
	// Unknown parts keep the plan from validating what it cannot know.
	unknown := gmsaModel()
	unknown.DomainJoinConfig.Sid = types.StringUnknown()
	if unknown.known() {
		t.Fatal("a credential spec with an unknown SID counted as known")
	}
}
