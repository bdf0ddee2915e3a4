package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/patchlevel"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

type updateStatusModel struct {
	Image          types.String `tfsdk:"image"`
	Folder         types.String `tfsdk:"folder"`
	NamePrefix     types.String `tfsdk:"name_prefix"`
	ImageBuildFull types.String `tfsdk:"image_build_full"`
	ImageUpdates   types.List   `tfsdk:"image_updates"`
	Nodes          types.List   `tfsdk:"nodes"`
	BehindNodes    types.List   `tfsdk:"behind_nodes"`
}

type nodeUpdateStatusModel struct {
	Name             types.String `tfsdk:"name"`
	VMID             types.String `tfsdk:"vm_id"`
	Status           types.String `tfsdk:"status"`
	WindowsBuildFull types.String `tfsdk:"windows_build_full"`
	Updates          types.List   `tfsdk:"updates"`
	MissingUpdates   types.List   `tfsdk:"missing_updates"`
}

var nodeUpdateStatusObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "vm_id": types.StringType, "status": types.StringType, "windows_build_full": types.StringType,
	"updates": types.ListType{ElemType: types.StringType}, "missing_updates": types.ListType{ElemType: types.StringType},
}}

// nodeUpdateStatus is a node found and measured.
type nodeUpdateStatus struct {
	winnode.Found
	Updates []string // the KBs its image recorded, as compared
	patchlevel.Result
}

func (m *updateStatusModel) set(ctx context.Context, image goldenimage.TemplateInfo, target patchlevel.Image, nodes []nodeUpdateStatus, diags *diag.Diagnostics) {
	m.ImageBuildFull = types.StringValue(image.WindowsBuildFull)
	m.ImageUpdates = stringList(target.Updates)
	objs := make([]nodeUpdateStatusModel, 0, len(nodes))
	behind := []string{}
	for _, n := range nodes {
		objs = append(objs, nodeUpdateStatusModel{
			Name:             types.StringValue(n.Name()),
			VMID:             types.StringValue(n.VM.ID()),
			Status:           types.StringValue(string(n.Status)),
			WindowsBuildFull: types.StringValue(n.BuildFull),
			Updates:          stringList(n.Updates),
			MissingUpdates:   stringList(n.Missing),
		})
		if n.Status == patchlevel.Behind {
			behind = append(behind, n.Name())
		}
	}
	list, d := types.ListValueFrom(ctx, nodeUpdateStatusObjectType, objs)
	diags.Append(d...)
	m.Nodes = list
	m.BehindNodes = stringList(behind)
}
