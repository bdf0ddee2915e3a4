package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/gmsa"
)

func (r *gmsaCredentialSpecResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Required: true, MarkdownDescription: desc, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A `windows.k8s.io/v1` GMSACredentialSpec of kubernetes-sigs/windows-gmsa, which pods name in " +
			"`gmsaCredentialSpecName` to run as a group Managed Service Account, with a ClusterRole granting `use` on it and a " +
			"RoleBinding per namespace for `service_accounts`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The GMSACredentialSpec name.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the GMSACredentialSpec (cluster-scoped), which pods set as `gmsaCredentialSpecName`. " +
					"Changing it replaces the credential spec and its role.",
				Validators:    []validator.String{dnsSubdomain()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"cms_plugins": schema.ListAttribute{
				ElementType: types.StringType, Optional: true, Computed: true,
				Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{types.StringValue(gmsa.ActiveDirectoryPlugin)})),
				MarkdownDescription: "`CmsPlugins`. Defaults to `[\"" + gmsa.ActiveDirectoryPlugin + "\"]`, the one plugin `New-CredentialSpec` writes.",
				Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
			},
			"domain_join_config": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "`DomainJoinConfig`: the domain and the gMSA, as `New-CredentialSpec` reads them from Active Directory.",
				Attributes: map[string]schema.Attribute{
					"sid":                  str("`Sid`: the domain's SID, `(Get-ADDomain).DomainSID` (`S-1-5-21-` and three numbers; not the gMSA's own SID)."),
					"machine_account_name": str("`MachineAccountName`: the gMSA's account name, without the trailing `$` (at most 15 characters)."),
					"guid":                 str("`Guid`: the domain's GUID, `(Get-ADDomain).ObjectGUID`, without braces."),
					"dns_tree_name":        str("`DnsTreeName`: the forest root's DNS name, `(Get-ADDomain).Forest`."),
					"dns_name":             str("`DnsName`: the domain's DNS name, `(Get-ADDomain).DNSRoot`."),
					"netbios_name":         str("`NetBiosName`: the domain's NetBIOS name, `(Get-ADDomain).NetBIOSName`."),
				},
			},
			"group_managed_service_accounts": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "`ActiveDirectoryConfig.GroupManagedServiceAccounts`: the gMSA, once per scope. `New-CredentialSpec` writes two entries, " +
					"scoped to the DNS name and to the NetBIOS name; each `name` must be `domain_join_config.machine_account_name`.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":  str("`Name`: the gMSA's account name."),
					"scope": str("`Scope`: the domain's DNS or NetBIOS name."),
				}},
			},
			"host_account_config": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "`ActiveDirectoryConfig.HostAccountConfig`: only for nodes that are not domain-joined, the Container Credential Guard " +
					"plugin that fetches the gMSA's credentials (`New-CredentialSpec -HostAccountConfig`).",
				Attributes: map[string]schema.Attribute{
					"portable_ccg_version": str("`PortableCcgVersion`: `\"1\"`."),
					"plugin_guid":          str("`PluginGUID`: the plugin's COM class id, in braces."),
					"plugin_input":         str("`PluginInput`: the plugin's input; its format is the plugin's."),
				},
			},
			"service_accounts": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "ServiceAccounts allowed to `use` the credential spec: their pods may name it. One RoleBinding per namespace " +
					"(named like the ClusterRole) binds them; the windows-gmsa webhook checks the pod's ServiceAccount in the pod's namespace.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"namespace": schema.StringAttribute{Required: true, MarkdownDescription: "Namespace of the ServiceAccount.", Validators: []validator.String{dnsLabel()}},
					"name":      schema.StringAttribute{Required: true, MarkdownDescription: "Name of the ServiceAccount.", Validators: []validator.String{dnsSubdomain()}},
				}},
			},
			"cluster_role": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The ClusterRole granting `use` on this credential spec only (`gmsa-<name>-user`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"webhook_version": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Version of the windows-gmsa chart the webhook was installed from (its configurations' `chart` label), " +
					"`unknown` when installed by `deploy-gmsa-webhook.sh`, which labels none. Read at each plan, and by the first refresh of an imported credential spec.",
			},
		},
	}
}

func (r *gmsaCredentialSpecResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"name": identityschema.StringAttribute{RequiredForImport: true,
			Description: "Name of the GMSACredentialSpec (the import ID)."},
	}}
}
