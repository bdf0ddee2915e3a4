package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// Default timeouts of the networking resource: server-side applies and
// deletes of a handful of objects.
const (
	networkingCreateTimeout = 5 * time.Minute
	networkingUpdateTimeout = 5 * time.Minute
	networkingDeleteTimeout = 5 * time.Minute
)

func NewNodeNetworking() resource.Resource { return &nodeNetworkingResource{} }

type nodeNetworkingResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure   = (*nodeNetworkingResource)(nil)
	_ resource.ResourceWithImportState = (*nodeNetworkingResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*nodeNetworkingResource)(nil)
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
	FlannelVNI            types.Int64    `tfsdk:"flannel_vni"`
	FlannelPort           types.Int64    `tfsdk:"flannel_port"`
	Objects               types.List     `tfsdk:"objects"`
	Drift                 types.List     `tfsdk:"drift"`
	Agents                types.Map      `tfsdk:"agents"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
}

func (r *nodeNetworkingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_networking"
}

func (r *nodeNetworkingResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	discovered := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster-level pieces Windows nodes need for their Services and pod network, one per cluster: the node " +
			"agents' DaemonSets, ServiceAccounts, RBAC and ConfigMaps. Every agent runs with an identity of its own, never the node's: " +
			"on a v1.36 API server the Node authorizer lets `system:node:<name>` read only its own Node and no EndpointSlices, so " +
			"kube-proxy and flannel cannot work with the kubelet's credentials.\n\n" +
			"With `cni = \"flannel\"` it installs two HostProcess DaemonSets (stable since Kubernetes v1.26) for the nodes labelled " +
			"`kubernetes.io/os=windows`: `kube-proxy-windows` (ServiceAccount bound to `system:node-proxier`, as kubeadm binds the " +
			"Linux kube-proxy; winkernel proxier on the `flannel.4096` overlay with a source VIP reserved per node) and " +
			"`kube-flannel-ds-windows` (flannel's own ClusterRole). Both run the programs the golden image installed and verified " +
			"(`C:\\k\\kube-proxy.exe`, `C:\\k\\flanneld.exe`) from the HostProcess base image, so credentials rotate, the pods restart " +
			"on failure and `kubectl logs` works. With `cni = \"none\"` it installs nothing: the cluster's own CNI (Calico, Antrea) " +
			"brings its Windows agent and kube-proxy (or its replacement).\n\n" +
			"Objects are written by server-side apply under the field manager `" + kube.FieldManager + "`; a change made outside " +
			"Terraform to a field it owns, or a deleted object, shows in `drift` at the next plan and is put back by the apply.\n\n" +
			"`windows_node` references it through `networking_id`, so Terraform creates it before the nodes and destroys the nodes " +
			"first. Destroying it while Windows nodes still exist is refused, naming them (their Services and DNS would stop " +
			"working), unless `allow_destroy_with_nodes` is set. Import takes the namespace.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: discovered,
				MarkdownDescription: "The namespace: the import ID, and what `windows_node.networking_id` takes."},
			"cni": schema.StringAttribute{Required: true, PlanModifiers: replace,
				MarkdownDescription: "How Windows nodes get their pod network: `flannel` (VXLAN overlay, VNI 4096 and UDP port 4789, " +
					"kube-proxy and flanneld as HostProcess DaemonSets) or `none` (the cluster's CNI installs itself on Windows). " +
					"Changing it replaces the resource, which is refused while Windows nodes exist.",
				Validators: []validator.String{stringvalidator.OneOf(networking.Names()...)}},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("kube-system"), PlanModifiers: replace,
				MarkdownDescription: "Namespace of the agents' DaemonSets, ServiceAccounts and ConfigMaps. Defaults to `kube-system`, " +
					"where the cluster's own node agents run (the agents use the `system-node-critical` priority class).",
				Validators: []validator.String{dnsLabel()}},
			"host_process_image": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(networking.DefaultHostProcessImage),
				MarkdownDescription: "Image of the agents' HostProcess containers: an empty base layer (the agents run the host's own, " +
					"checksum-verified programs). Defaults to `" + networking.DefaultHostProcessImage + "`, which `windows_golden_image` " +
					"prepulls; set a mirror's copy for air-gapped sites (and `prepull_images` on the image)."},
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
			"flannel_vni": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "VXLAN VNI of the flannel overlay: 4096, the only one Windows accepts (flannel `vxlan_windows.go`); 0 without flannel."},
			"flannel_port": schema.Int64Attribute{Computed: true,
				MarkdownDescription: "VXLAN UDP port of the flannel overlay: 4789, the only one Windows accepts; 0 without flannel."},
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
}

func (r *nodeNetworkingResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan fills in the discovered cluster facts, expects no drift, and
// for flannel checks the cluster's own flannel (VNI 4096, port 4789) and
// that the cluster's CNI is not another one.
func (r *nodeNetworkingResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan nodeNetworkingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Drift = types.ListValueMust(types.StringType, nil)
	plan.setOverlay(plan.CNI.ValueString())
	if !plan.Namespace.IsUnknown() {
		plan.ID = plan.Namespace
	}
	if r.clients != nil && !plan.CNI.IsUnknown() {
		if _, err := r.clients.Kubernetes(ctx); err == nil {
			r.discover(ctx, &plan, resp)
			if mode, ok := networking.Lookup(plan.CNI.ValueString()); ok && mode.Plugin() != "" && req.State.Raw.IsNull() {
				r.checkCluster(ctx, mode, resp)
			}
		} else if clients.IsUnknownConfig(err) {
			// Not a failure: the cluster facts are discovered at apply.
			resp.Diagnostics.AddWarning("Cluster not read during this plan", err.Error())
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// discover fills the unknown cluster facts from the provider's discovery.
func (r *nodeNetworkingResource) discover(ctx context.Context, m *nodeNetworkingModel, resp *resource.ModifyPlanResponse) {
	if !m.APIServer.IsUnknown() && !m.ClusterCIDR.IsUnknown() && !m.ServiceCIDR.IsUnknown() {
		return
	}
	net, err := r.clients.ClusterNetwork(ctx)
	if err != nil {
		resp.Diagnostics.AddWarning("Cluster discovery did not run at plan time", err.Error())
		return
	}
	fill := func(v *types.String, got string) {
		if v.IsUnknown() && got != "" {
			*v = types.StringValue(got)
		}
	}
	fill(&m.APIServer, net.APIEndpoint)
	if len(net.ClusterCIDRs) > 0 {
		fill(&m.ClusterCIDR, net.ClusterCIDRs[0])
	}
	if len(net.ServiceCIDRs) > 0 {
		fill(&m.ServiceCIDR, net.ServiceCIDRs[0])
	}
	if mode, ok := networking.Lookup(m.CNI.ValueString()); ok && mode.NeedsClusterCIDR() && m.ClusterCIDR.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("cluster_cidr"), "Pod network not found",
			mode.Name()+" needs the cluster (pod) CIDR and no source names it (flannel's net-conf.json, kubeadm-config networking.podSubnet, "+
				"the controller manager's --cluster-cidr): set cluster_cidr.")
	}
}

// checkCluster runs the CNI readiness check for a mode that extends the
// cluster's network plugin (networking.CheckMode): for flannel, the
// cluster's flannel must use VXLAN with VNI 4096 on port 4789 (the Linux
// nodes' flannel and the Windows one form one overlay), and a cluster
// running Calico or Antrea needs cni = "none".
func (r *nodeNetworkingResource) checkCluster(ctx context.Context, mode networking.Mode, resp *resource.ModifyPlanResponse) {
	cluster, err := r.clients.Cluster(ctx)
	if err != nil {
		resp.Diagnostics.AddWarning("Cluster readiness checks did not run", err.Error())
		return
	}
	c := cluster.CNICheck()
	for _, p := range networking.CheckMode(mode, cluster.CNI, networking.Verdict{Status: c.Status, Message: c.Message, Remedy: c.Remedy}) {
		resp.Diagnostics.AddAttributeError(path.Root("cni"), p.Summary, p.Detail)
	}
}

func (r *nodeNetworkingResource) spec(m *nodeNetworkingModel) kube.NetworkingSpec {
	return kube.NetworkingSpec{
		Namespace: m.Namespace.ValueString(), Mode: m.CNI.ValueString(), HostProcessImage: m.HostProcessImage.ValueString(),
		APIServer: m.APIServer.ValueString(), ClusterCIDR: m.ClusterCIDR.ValueString(), ServiceCIDR: m.ServiceCIDR.ValueString(),
	}
}

func (r *nodeNetworkingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeNetworkingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Create(ctx, networkingCreateTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, timeout, "creating", &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: plan.Namespace}, &resp.Diagnostics)
}

func (r *nodeNetworkingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan nodeNetworkingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout, diags := plan.Timeouts.Update(ctx, networkingUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, timeout, "updating", &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: plan.Namespace}, &resp.Diagnostics)
}

// apply renders and applies the spec, then records what the cluster holds.
func (r *nodeNetworkingResource) apply(ctx context.Context, plan *nodeNetworkingModel, timeout time.Duration, verb string, state *tfsdk.State, diags *diag.Diagnostics) {
	k := kubeClient(ctx, r.clients, diags)
	if diags.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := fmt.Sprintf("%s Windows node networking (%s)", verb, plan.Namespace.ValueString())
	if err := r.fillFacts(ctx, plan); err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	plan.ID = plan.Namespace
	objs, err := r.spec(plan).Render()
	if err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	if err := k.ApplyNetworking(ctx, objs); err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	if err := r.observe(ctx, k, objs, plan); err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	diags.Append(state.Set(ctx, plan)...)
}

// observe records the owned objects, their drift and the agents' status.
func (r *nodeNetworkingResource) observe(ctx context.Context, k *kube.Client, objs *kube.NetworkingObjects, m *nodeNetworkingModel) error {
	st, err := k.ObserveNetworking(ctx, objs)
	if err != nil {
		return err
	}
	m.Objects = stringList(objs.Names())
	m.Drift = stringList(st.Drift)
	agents := map[string]string{}
	for _, a := range objs.Agents() {
		agents[a.Name] = "missing"
		if s, ok := st.Agents[a.Name]; ok {
			agents[a.Name] = s
		}
	}
	m.Agents = stringMap(agents)
	return nil
}

func (r *nodeNetworkingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeNetworkingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: state.Namespace}, &resp.Diagnostics)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := fmt.Sprintf("reading Windows node networking (%s)", state.Namespace.ValueString())
	if err := r.fillFacts(ctx, &state); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	objs, err := r.spec(&state).Render()
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := r.observe(ctx, k, objs, &state); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodeNetworkingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeNetworkingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, networkingDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ns := state.Namespace.ValueString()
	summary := fmt.Sprintf("deleting Windows node networking (%s)", ns)
	var agents []kube.Agent
	if mode, ok := networking.Lookup(state.CNI.ValueString()); ok {
		agents = mode.Agents()
	}
	if len(agents) > 0 && !state.AllowDestroyWithNodes.ValueBool() {
		nodes, err := k.WindowsNodeNames(ctx)
		if err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
		if len(nodes) > 0 {
			resp.Diagnostics.AddError(summary, (&kube.WindowsNodesDependError{Nodes: nodes, Agents: agents}).Error())
			return
		}
	}
	if err := k.DeleteNetworking(ctx, ns); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

// ImportState takes the namespace (the import ID or the identity's); the
// mode is the one whose DaemonSets the namespace holds.
func (r *nodeNetworkingResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns := strings.TrimSpace(req.ID)
	var id nodeNetworkingIdentity
	if importedIdentity(ctx, req, &id, "namespace", &resp.Diagnostics) {
		ns = id.Namespace.ValueString()
	}
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name, err := k.ObservedNetworkingMode(ctx, ns)
	var mode networking.Mode
	if err == nil {
		mode, err = networking.Get(name)
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing Windows node networking (%s)", ns), err.Error())
		return
	}
	agents := mode.Agents()
	if len(agents) == 0 {
		resp.Diagnostics.AddWarning(fmt.Sprintf("No Windows node networking objects in namespace %s", ns),
			fmt.Sprintf("Nothing this provider installs was found there; the resource is imported with cni = %q. If that is not what you meant, check the namespace.", mode.Name()))
	}
	vni, port := mode.VXLAN()
	for attr, v := range map[string]any{
		"id": ns, "namespace": ns, "cni": mode.Name(), "host_process_image": networking.DefaultHostProcessImage,
		"allow_destroy_with_nodes": false, "flannel_vni": int64(vni), "flannel_port": int64(port),
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: types.StringValue(ns)}, &resp.Diagnostics)
	if len(agents) > 0 {
		if img, err := k.FindDaemonSet(ctx, ns, agents[0].DaemonSet); err == nil && len(img.Spec.Template.Spec.Containers) > 0 {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("host_process_image"), img.Spec.Template.Spec.Containers[0].Image)...)
		}
	}
}

// fillFacts fills in the cluster facts the model lacks, as a create uses
// them: unknown in a plan (discovered at apply), null after an import.
func (r *nodeNetworkingResource) fillFacts(ctx context.Context, m *nodeNetworkingModel) error {
	lacks := func(v types.String) bool { return v.IsUnknown() || v.IsNull() }
	if !lacks(m.APIServer) && !lacks(m.ClusterCIDR) && !lacks(m.ServiceCIDR) {
		return nil
	}
	net, err := r.clients.ClusterNetwork(ctx)
	if err != nil {
		return fmt.Errorf("discovering the cluster: %w", err)
	}
	for v, got := range map[*types.String]string{
		&m.APIServer: net.APIEndpoint, &m.ClusterCIDR: first(net.ClusterCIDRs), &m.ServiceCIDR: first(net.ServiceCIDRs),
	} {
		if lacks(*v) {
			*v = types.StringValue(got)
		}
	}
	return nil
}

// setOverlay records the VXLAN overlay of the networking mode (none while
// the mode is unknown).
func (m *nodeNetworkingModel) setOverlay(name string) {
	var vni, port int
	if mode, ok := networking.Lookup(name); ok {
		vni, port = mode.VXLAN()
	}
	m.FlannelVNI, m.FlannelPort = types.Int64Value(int64(vni)), types.Int64Value(int64(port))
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
