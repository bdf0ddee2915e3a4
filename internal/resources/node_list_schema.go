package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"

	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

func (r *nodeListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "Finds the Windows nodes of the cluster among the vSphere VMs, to import them as `windows_node`. " +
			"Needs Terraform 1.14 or later.",
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
