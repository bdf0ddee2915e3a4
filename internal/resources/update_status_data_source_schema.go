package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/patchlevel"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

func (d *updateStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	statuses := fmt.Sprintf("`%s` (its revision is the image's and it lacks none of the image's updates), "+
		"`%s` (its revision is below the image's, or it lacks updates the image installed), "+
		"`%s` (its revision is above the image's: patched in place, or made from a newer image), "+
		"`%s` (another Windows Server release: no update makes one the other; a new pool on an image of that release does) or "+
		"`%s` (neither its kubelet nor an image record gives its revision)",
		patchlevel.Current, patchlevel.Behind, patchlevel.Ahead, patchlevel.OtherRelease, patchlevel.Unknown)
	resp.Schema = schema.Schema{
		MarkdownDescription: "How far the cluster's Windows nodes run behind a golden image: per node, its Windows build with its update " +
			"revision (UBR) and the updates the image installed that the node's own image did not. Reads only vCenter and the Kubernetes " +
			"API, never a guest.",
		Attributes: map[string]schema.Attribute{
			"image": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The golden image to measure against, for example `windows_golden_image.ltsc2022.template_id`: a " +
					"template `windows_golden_image` built, which records its build and updates on the template; another template is refused." + accepts(vsphere.VMKind),
				Validators: []validator.String{vsphereObject(vsphere.VMKind)},
			},
			"folder": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Inventory path of a VM folder, for example `/dc1/vm/k8s-windows`: only nodes whose VM is in it or its " +
					"subfolders. Defaults to the whole inventory.",
			},
			"name_prefix": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only nodes whose name starts with it, for example a pool's `name_prefix`.",
			},
			"image_build_full": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The image's Windows build with its update revision, for example `10.0.20348.4466`.",
			},
			"image_updates": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "The KBs the image installed, in order (its `installed_updates`).",
			},
			"nodes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The Windows nodes found, sorted by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":   schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
					"vm_id":  schema.StringAttribute{Computed: true, MarkdownDescription: "Managed object id of the node's VM."},
					"status": schema.StringAttribute{Computed: true, MarkdownDescription: "The node against the image: " + statuses + "."},
					"windows_build_full": schema.StringAttribute{Computed: true, MarkdownDescription: "The node's build with its update " +
						"revision: its kubelet's `kernelVersion`, else the one its golden image recorded; empty when neither gives one."},
					"updates": schema.ListAttribute{ElementType: types.StringType, Computed: true,
						MarkdownDescription: "The KBs the node's golden image installed (empty for a node not made from one)."},
					"missing_updates": schema.ListAttribute{ElementType: types.StringType, Computed: true,
						MarkdownDescription: "The image's KBs the node's image did not install, in the image's order. A node patched in place " +
							"lists them too: its `status` (by revision) tells whether it has their fixes."},
				}},
			},
			"behind_nodes": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "Names of the nodes whose `status` is `" + string(patchlevel.Behind) + "`: empty when the image " +
					"has reached every node of its release.",
			},
		},
	}
}
