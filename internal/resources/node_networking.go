package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
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

func (r *nodeNetworkingResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_networking"
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
	resp.Diagnostics.Append(getNetworking(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Drift = types.ListValueMust(types.StringType, nil)
	var plugin *networking.Plugin
	if !plan.Namespace.IsUnknown() {
		plan.ID = plan.Namespace
	}
	if r.clients != nil && !plan.CNI.IsUnknown() {
		if _, err := r.clients.Kubernetes(ctx); err == nil {
			r.discover(ctx, &plan, resp)
			if mode, ok := networking.Lookup(plan.CNI.ValueString()); ok && mode.Plugin() != "" && req.State.Raw.IsNull() {
				plugin = r.checkCluster(ctx, mode, resp)
			}
		} else if clients.IsUnknownConfig(err) {
			// Not a failure: the cluster facts are discovered at apply.
			resp.Diagnostics.AddWarning("Cluster not read during this plan", err.Error())
		}
	}
	if mode, ok := networking.Lookup(plan.CNI.ValueString()); ok && req.State.Raw.IsNull() && mode.Probe().Unproven != "" {
		resp.Diagnostics.AddAttributeWarning(path.Root("cni"), "Nothing proves the Windows nodes' network", mode.Probe().Unproven)
	}
	if req.State.Raw.IsNull() || plan.Modes == nil || allNull(plan.Modes) {
		resp.Diagnostics.Append(plan.setModeAttributes(plugin)...)
	}
	resp.Diagnostics.Append(setNetworking(ctx, &resp.Plan, &plan)...)
}

func allNull(vals map[string]attr.Value) bool {
	for _, v := range vals {
		if v != nil && !v.IsNull() && !v.IsUnknown() {
			return false
		}
	}
	return true
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
func (r *nodeNetworkingResource) checkCluster(ctx context.Context, mode networking.Mode, resp *resource.ModifyPlanResponse) *networking.Plugin {
	cluster, err := r.clients.Cluster(ctx)
	if err != nil {
		resp.Diagnostics.AddWarning("Cluster readiness checks did not run", err.Error())
		return nil
	}
	c := cluster.CNICheck()
	for _, p := range networking.CheckMode(mode, cluster.CNI, networking.Verdict{Status: c.Status, Message: c.Message, Remedy: c.Remedy}) {
		resp.Diagnostics.AddAttributeError(path.Root("cni"), p.Summary, p.Detail)
	}
	return &cluster.CNI
}

func (r *nodeNetworkingResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeNetworkingModel
	resp.Diagnostics.Append(getNetworking(ctx, req.Plan, &plan)...)
	timeout, diags := plan.Timeouts.Create(ctx, networkingCreateTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, timeout, "creating", &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: plan.Namespace}, &resp.Diagnostics)
}

func (r *nodeNetworkingResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan nodeNetworkingModel
	resp.Diagnostics.Append(getNetworking(ctx, req.Plan, &plan)...)
	timeout, diags := plan.Timeouts.Update(ctx, networkingUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	r.apply(ctx, &plan, timeout, "updating", &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: plan.Namespace}, &resp.Diagnostics)
}

// apply installs the plan's networking and records what the cluster holds.
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
	// The mode's attributes follow the cluster's plugin (antrea's traffic
	// mode): read it now when the plan could not.
	if mode, ok := networking.Lookup(plan.CNI.ValueString()); ok && mode.Plugin() != "" && plan.modeSettings() == nil {
		if cluster, err := r.clients.Cluster(ctx); err == nil {
			diags.Append(plan.setModeAttributes(&cluster.CNI)...)
		}
	}
	res, err := k.InstallNetworking(ctx, r.spec(plan))
	if err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	plan.setResult(res)
	diags.Append(setNetworking(ctx, state, plan)...)
}

func (r *nodeNetworkingResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeNetworkingModel
	resp.Diagnostics.Append(getNetworking(ctx, req.State, &state)...)
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
	res, err := k.ReadNetworking(ctx, r.spec(&state))
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	state.setResult(res)
	resp.Diagnostics.Append(setNetworking(ctx, &resp.State, &state)...)
}

func (r *nodeNetworkingResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeNetworkingModel
	resp.Diagnostics.Append(getNetworking(ctx, req.State, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, networkingDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ns := state.Namespace.ValueString()
	if err := k.RemoveNetworking(ctx, ns, state.CNI.ValueString(), state.AllowDestroyWithNodes.ValueBool()); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("deleting Windows node networking (%s)", ns), err.Error())
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
	imp, err := k.ImportNetworking(ctx, ns)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing Windows node networking (%s)", ns), err.Error())
		return
	}
	mode := imp.Mode
	if len(mode.Agents()) == 0 {
		resp.Diagnostics.AddWarning(fmt.Sprintf("No Windows node networking objects in namespace %s", ns),
			fmt.Sprintf("Nothing this provider installs was found there; the resource is imported with cni = %q. If that is not what you meant, check the namespace.", mode.Name()))
	}
	for attr, v := range map[string]any{
		"id": ns, "namespace": ns, "cni": mode.Name(), "host_process_image": imp.HostProcessImage,
		"allow_destroy_with_nodes": false,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
	modeAttrs, diags := modeAttributeValues(mode.Name(), nil)
	resp.Diagnostics.Append(diags...)
	for name, v := range modeAttrs {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
	setIdentity(ctx, resp.Identity, nodeNetworkingIdentity{Namespace: types.StringValue(ns)}, &resp.Diagnostics)
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
