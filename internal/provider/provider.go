// Package provider is the `windows` Terraform provider: its configuration
// schema, the clients it hands to resources, and the list of resources, data
// sources and functions it serves.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/functions"
	"github.com/wincluster/terraform-provider-windows/internal/resources"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/wincluster/windows"

// New returns a constructor for the provider at the given release version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &windowsProvider{version: version} }
}

type windowsProvider struct {
	version string
}

var (
	_ provider.Provider                   = (*windowsProvider)(nil)
	_ provider.ProviderWithFunctions      = (*windowsProvider)(nil)
	_ provider.ProviderWithListResources  = (*windowsProvider)(nil)
	_ provider.ProviderWithValidateConfig = (*windowsProvider)(nil)
)

func (p *windowsProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "windows"
	resp.Version = p.version
}

func (p *windowsProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Turns VMware vSphere and Windows Server into Kubernetes Windows worker nodes. " +
			"Every setting can also come from the environment, so Terraform Cloud workspaces and CI need no files; " +
			"clients are created on first use, so a configuration that only manages Kubernetes objects needs no vSphere settings.",
		Blocks: map[string]schema.Block{
			"vsphere":    vsphereBlock(),
			"kubernetes": kubernetesBlock(),
			// Active Directory: the join account (addirectory).
			"active_directory": activeDirectoryBlock(),
		},
	}
}

// Configure resolves the settings. At plan some may be unknown (a cluster
// endpoint from a resource of the same run). A CLI that allows deferred
// actions is asked to defer everything this provider plans or reads until
// they are known (the framework then answers every resource and data source
// with a deferral); other CLIs get clients that refuse to connect and say
// which setting is unknown. Either way nothing is taken from the environment
// in place of an unknown value. At apply Terraform configures the provider
// again, with known values.
func (p *windowsProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	unknown := unknownAttributes(req.Config.Raw)
	if len(unknown) > 0 {
		tflog.Info(ctx, "provider settings unknown until apply", map[string]any{"attributes": unknown, "deferral_allowed": req.ClientCapabilities.DeferralAllowed})
		if req.ClientCapabilities.DeferralAllowed {
			resp.Deferred = &provider.Deferred{Reason: provider.DeferredReasonProviderConfigUnknown}
		}
	}
	var model providerModel
	resp.Diagnostics.Append(withoutUnknownBlocks(req.Config).Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := model.clients(ctx, unknown, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.ResourceData = c
	resp.DataSourceData = c
	resp.EphemeralResourceData = c
	resp.ListResourceData = c
}

// ValidateConfig rejects contradictory settings at plan (config.go).
func (p *windowsProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var model providerModel
	resp.Diagnostics.Append(withoutUnknownBlocks(req.Config).Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateKubernetes(model.Kubernetes, &resp.Diagnostics)
	if vs := model.VSphere; vs != nil && !vs.ProvisioningUnits.IsNull() && !vs.ProvisioningUnits.IsUnknown() {
		if msg := validProvisioningUnits(vs.ProvisioningUnits.ValueInt64()); msg != "" {
			resp.Diagnostics.AddAttributeError(path.Root("vsphere").AtName("provisioning_units_per_host"), "Invalid provisioning_units_per_host", msg)
		}
	}
}

func (p *windowsProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		resources.NewRuntimeClass,
		resources.NewGMSACredentialSpec,
		resources.NewGoldenImage,
		resources.NewNode,
		resources.NewNodePool,
		resources.NewLinuxDaemonSetGuard,
		resources.NewNodeNetworking,
	}
}

// ListResources are what `terraform query` (Terraform 1.14 and later) runs.
func (p *windowsProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		resources.NewNodeList,
	}
}

func (p *windowsProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		resources.NewClusterDataSource,
		resources.NewUpdateStatusDataSource,
	}
}

func (p *windowsProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{
		functions.NewBuildNumber,
	}
}
