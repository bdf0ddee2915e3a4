package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

func NewClusterDataSource() datasource.DataSource { return &clusterDataSource{} }

type clusterDataSource struct {
	clients *clients.Clients
}

var _ datasource.DataSourceWithConfigure = (*clusterDataSource)(nil)

func (d *clusterDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (d *clusterDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var model clusterModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	k := kubeClient(ctx, d.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	opts := model.checkOptions(ctx, &resp.Diagnostics)
	cluster, err := k.DiscoverCluster(ctx)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading Windows cluster (%s)", k.Host()), err.Error())
		return
	}
	checks := cluster.Checks(opts)
	tflog.Info(ctx, "cluster readiness checks", map[string]any{"checks": len(checks), "ready": kube.Ready(checks)})
	model.fromCluster(ctx, cluster, checks, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
