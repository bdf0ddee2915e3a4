package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/patchlevel"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// NewUpdateStatusDataSource tells how far the Windows nodes run behind a
// golden image (internal/patchlevel).
func NewUpdateStatusDataSource() datasource.DataSource { return &updateStatusDataSource{} }

type updateStatusDataSource struct {
	clients *clients.Clients
}

var _ datasource.DataSourceWithConfigure = (*updateStatusDataSource)(nil)

func (d *updateStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_update_status"
}

func (d *updateStatusDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *updateStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = vsphereOperation(ctx, "windows_update_status", "read")
	var model updateStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	vc := vsphereClient(ctx, d.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	m := (&nodeResource{clients: d.clients}).managerOf(ctx, vc, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	// The nodes first: a folder that does not exist is refused whatever the
	// image.
	found, err := m.Discover(ctx, winnode.DiscoverOptions{Folder: model.Folder.ValueString(), NamePrefix: model.NamePrefix.ValueString()})
	if err != nil {
		addDiscoverError(&resp.Diagnostics, err, model.Folder.ValueString())
		return
	}
	image, err := goldenimage.FindTemplate(ctx, vc, model.Image.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("image"), "Golden image not found",
			fmt.Sprintf("image: %v. Give the template of a windows_golden_image, for example windows_golden_image.ltsc2022.template_id.", err))
		return
	}
	if image.WindowsBuildFull == "" {
		resp.Diagnostics.AddAttributeError(path.Root("image"), "Not a golden image",
			fmt.Sprintf("image: template %s records no Windows build: it was not built by windows_golden_image, so nothing tells which updates it has. "+
				"Compare against the template_id of a windows_golden_image.", image.VM.Path))
		return
	}
	target := patchlevel.Image{BuildFull: image.WindowsBuildFull, Updates: goldenimage.InstalledUpdates(image.Manifest)}
	nodes := make([]nodeUpdateStatus, 0, len(found))
	for _, f := range found {
		node := patchlevel.Node{
			KernelVersion:  f.Node.Status.NodeInfo.KernelVersion,
			ImageBuildFull: goldenimage.RecordedBuild(f.VM.ExtraConfig),
			ImageUpdates:   goldenimage.RecordedUpdates(f.VM.ExtraConfig),
		}
		nodes = append(nodes, nodeUpdateStatus{Found: f, Updates: node.ImageUpdates, Result: patchlevel.Compare(target, node)})
	}
	model.set(ctx, image, target, nodes, &resp.Diagnostics)
	tflog.Info(ctx, "windows update status", map[string]any{"image": image.VM.Path, "nodes": len(nodes)})
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
