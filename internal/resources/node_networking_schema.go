package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

func (r *nodeNetworkingResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = nodeNetworkingSchema(ctx)
}

// nodeNetworkingSchema is the resource's schema, with each mode's computed
// attributes nested under its name (modeAttributeSchemas).
func nodeNetworkingSchema(ctx context.Context) schema.Schema {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	discovered := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	s := schema.Schema{
		MarkdownDescription: "The cluster-level pieces Windows nodes need for their Services and pod network, one per cluster: " +
			"the node agents' DaemonSets, ServiceAccounts, RBAC and ConfigMaps for the network plugin `cni` names.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: discovered,
				MarkdownDescription: "The namespace: the import ID, and what `windows_node.networking_id` takes."},
			"cni": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "How Windows nodes get their pod network: `flannel` (VXLAN overlay, VNI 4096 and UDP port 4789, " +
					"kube-proxy and flanneld as HostProcess DaemonSets), `calico` (Calico's VXLAN overlay with Calico IPAM: calico-node-windows " +
					"and kube-proxy as HostProcess DaemonSets, joining the cluster's own Calico) or `none` (the cluster's CNI installs itself on Windows). " +
					"Changing it replaces the resource, which is refused while Windows nodes exist.",
				Validators: []validator.String{stringvalidator.OneOf(networking.Names()...)}},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("kube-system"), PlanModifiers: replace,
				MarkdownDescription: "Namespace of the agents' DaemonSets, ServiceAccounts and ConfigMaps. Defaults to `kube-system`, " +
					"where the cluster's own node agents run (the agents use the `system-node-critical` priority class).",
				Validators: []validator.String{dnsLabel()}},
			"host_process_image": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(networking.DefaultHostProcessImage),
				Validators: []validator.String{imageReference()},
				MarkdownDescription: "Image of the agents' HostProcess containers: an empty base layer (the agents run the host's own, " +
					"checksum-verified programs). Defaults to `" + networking.DefaultHostProcessImage + "`, which `windows_golden_image` " +
					"prepulls; set a mirror's copy for air-gapped sites (and `prepull_images` on the image). Changing it updates the " +
					"agents' DaemonSets in place: their controller replaces the agents' pods node by node (RollingUpdate); no node is " +
					"replaced, drained or joined again."},
			"api_server": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: discovered, Validators: []validator.String{httpsURL()},
				MarkdownDescription: "API server URL the agents connect to; defaults to the provider's. Never the `kubernetes` Service's " +
					"ClusterIP: that address works on a node only once kube-proxy runs there."},
			"cluster_cidr": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: discovered, Validators: []validator.String{cidr()},
				MarkdownDescription: "Pod network flannel hands out node subnets from; discovered (flannel's `net-conf.json`, kubeadm-config, controller manager) by default."},
			"service_cidr": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: discovered, Validators: []validator.String{cidr()},
				MarkdownDescription: "Service CIDR; discovered (ServiceCIDR API, kubeadm-config) by default."},
			"allow_destroy_with_nodes": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Remove the agents even while Windows nodes exist (their Services, DNS and new pods' network stop " +
					"working). Defaults to `false`: destroy is refused and names the nodes."},
			"objects": schema.ListAttribute{ElementType: types.StringType, Computed: true,
				MarkdownDescription: "The objects this resource owns, as `Kind namespace/name`."},
			"drift": schema.ListAttribute{ElementType: types.StringType, Computed: true,
				MarkdownDescription: "Objects missing or changed outside Terraform, found by refresh; the plan expects none, so the apply puts them back."},
			"agents": schema.MapAttribute{ElementType: types.StringType, Computed: true,
				MarkdownDescription: "Each agent's DaemonSet status at the last refresh: `<ready>/<desired> ready`."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
	for name, a := range modeAttributeSchemas() {
		s.Attributes[name] = a
	}
	return s
}
