package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// Default timeouts of a node: a clone, a boot, a join and a Ready wait; a
// drain that waits for PodDisruptionBudgets. create lies above the guest's
// side at the tail of each operation, about 24 minutes: a full clone 3
// (puppetlabs/vmpooler#333), a customized first boot 15 (AWS EC2's launch
// documentation; buildkite/elastic-ci-stack-for-aws#595), a first pull of
// the probe's image ~2 (actions/runner-images#3728), a restart 2.5
// (internal/sandbox/latency keeps each figure with its source;
// TestDefaultTimeoutsAboveTheModelsTail holds the default above their sum).
// The create's default also covers the provider's own wait for a clone slot:
// a golden image's host runs 4 full clones at once (internal/vsphere's
// provisioning units), so with -parallelism=20 from one template the last
// node waits 4 clones, 12 minutes at the tail: about 36 in all.
const (
	nodeCreateTimeout = 45 * time.Minute
	nodeUpdateTimeout = 30 * time.Minute
	nodeDeleteTimeout = 30 * time.Minute
)

func NewNode() resource.Resource { return &nodeResource{} }

type nodeResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure   = (*nodeResource)(nil)
	_ resource.ResourceWithImportState = (*nodeResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*nodeResource)(nil)
)

func (r *nodeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (r *nodeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeResource) manager(ctx context.Context, diags diagAdder) *winnode.Manager {
	vc := vsphereClient(ctx, r.clients, diags)
	if vc == nil {
		return nil
	}
	return r.managerOf(ctx, vc, diags)
}

// managerOf is the manager of a vCenter session and the run's cluster.
func (r *nodeResource) managerOf(ctx context.Context, vc *vsphere.Client, diags diagAdder) *winnode.Manager {
	k, err := r.clients.Kubernetes(ctx)
	if err != nil {
		diags.AddError(clientErrorSummary("Kubernetes", err), err.Error())
		return nil
	}
	m := winnode.NewManager(vc, k)
	m.Network = r.clients.ClusterNetwork
	m.HealthSnapshot = r.clients.HealthSnapshot
	m.Progress = func(stage string, fields map[string]any) {
		tflog.Info(ctx, "windows node: "+stage, fields)
	}
	return m
}

// ModifyPlan plans what can be known before apply: the re-join of a Node
// deleted outside Terraform, a disk that would shrink, what an update or a
// replacement does to the running node (warnings, node_plan.go), and — for a
// new node — the cluster readiness checks the known facts allow
// (node_checks.go), which stop the plan with the failing check's remedy.
func (r *nodeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "plan")
	if req.Plan.Raw.IsNull() {
		r.warnDestroy(ctx, req, resp)
		return
	}
	var plan nodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		warnAdminUser(ctx, req.Plan, &resp.Diagnostics)
		warnUnproven(ctx, plan, &resp.Diagnostics)
		warnNoProxy(ctx, r.clients, "windows_node "+plan.Name.ValueString(), plan.machineModel, plan.staticIPv4(ctx, &resp.Diagnostics), &resp.Diagnostics)
	}
	planActiveDirectory(ctx, r.clients, plan.machineModel, "windows_node "+plan.Name.ValueString(), &resp.Diagnostics)
	if !req.State.Raw.IsNull() {
		var state nodeModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !plan.Template.Equal(state.Template) && !imported(ctx, req.Private) && !sameTemplate(ctx, r.clients, state.Template, plan.Template) {
			// A different VM (or one known only at apply): a new node.
			// The same VM in another form changes in place.
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("template"))
		}
		if len(resp.RequiresReplace) == 0 && !imported(ctx, req.Private) {
			refuseWinRMHTTPAfterVMTools(ctx, state.Transport, plan.Transport, &resp.Diagnostics)
		}
		if shrink := winnode.PlanHardware(state.sizing(), plan.sizing()).ShrinkDisk; shrink != nil {
			resp.Diagnostics.AddAttributeError(path.Root("disk_size_gb"), "Disk cannot shrink",
				fmt.Sprintf("disk_size_gb: the disk has %d GiB; a virtual disk can only grow. Keep %d or more, or replace the node (terraform apply -replace).",
					shrink.From, shrink.From))
		}
		if !plan.NetworkingID.Equal(state.NetworkingID) {
			// A re-join in place: the mode may change with it.
			plan.CNI = types.StringUnknown()
			plan.Ready = types.BoolUnknown()
			plan.Health = types.ObjectUnknown(healthAttrTypes)
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		}
		if !state.Joined.ValueBool() {
			// The Node is gone while the VM lives: the update joins it again.
			plan.Joined = types.BoolValue(true)
			plan.Ready = types.BoolUnknown()
			// A new Node object: the controller manager allocates it a new
			// pod CIDR.
			plan.PodCIDR = types.StringUnknown()
			plan.KubeletVersion = types.StringUnknown()
			plan.Health = types.ObjectUnknown(healthAttrTypes)
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		}
		if state.Joined.ValueBool() && !state.Ready.ValueBool() && plan.NetworkingID.Equal(state.NetworkingID) {
			// NotReady at the refresh: the update repairs what the
			// provider can (winnode.Manager.Repair).
			plan.Ready = types.BoolValue(true)
			plan.Health = types.ObjectUnknown(healthAttrTypes)
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
			resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s is NotReady: the apply repairs it", plan.Name.ValueString()),
				fmt.Sprintf("The refresh found Node %s NotReady. The apply starts its containerd and kubelet services again where they stopped, "+
					"over its transport, and waits for the Node to be Ready; if it does not become Ready, the apply fails with the kubelet's last log lines.",
					plan.Name.ValueString()))
		}
		r.planAgentRepair(ctx, state, resp)
		r.planDisruption(ctx, req, resp)
		planHealth(ctx, state, resp)
		warnWindowsSupport(ctx, r.clients, "Windows node "+state.Name.ValueString(), []string{state.WindowsBuild.ValueString()}, plan.SkipChecks, &resp.Diagnostics)
		return
	}
	r.planChecks(ctx, plan, resp)
}

func (r *nodeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "create")
	var plan nodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	password, sshKey := writeOnlySecrets(ctx, req.Config, &resp.Diagnostics)
	timeout, diags := plan.Timeouts.Create(ctx, nodeCreateTimeout)
	resp.Diagnostics.Append(diags...)
	spec := plan.spec(ctx, password, sshKey, &resp.Diagnostics)
	withJoinAccount(&spec, r.clients, &resp.Diagnostics)
	m := r.manager(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := m.Create(ctx, spec, func(id winnode.Identity) {
		plan.setIdentity(id)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		setIdentity(ctx, resp.Identity, nodeIdentity{InstanceUUID: plan.InstanceUUID}, &resp.Diagnostics)
	})
	summary := fmt.Sprintf("creating Windows node (%s)", spec.Name)
	if err != nil {
		if res.VMID == "" {
			resp.State.RemoveResource(ctx) // nothing was created
		}
		addGuestError(&resp.Diagnostics, summary, err, configuredHostKey(ctx, req.Config), uacCause(spec.AdminUser, err)+tainted(res.VMID))
		return
	}
	plan.setJoined(res)
	tflog.Info(ctx, "windows node joined", map[string]any{"node": spec.Name, "ready_to_done": res.ReadyToDone.String()})
	if info, err := m.VSphere.ReadVM(ctx, res.VMID); err == nil {
		plan.fromVM(info)
	}
	h, err := m.ReadHealth(ctx, plan.healthSpec(), res.Node, true)
	plan.setHealth(h, err, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func tainted(vmID string) string {
	if vmID == "" {
		return ""
	}
	return fmt.Sprintf("\n\nThe VM %s exists and is in the state; the resource is tainted, so the next apply replaces it (or terraform destroy removes it).", vmID)
}

func (r *nodeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "read")
	var state nodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, nodeIdentity{InstanceUUID: state.InstanceUUID}, &resp.Diagnostics)
	m := r.manager(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	obs, err := m.Read(ctx, state.ID.ValueString(), state.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading Windows node (%s)", state.Name.ValueString()), err.Error())
		return
	}
	if obs.VM == nil {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node (%s) VM not found", state.Name.ValueString()),
			"The VM was deleted outside Terraform; the node is removed from the state and the next apply creates it again."+
				staleNode(obs.Node != nil, state.Name.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	}
	state.refresh(obs)
	var tags []string
	if !state.Tags.IsNull() {
		if tags, err = m.ReadTags(ctx, state.ID.ValueString()); err != nil {
			resp.Diagnostics.AddError(fmt.Sprintf("reading Windows node (%s)", state.Name.ValueString()), err.Error())
			return
		}
	}
	state.refreshSite(state.Name.ValueString(), obs.VM, tags)
	h, err := m.ReadHealth(ctx, state.healthSpec(), obs.Node, false)
	if err == nil && state.ProbeOnRefresh.ValueBool() {
		h = probeAtRefresh(ctx, m, state.healthSpec(), obs.Node, h, &resp.Diagnostics)
	}
	state.setHealth(h, err, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func staleNode(exists bool, name string) string {
	if !exists {
		return ""
	}
	return fmt.Sprintf(" Its Node object %s is still in the cluster (NotReady); the new node replaces it under the same name.", name)
}

func (r *nodeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "update")
	var plan, state nodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, nodeIdentity{InstanceUUID: state.InstanceUUID}, &resp.Diagnostics)
	password, sshKey := writeOnlySecrets(ctx, req.Config, &resp.Diagnostics)
	timeout, diags := plan.Timeouts.Update(ctx, nodeUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	update := plan.updateRequest(ctx, state, req.Private, password, sshKey, &resp.Diagnostics)
	m := r.manager(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := m.Update(ctx, update)
	if err != nil {
		addGuestError(&resp.Diagnostics, fmt.Sprintf("updating Windows node (%s)", update.Spec.Name), err, configuredHostKey(ctx, req.Config), "")
		return
	}
	healthPlanned := plan.Health
	plan.setUpdated(res)
	if healthPlanned.IsUnknown() {
		// A repair, a join again or a power cycle: read what it left.
		node := res.Node
		if res.Joined != nil {
			node = res.Joined.Node
		}
		h, err := m.ReadHealth(ctx, plan.healthSpec(), node, true)
		plan.setHealth(h, err, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	// The configuration's create-only inputs are in the state now.
	resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
}

func (r *nodeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "delete")
	var state nodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, nodeDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	drain := state.drainOptions(ctx, &resp.Diagnostics)
	m := r.manager(ctx, &resp.Diagnostics)
	warnKept := removeComputerAccounts(ctx, m, r.clients, state.machineModel, &resp.Diagnostics)
	defer warnKept()
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := m.Delete(ctx, state.Name.ValueString(), state.ID.ValueString(), drain); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("deleting Windows node (%s)", state.Name.ValueString()), err.Error())
	}
}

// ImportState takes the VM's inventory path, its instance UUID or the Node's
// providerID (vsphere://<BIOS UUID>); by identity, the instance UUID.
func (r *nodeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx = vsphereOperation(ctx, "windows_node", "import")
	ref := req.ID
	var id nodeIdentity
	if importedIdentity(ctx, req, &id, "instance_uuid", &resp.Diagnostics) {
		ref = id.InstanceUUID.ValueString()
	}
	m := r.manager(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	found, err := describeForImport(ctx, m, ref)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing Windows node (%s)", ref), err.Error())
		return
	}
	resp.Diagnostics.Append(setImported(ctx, found, &resp.State)...)
	setIdentity(ctx, resp.Identity, nodeIdentity{InstanceUUID: types.StringValue(found.VM.InstanceUUID)}, &resp.Diagnostics)
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}
