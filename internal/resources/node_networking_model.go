package resources

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

type nodeNetworkingModel struct {
	ID                    types.String   `tfsdk:"id"`
	CNI                   types.String   `tfsdk:"cni"`
	Namespace             types.String   `tfsdk:"namespace"`
	HostProcessImage      types.String   `tfsdk:"host_process_image"`
	APIServer             types.String   `tfsdk:"api_server"`
	ClusterCIDR           types.String   `tfsdk:"cluster_cidr"`
	ServiceCIDR           types.String   `tfsdk:"service_cidr"`
	AllowDestroyWithNodes types.Bool     `tfsdk:"allow_destroy_with_nodes"`
	Objects               types.List     `tfsdk:"objects"`
	Drift                 types.List     `tfsdk:"drift"`
	Agents                types.Map      `tfsdk:"agents"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
	// Modes are the modes' nested computed attributes (flannel = { vni,
	// port }), by mode name: node_networking_modes.go.
	Modes map[string]attr.Value `tfsdk:"-"`
}

func (r *nodeNetworkingResource) spec(m *nodeNetworkingModel) kube.NetworkingSpec {
	return kube.NetworkingSpec{
		Namespace: m.Namespace.ValueString(), Mode: m.CNI.ValueString(), HostProcessImage: m.HostProcessImage.ValueString(),
		APIServer: m.APIServer.ValueString(), ClusterCIDR: m.ClusterCIDR.ValueString(), ServiceCIDR: m.ServiceCIDR.ValueString(),
		ModeSettings: m.modeSettings(),
	}
}

// modeSettings are the known string attributes of the resource's mode
// (networking.Spec.ModeSettings).
func (m *nodeNetworkingModel) modeSettings() map[string]string {
	obj, ok := m.Modes[m.CNI.ValueString()].(types.Object)
	if !ok || obj.IsNull() || obj.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	for name, v := range obj.Attributes() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out[name] = s.ValueString()
		}
	}
	return out
}

// setResult records what the cluster holds: the owned objects, their drift
// and the agents' status.
func (m *nodeNetworkingModel) setResult(res kube.NetworkingResult) {
	m.Objects = stringList(res.Objects)
	m.Drift = stringList(res.Drift)
	m.Agents = stringMap(res.Agents)
}

// setModeAttributes records the mode's computed attributes under its own
// attribute (the others null); p is the cluster's plugin when read.
func (m *nodeNetworkingModel) setModeAttributes(p *networking.Plugin) diag.Diagnostics {
	vals, diags := modeAttributeValues(m.CNI.ValueString(), p)
	m.Modes = vals
	return diags
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
