package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
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

type nodeListConfig struct {
	Folder          types.String `tfsdk:"folder"`
	NamePrefix      types.String `tfsdk:"name_prefix"`
	IncludeUnjoined types.Bool   `tfsdk:"include_unjoined"`
}

func (r *nodeListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (r *nodeListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "Finds the Windows nodes of the cluster among the vSphere VMs, to import them as `windows_node`: " +
			"every VM (never a template) that backs a Node labelled `kubernetes.io/os=windows` — the Node's `spec.providerID` is " +
			"`vsphere://<the VM's BIOS UUID>` (set by this provider or by the vSphere cloud provider), or, for a Node without a " +
			"providerID (joined by hand), the Node is named like the VM or like its guest's host name. With `include_unjoined`, " +
			"also the clones of a `windows_golden_image` that back no Node. Each result's identity is the VM's instance UUID; " +
			"its resource is the state an import yields (the node is named after its Node). Needs Terraform 1.14 or later.",
		Attributes: map[string]listschema.Attribute{
			"folder": listschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Inventory path of a VM folder, for example `/dc1/vm/k8s-windows`: only VMs in it and its " +
					"subfolders. Defaults to the whole inventory.",
			},
			"name_prefix": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only nodes whose name (the Node's, else the VM's in lower case) starts with it.",
			},
			"include_unjoined": listschema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Also list VMs cloned from a `windows_golden_image` (they carry its " +
					"`" + winnode.ImageBuildKey + "` record) that back no Node: nodes that never joined, or whose Node was " +
					"deleted (the first apply after their import joins them). Defaults to `false`.",
			},
		},
	}
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
		if vsphere.IsNotFound(err) && cfg.Folder.ValueString() != "" {
			diags.AddAttributeError(path.Root("folder"), "Folder not found",
				fmt.Sprintf("folder: %v. Give the inventory path of a VM folder, for example /dc1/vm/k8s-windows, or omit folder to search the whole inventory.", err))
		} else {
			diags.AddError("Listing Windows nodes", err.Error())
		}
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
				result.Diagnostics.Append(listedNodeState(ctx, f, result.Resource)...)
			}
			if !push(result) {
				return
			}
		}
	}
}

// displayName says which VM and why it was found.
func displayName(f winnode.Found) string {
	switch f.MatchedBy {
	case winnode.MatchedByProviderID:
		return fmt.Sprintf("%s (VM %s, Node providerID %s)", f.Name(), f.InventoryPath, f.Node.Spec.ProviderID)
	case winnode.MatchedByName:
		return fmt.Sprintf("%s (VM %s, Node without providerID)", f.Name(), f.InventoryPath)
	default:
		return fmt.Sprintf("%s (VM %s, no Node: not joined)", f.Name(), f.InventoryPath)
	}
}

// stateData is a list result's resource (*tfsdk.Resource).
type stateData interface {
	attributeSetter
	Get(ctx context.Context, target any) diag.Diagnostics
	Set(ctx context.Context, v any) diag.Diagnostics
}

// listedNodeState is the state an import of the VM yields followed by its
// first Read: the import's attributes, then what the Read records of the
// VM and the Node (which Discover has just read).
func listedNodeState(ctx context.Context, f winnode.Found, res stateData) diag.Diagnostics {
	diags := setImported(ctx, f, res)
	if diags.HasError() {
		return diags
	}
	var m nodeModel
	diags.Append(res.Get(ctx, &m)...)
	if diags.HasError() {
		return diags
	}
	m.refresh(winnode.Observed{VM: f.VM, Node: f.Node})
	diags.Append(res.Set(ctx, &m)...)
	return diags
}
