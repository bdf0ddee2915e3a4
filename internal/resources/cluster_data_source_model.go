package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

type clusterModel struct {
	KubernetesVersion  types.String `tfsdk:"kubernetes_version"`
	WindowsBuild       types.String `tfsdk:"windows_build"`
	SkipChecks         types.Set    `tfsdk:"skip_checks"`
	APIEndpoint        types.String `tfsdk:"api_endpoint"`
	ServerVersion      types.String `tfsdk:"server_version"`
	ServiceCIDRs       types.List   `tfsdk:"service_cidrs"`
	ClusterCIDRs       types.List   `tfsdk:"cluster_cidrs"`
	DNSServiceIP       types.String `tfsdk:"dns_service_ip"`
	ClusterDomain      types.String `tfsdk:"cluster_domain"`
	Sources            types.Map    `tfsdk:"sources"`
	NodeCIDRAllocation types.Bool   `tfsdk:"node_cidr_allocation"`
	CNI                types.Object `tfsdk:"cni"`
	WindowsNodes       types.List   `tfsdk:"windows_nodes"`
	Checks             types.List   `tfsdk:"checks"`
	Ready              types.Bool   `tfsdk:"ready"`
}

type cniModel struct {
	Name    types.String `tfsdk:"name"`
	Source  types.String `tfsdk:"source"`
	Backend types.String `tfsdk:"backend"`
	VNI     types.Int64  `tfsdk:"vni"`
	Port    types.Int64  `tfsdk:"port"`
}

var cniObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "source": types.StringType, "backend": types.StringType, "vni": types.Int64Type, "port": types.Int64Type,
}}

type windowsNodeModel struct {
	Name           types.String `tfsdk:"name"`
	WindowsBuild   types.String `tfsdk:"windows_build"`
	Ready          types.Bool   `tfsdk:"ready"`
	KubeletVersion types.String `tfsdk:"kubelet_version"`
}

var windowsNodeObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "windows_build": types.StringType, "ready": types.BoolType, "kubelet_version": types.StringType,
}}

type checkModel struct {
	ID      types.String `tfsdk:"id"`
	Status  types.String `tfsdk:"status"`
	Message types.String `tfsdk:"message"`
	Remedy  types.String `tfsdk:"remedy"`
}

var checkObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"id": types.StringType, "status": types.StringType, "message": types.StringType, "remedy": types.StringType,
}}

// checkOptions converts the arguments into the plain options of kube.RunChecks.
func (m clusterModel) checkOptions(ctx context.Context, diags *diag.Diagnostics) kube.CheckOptions {
	opts := kube.CheckOptions{KubernetesVersion: m.KubernetesVersion.ValueString(), WindowsBuild: m.WindowsBuild.ValueString()}
	if !m.SkipChecks.IsNull() && !m.SkipChecks.IsUnknown() {
		diags.Append(m.SkipChecks.ElementsAs(ctx, &opts.Skip, false)...)
	}
	return opts
}

func (m *clusterModel) fromCluster(ctx context.Context, cl *kube.Cluster, checks []kube.Check, diags *diag.Diagnostics) {
	n := cl.Network
	m.APIEndpoint = types.StringValue(n.APIEndpoint)
	m.ServerVersion = types.StringValue(n.ServerVersion)
	m.ServiceCIDRs = stringList(n.ServiceCIDRs)
	m.ClusterCIDRs = stringList(n.ClusterCIDRs)
	m.DNSServiceIP = nullIfEmpty(n.DNSServiceIP)
	m.ClusterDomain = types.StringValue(n.ClusterDomain)
	sources := map[string]string{}
	for key, src := range map[string]string{
		"service_cidrs": n.Sources.ServiceCIDRs, "cluster_cidrs": n.Sources.ClusterCIDRs,
		"dns_service_ip": n.Sources.DNSServiceIP, "cluster_domain": n.Sources.ClusterDomain,
	} {
		if src != "" {
			sources[key] = src
		}
	}
	m.Sources = stringMap(sources)

	m.NodeCIDRAllocation = types.BoolNull()
	if enabled, known := cl.NodeCIDRAllocation(); known {
		m.NodeCIDRAllocation = types.BoolValue(enabled)
	}

	cni := cniModel{Name: types.StringValue(cl.CNI.Name), Source: nullIfEmpty(cl.CNI.Source),
		Backend: types.StringNull(), VNI: types.Int64Null(), Port: types.Int64Null()}
	if f := cl.CNI.Flannel(); f != nil {
		cni.Backend = types.StringValue(f.Backend)
		if f.Backend == "vxlan" {
			cni.VNI, cni.Port = types.Int64Value(int64(f.VNI)), types.Int64Value(int64(f.Port))
		}
	}
	var d diag.Diagnostics
	m.CNI, d = types.ObjectValueFrom(ctx, cniObjectType.AttrTypes, cni)
	diags.Append(d...)

	nodes := []windowsNodeModel{}
	for _, wn := range cl.WindowsNodes() {
		nodes = append(nodes, windowsNodeModel{
			Name: types.StringValue(wn.Name), WindowsBuild: nullIfEmpty(wn.Build),
			Ready: types.BoolValue(wn.Ready), KubeletVersion: nullIfEmpty(wn.KubeletVersion),
		})
	}
	m.WindowsNodes, d = types.ListValueFrom(ctx, windowsNodeObjectType, nodes)
	diags.Append(d...)

	out := make([]checkModel, 0, len(checks))
	for _, c := range checks {
		out = append(out, checkModel{
			ID: types.StringValue(c.ID), Status: types.StringValue(c.Status),
			Message: types.StringValue(c.Message), Remedy: types.StringValue(c.Remedy),
		})
	}
	m.Checks, d = types.ListValueFrom(ctx, checkObjectType, out)
	diags.Append(d...)
	m.Ready = types.BoolValue(kube.Ready(checks))
}

func stringList(in []string) types.List {
	values := make([]attr.Value, 0, len(in))
	for _, s := range in {
		values = append(values, types.StringValue(s))
	}
	return types.ListValueMust(types.StringType, values)
}
