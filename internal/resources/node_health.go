package resources

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// healthAttrTypes are the health attribute's (nodeHealthSchema).
var healthAttrTypes = map[string]attr.Type{
	"status": types.StringType, "causes": types.ListType{ElemType: types.StringType}, "node_ready": types.BoolType,
	"agents": types.MapType{ElemType: types.StringType}, "services": types.MapType{ElemType: types.StringType},
	"cluster_dns_ready_endpoints": types.Int64Type, "kubelet_version": types.StringType, "container_runtime_version": types.StringType,
}

type healthModel struct {
	Status                   types.String `tfsdk:"status"`
	Causes                   types.List   `tfsdk:"causes"`
	NodeReady                types.Bool   `tfsdk:"node_ready"`
	Agents                   types.Map    `tfsdk:"agents"`
	Services                 types.Map    `tfsdk:"services"`
	ClusterDNSReadyEndpoints types.Int64  `tfsdk:"cluster_dns_ready_endpoints"`
	KubeletVersion           types.String `tfsdk:"kubelet_version"`
	ContainerRuntimeVersion  types.String `tfsdk:"container_runtime_version"`
}

// healthObject is a node's health as the health attribute holds it.
func healthObject(h kube.NodeHealth) types.Object {
	str := func(m map[string]string) types.Map {
		out := make(map[string]attr.Value, len(m))
		for k, v := range m {
			out[k] = types.StringValue(v)
		}
		return types.MapValueMust(types.StringType, out)
	}
	causes := make([]attr.Value, 0, len(h.Causes))
	for _, c := range h.Causes {
		causes = append(causes, types.StringValue(c))
	}
	return types.ObjectValueMust(healthAttrTypes, map[string]attr.Value{
		"status": types.StringValue(h.Status), "causes": types.ListValueMust(types.StringType, causes),
		"node_ready": types.BoolValue(h.NodeReady), "agents": str(h.AgentStates()), "services": str(h.Services),
		"cluster_dns_ready_endpoints": types.Int64Value(int64(h.ClusterDNSReadyEndpoints)),
		"kubelet_version":             types.StringValue(h.KubeletVersion), "container_runtime_version": types.StringValue(h.ContainerRuntimeVersion),
	})
}

// healthSpec is what winnode needs to judge the node's health: its name
// and networking.
func (m *nodeModel) healthSpec() winnode.Spec {
	return winnode.Spec{Name: m.Name.ValueString(), Networking: m.NetworkingID.ValueString(), CNI: m.CNI.ValueString(), ClusterDomain: m.ClusterDomain.ValueString()}
}

// health reads the health attribute; ok is false when it holds nothing
// (null or unknown: never read, or read with -refresh=false since).
func (m *nodeModel) health(ctx context.Context) (h healthModel, ok bool) {
	if m.Health.IsNull() || m.Health.IsUnknown() {
		return h, false
	}
	if m.Health.As(ctx, &h, basetypes.ObjectAsOptions{}).HasError() {
		return h, false
	}
	return h, true
}

// agentsDown reads the agents the health attribute records as not Running
// and Ready: their names (sorted), those failing (kube.AgentStateFailing:
// a restart of their pods may repair them) and the causes that name them.
func (h healthModel) agentsDown(ctx context.Context) (down, failing, causes []string) {
	var agents map[string]string
	var all []string
	var d diag.Diagnostics
	d.Append(h.Agents.ElementsAs(ctx, &agents, false)...)
	d.Append(h.Causes.ElementsAs(ctx, &all, false)...)
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		if agents[name] != kube.ServiceRunning {
			down = append(down, name)
			if kube.AgentStateFailing(agents[name]) {
				failing = append(failing, name)
			}
		}
	}
	for _, c := range all {
		if slices.ContainsFunc(down, func(name string) bool {
			return strings.HasPrefix(c, "agent "+name+" ") || strings.HasPrefix(c, "agent "+name+":")
		}) {
			causes = append(causes, c)
		}
	}
	return down, failing, causes
}

// setHealth records a health read; a failed read leaves the attribute null
// (known: an apply's state needs it known), with a warning.
func (m *nodeModel) setHealth(h kube.NodeHealth, err error, diags *diag.Diagnostics) {
	if err != nil {
		m.Health = types.ObjectNull(healthAttrTypes)
		diags.AddWarning("Reading the health of Windows node "+m.Name.ValueString(), err.Error())
		return
	}
	m.Health = healthObject(h)
}

// probeAtRefresh runs the network probe of a refresh (probe_on_refresh)
// and adds a failure to the node's health; a probe that could not run is a
// warning, the health as read.
func probeAtRefresh(ctx context.Context, m *winnode.Manager, spec winnode.Spec, node *corev1.Node, h kube.NodeHealth, diags *diag.Diagnostics) kube.NodeHealth {
	failure, err := m.ProbeAtRefresh(ctx, spec, node)
	switch {
	case err != nil:
		diags.AddWarning(fmt.Sprintf("Network probe of Windows node (%s) did not run", spec.Name), err.Error())
	case failure != "":
		h.Status = kube.HealthUnhealthy
		h.Causes = append(slices.Clone(h.Causes), failure)
	}
	return h
}
