package resources

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

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
	if f := cl.CNI.Flannel; f != nil {
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

// kubernetesRelease accepts a full release version, with or without the
// leading "v" ("v1.36.3", "1.36.3", "v1.37.0-rc.1").
func kubernetesRelease() validator.String {
	return stringCheck{"Kubernetes version", func(s string) []string {
		if _, err := utilversion.ParseSemantic(s); err != nil {
			return []string{"write a release version such as v1.36.3"}
		}
		return nil
	}}
}

// checkID accepts a check family ID or a family ID with an object
// ("linux-daemonset:kube-system/kube-proxy").
func checkID() validator.String {
	return stringCheck{"readiness check ID", func(s string) []string {
		family, object, hasObject := strings.Cut(s, ":")
		if !slices.Contains(kube.CheckFamilies, family) {
			return []string{"known check IDs are " + strings.Join(kube.CheckFamilies, ", ") + " (optionally followed by :<object>)"}
		}
		if hasObject && object == "" {
			return []string{"name the object after the colon, or leave the colon out to skip the whole family"}
		}
		return nil
	}}
}

func checkFamiliesMarkdown() string {
	quoted := make([]string, 0, len(kube.CheckFamilies))
	for _, f := range kube.CheckFamilies {
		quoted = append(quoted, "`"+f+"`")
	}
	return strings.Join(quoted, ", ")
}
