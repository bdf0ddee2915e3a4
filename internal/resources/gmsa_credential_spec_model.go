package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/gmsa"
)

type gmsaCredentialSpecModel struct {
	ID                          types.String               `tfsdk:"id"`
	Name                        types.String               `tfsdk:"name"`
	CmsPlugins                  types.List                 `tfsdk:"cms_plugins"`
	DomainJoinConfig            *gmsaDomainJoinConfigModel `tfsdk:"domain_join_config"`
	GroupManagedServiceAccounts []gmsaAccountScopeModel    `tfsdk:"group_managed_service_accounts"`
	HostAccountConfig           *gmsaHostAccountModel      `tfsdk:"host_account_config"`
	ServiceAccounts             []gmsaServiceAccountModel  `tfsdk:"service_accounts"`
	ClusterRole                 types.String               `tfsdk:"cluster_role"`
	WebhookVersion              types.String               `tfsdk:"webhook_version"`
}

type gmsaDomainJoinConfigModel struct {
	Sid                types.String `tfsdk:"sid"`
	MachineAccountName types.String `tfsdk:"machine_account_name"`
	GUID               types.String `tfsdk:"guid"`
	DNSTreeName        types.String `tfsdk:"dns_tree_name"`
	DNSName            types.String `tfsdk:"dns_name"`
	NetBiosName        types.String `tfsdk:"netbios_name"`
}

type gmsaAccountScopeModel struct {
	Name  types.String `tfsdk:"name"`
	Scope types.String `tfsdk:"scope"`
}

type gmsaHostAccountModel struct {
	PortableCcgVersion types.String `tfsdk:"portable_ccg_version"`
	PluginGUID         types.String `tfsdk:"plugin_guid"`
	PluginInput        types.String `tfsdk:"plugin_input"`
}

type gmsaServiceAccountModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
}

// known reports whether every value the credential spec is made of is
// known, so that it can be checked at plan.
func (m *gmsaCredentialSpecModel) known() bool {
	if m.Name.IsUnknown() || m.CmsPlugins.IsUnknown() || m.DomainJoinConfig == nil {
		return false
	}
	d := m.DomainJoinConfig
	vals := []types.String{d.Sid, d.MachineAccountName, d.GUID, d.DNSTreeName, d.DNSName, d.NetBiosName}
	for _, a := range m.GroupManagedServiceAccounts {
		vals = append(vals, a.Name, a.Scope)
	}
	if h := m.HostAccountConfig; h != nil {
		vals = append(vals, h.PortableCcgVersion, h.PluginGUID, h.PluginInput)
	}
	for _, v := range vals {
		if v.IsUnknown() {
			return false
		}
	}
	for _, v := range m.CmsPlugins.Elements() {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// spec converts the model into what package gmsa writes.
func (m *gmsaCredentialSpecModel) spec(ctx context.Context, diags *diag.Diagnostics) gmsa.Spec {
	var plugins []string
	diags.Append(m.CmsPlugins.ElementsAs(ctx, &plugins, false)...)
	cs := gmsa.CredentialSpec{CmsPlugins: plugins}
	if d := m.DomainJoinConfig; d != nil {
		cs.DomainJoinConfig = gmsa.DomainJoinConfig{
			Sid: d.Sid.ValueString(), MachineAccountName: d.MachineAccountName.ValueString(), Guid: d.GUID.ValueString(),
			DnsTreeName: d.DNSTreeName.ValueString(), DnsName: d.DNSName.ValueString(), NetBiosName: d.NetBiosName.ValueString(),
		}
	}
	for _, a := range m.GroupManagedServiceAccounts {
		cs.ActiveDirectoryConfig.GroupManagedServiceAccounts = append(cs.ActiveDirectoryConfig.GroupManagedServiceAccounts,
			gmsa.ServiceAccountScope{Name: a.Name.ValueString(), Scope: a.Scope.ValueString()})
	}
	if h := m.HostAccountConfig; h != nil {
		cs.ActiveDirectoryConfig.HostAccountConfig = &gmsa.HostAccountConfig{
			PortableCcgVersion: h.PortableCcgVersion.ValueString(), PluginGUID: h.PluginGUID.ValueString(), PluginInput: h.PluginInput.ValueString(),
		}
	}
	spec := gmsa.Spec{Name: m.Name.ValueString(), CredentialSpec: cs}
	for _, sa := range m.ServiceAccounts {
		spec.ServiceAccounts = append(spec.ServiceAccounts, gmsa.ServiceAccount{Namespace: sa.Namespace.ValueString(), Name: sa.Name.ValueString()})
	}
	return spec
}

// fromCluster sets the model to what the cluster holds: drift in the
// credential spec, the role or the bindings shows as a diff. The
// ServiceAccounts keep the configuration's order where the cluster has the
// same set, since the bindings hold no order.
func (m *gmsaCredentialSpecModel) fromCluster(name string, found *gmsa.Found) {
	m.ID, m.Name = types.StringValue(name), types.StringValue(name)
	m.ClusterRole = types.StringValue(gmsa.RoleName(name))
	cs := found.CredentialSpec
	m.CmsPlugins = stringList(cs.CmsPlugins)
	d := cs.DomainJoinConfig
	m.DomainJoinConfig = &gmsaDomainJoinConfigModel{
		Sid: types.StringValue(d.Sid), MachineAccountName: types.StringValue(d.MachineAccountName), GUID: types.StringValue(d.Guid),
		DNSTreeName: types.StringValue(d.DnsTreeName), DNSName: types.StringValue(d.DnsName), NetBiosName: types.StringValue(d.NetBiosName),
	}
	m.GroupManagedServiceAccounts = nil
	for _, a := range cs.ActiveDirectoryConfig.GroupManagedServiceAccounts {
		m.GroupManagedServiceAccounts = append(m.GroupManagedServiceAccounts, gmsaAccountScopeModel{Name: types.StringValue(a.Name), Scope: types.StringValue(a.Scope)})
	}
	m.HostAccountConfig = nil
	if h := cs.ActiveDirectoryConfig.HostAccountConfig; h != nil {
		m.HostAccountConfig = &gmsaHostAccountModel{
			PortableCcgVersion: types.StringValue(h.PortableCcgVersion), PluginGUID: types.StringValue(h.PluginGUID), PluginInput: types.StringValue(h.PluginInput),
		}
	}
	have := map[gmsa.ServiceAccount]bool{}
	for _, sa := range found.ServiceAccounts {
		have[sa] = true
	}
	var kept []gmsaServiceAccountModel
	same := len(m.ServiceAccounts) == len(found.ServiceAccounts)
	for _, sa := range m.ServiceAccounts {
		if !have[gmsa.ServiceAccount{Namespace: sa.Namespace.ValueString(), Name: sa.Name.ValueString()}] {
			same = false
		}
		kept = append(kept, sa)
	}
	if same {
		m.ServiceAccounts = kept
		return
	}
	m.ServiceAccounts = nil
	for _, sa := range found.ServiceAccounts {
		m.ServiceAccounts = append(m.ServiceAccounts, gmsaServiceAccountModel{Namespace: types.StringValue(sa.Namespace), Name: types.StringValue(sa.Name)})
	}
}
