package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// NewNodeList is the list resource of windows_node: what `terraform query`
// (Terraform 1.14 and later) runs to find the Windows VMs that are nodes of
// the cluster, with an import identity for each and, on request, the state
// an import of it yields (from which -generate-config-out writes the
// configuration).
func NewNodeList() list.ListResource { return &nodeListResource{} }

type nodeListResource struct {
	clients *clients.Clients
}

var _ list.ListResourceWithConfigure = (*nodeListResource)(nil)

func (r *nodeListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (r *nodeListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	ctx = vsphereOperation(ctx, "windows_node", "list")
	var diags diag.Diagnostics
	var cfg nodeListConfig
	diags.Append(req.Config.Get(ctx, &cfg)...)
	m := (&nodeResource{clients: r.clients}).manager(ctx, &diags)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	found, err := m.Discover(ctx, winnode.DiscoverOptions{
		Folder: cfg.Folder.ValueString(), NamePrefix: cfg.NamePrefix.ValueString(), IncludeUnjoined: cfg.IncludeUnjoined.ValueBool(),
	})
	if err != nil {
		addDiscoverError(&diags, err, cfg.Folder.ValueString())
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		for i, f := range found {
			if req.Limit > 0 && int64(i) >= req.Limit {
				return
			}
			result := req.NewListResult(ctx)
			result.DisplayName = displayName(f)
			result.Diagnostics.Append(result.Identity.Set(ctx, nodeIdentity{InstanceUUID: types.StringValue(f.VM.InstanceUUID)})...)
			if req.IncludeResource {
				result.Diagnostics.Append(listedNodeState(ctx, m, f, result.Resource)...)
			}
			if !push(result) {
				return
			}
		}
	}
}
