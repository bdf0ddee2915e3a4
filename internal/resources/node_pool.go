package resources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// Default timeouts of a pool: several waves of node creates (each up to a
// windows_node's 45 minutes) and drains.
const (
	// One member's tail is about 24 minutes (nodeCreateTimeout's sources),
	// 27 with a clone queued behind a host's slots: 60 covers it.
	poolCreateTimeout = 60 * time.Minute
	poolUpdateTimeout = 120 * time.Minute
	poolDeleteTimeout = 60 * time.Minute
)

func NewNodePool() resource.Resource { return &nodePoolResource{} }

type nodePoolResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure      = (*nodePoolResource)(nil)
	_ resource.ResourceWithImportState    = (*nodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodePoolResource)(nil)
	_ resource.ResourceWithIdentity       = (*nodePoolResource)(nil)
)

func (r *nodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_pool"
}

func (r *nodePoolResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// manager is a windows_node's: the members are nodes. hosts is the same
// vCenter, where the pool's DRS rule lives.
func (r *nodePoolResource) manager(ctx context.Context, diags diagAdder) (m *winnode.Manager, hosts winpool.Hosts) {
	vc := vsphereClient(ctx, r.clients, diags)
	if vc == nil {
		return nil, nil
	}
	return (&nodeResource{clients: r.clients}).managerOf(ctx, vc, diags), winpool.NewHosts(vc)
}

func (r *nodePoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "create")
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	password, sshKey := writeOnlySecrets(ctx, req.Config, &resp.Diagnostics)
	timeout, diags := plan.Timeouts.Create(ctx, poolCreateTimeout)
	resp.Diagnostics.Append(diags...)
	pool := plan.pool(ctx, password, sshKey, &resp.Diagnostics)
	withJoinAccount(&pool.Template, r.clients, &resp.Diagnostics)
	m, hosts := r.manager(ctx, &resp.Diagnostics)
	// A member a failed create leaves is removed with its account.
	warnKept := removeComputerAccounts(ctx, m, r.clients, plan.machineModel, &resp.Diagnostics)
	defer warnKept()
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plan.ID = plan.NamePrefix
	plan.Transport = withHostKey(plan.Transport, "")
	setIdentity(ctx, resp.Identity, nodePoolIdentity{NamePrefix: plan.NamePrefix}, &resp.Diagnostics)
	members, err := winpool.Converge(ctx, m, pool, nil, r.options(ctx, &plan, &resp.State, &resp.Diagnostics))
	plan.setMembers(ctx, members, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err == nil {
		err = winpool.SpreadOverHosts(ctx, hosts, pool, members, true)
	}
	if err != nil {
		more := ""
		if len(members) > 0 {
			more = fmt.Sprintf("\n\nEvery member whose VM exists (%d) is in the state. Terraform marks the pool tainted, so the next apply "+
				"replaces the whole pool; to keep the members that work, run terraform untaint %s and apply: the members whose create did "+
				"not finish are replaced.", len(members), "<the pool's address>")
		}
		addGuestError(&resp.Diagnostics, fmt.Sprintf("creating Windows node pool (%s)", pool.Prefix), err, false, uacCause(plan.AdminUser.ValueString(), err)+more)
	}
}

// options saves the members into the state whenever they change (Converge
// calls Save on the caller's goroutine, one change at a time).
func (r *nodePoolResource) options(ctx context.Context, model *nodePoolModel, state *tfsdk.State, diags *diag.Diagnostics) winpool.Options {
	return winpool.Options{
		Save: func(members []winpool.Member) {
			model.setMembers(ctx, members, diags)
			diags.Append(state.Set(ctx, model)...)
		},
		Progress: func(msg string, fields map[string]any) {
			tflog.Info(ctx, "windows node pool: "+msg, fields)
		},
	}
}

func (r *nodePoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "read")
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, nodePoolIdentity{NamePrefix: state.NamePrefix}, &resp.Diagnostics)
	m, _ := r.manager(ctx, &resp.Diagnostics)
	members := state.members(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	vms := make(map[string]string, len(members))
	for _, mb := range members {
		vms[mb.Name] = mb.VMID
	}
	// The members' health: one snapshot of their agents and the cluster
	// DNS for all of them (winnode.Manager.ReadManyHealth).
	machine := state.machine()
	observed, err := m.ReadManyHealth(ctx, vms, winnode.Spec{Networking: machine.NetworkingID.ValueString()})
	var healthErr *winnode.HealthError
	switch {
	case errors.As(err, &healthErr):
		// The members as read; their health shows at the next refresh
		// that can read it.
		resp.Diagnostics.AddWarning(fmt.Sprintf("Reading the health of Windows node pool (%s)", state.NamePrefix.ValueString()), err.Error())
	case err != nil:
		resp.Diagnostics.AddError(fmt.Sprintf("reading Windows node pool (%s)", state.NamePrefix.ValueString()), err.Error())
		return
	}
	if err == nil && machine.ProbeOnRefresh.ValueBool() {
		// Each Ready member's network probed again (probe_on_refresh):
		// a failure counts toward replace_unhealthy_after.
		for name, obs := range observed {
			if obs.VM == nil || obs.Node == nil {
				continue
			}
			spec := winnode.Spec{Name: name, Networking: machine.NetworkingID.ValueString(), ClusterDomain: machine.ClusterDomain.ValueString()}
			failure, perr := m.ProbeAtRefresh(ctx, spec, obs.Node)
			if perr != nil {
				resp.Diagnostics.AddWarning(fmt.Sprintf("Network probe of Windows node pool (%s) member %s did not run", state.NamePrefix.ValueString(), name), perr.Error())
				continue
			}
			obs.ProbeFailure = failure
			observed[name] = obs
		}
	}
	now := time.Now()
	for i := range members {
		members[i].Observe(observed[members[i].Name], now)
	}
	state.setMembers(ctx, members, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodePoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "update")
	var plan, state nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, nodePoolIdentity{NamePrefix: state.NamePrefix}, &resp.Diagnostics)
	password, sshKey := writeOnlySecrets(ctx, req.Config, &resp.Diagnostics)
	timeout, diags := plan.Timeouts.Update(ctx, poolUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	pool := plan.pool(ctx, password, sshKey, &resp.Diagnostics)
	withJoinAccount(&pool.Template, r.clients, &resp.Diagnostics)
	members := state.members(ctx, &resp.Diagnostics)
	m, hosts := r.manager(ctx, &resp.Diagnostics)
	// The members a roll removes joined the domain the state records.
	warnKept := removeComputerAccounts(ctx, m, r.clients, state.machineModel, &resp.Diagnostics)
	defer warnKept()
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if imported(ctx, req.Private) {
		members = winpool.Adopt(members, pool.Revision)
	}
	if carried, ok := carriedRevision(ctx, r.clients, state, plan, &resp.Diagnostics); ok {
		// The template changed form, not VM: the members made of it stay.
		members = winpool.Restamp(members, carried, pool.Revision)
	}
	plan.ID = plan.NamePrefix
	plan.Transport = withHostKey(plan.Transport, "")
	summary := fmt.Sprintf("updating Windows node pool (%s)", pool.Prefix)
	before := map[string]bool{}
	for _, mb := range members {
		before[mb.Name] = true
	}
	members, err := winpool.Converge(ctx, m, pool, members, r.options(ctx, &plan, &resp.State, &resp.Diagnostics))
	plan.setMembers(ctx, members, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		addGuestError(&resp.Diagnostics, summary, err, false,
			"\n\nEvery member whose VM exists is in the state; the next apply resumes from there (members whose create did not finish are replaced).")
		return
	}
	if err := winpool.SpreadOverHosts(ctx, hosts, pool, members, state.AntiAffinity.ValueBool()); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if !plan.Labels.Equal(state.Labels) || !plan.Taints.Equal(state.Taints) {
		// New members joined with them; the others change in place.
		if err := winpool.ApplySettings(ctx, m, pool, members, func(mb winpool.Member) bool { return before[mb.Name] }); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
}

func (r *nodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "delete")
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, poolDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	members := state.members(ctx, &resp.Diagnostics)
	pool := state.emptied(ctx, len(members), &resp.Diagnostics)
	m, hosts := r.manager(ctx, &resp.Diagnostics)
	warnKept := removeComputerAccounts(ctx, m, r.clients, state.machineModel, &resp.Diagnostics)
	defer warnKept()
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Zero replicas, all may go at once (max_parallel at a time): each
	// member is drained, its Node deleted and its VM destroyed. A failure
	// leaves the members not yet removed in the state.
	left, err := winpool.Converge(ctx, m, pool, members, r.options(ctx, &state, &resp.State, &resp.Diagnostics))
	if err == nil {
		err = winpool.SpreadOverHosts(ctx, hosts, pool, nil, state.AntiAffinity.ValueBool())
	}
	if err != nil {
		// The state holds the members left: Save recorded each removal.
		resp.Diagnostics.AddError(fmt.Sprintf("deleting Windows node pool (%s)", pool.Prefix),
			fmt.Sprintf("%v\n\n%d members are left, and stay in the state; destroy again to retry.", err, len(left)))
	}
}

// ImportState takes the name prefix (every Windows node named
// <prefix>-...), or a comma-separated list of node names sharing one.
func (r *nodePoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "import")
	ref := req.ID
	var id nodePoolIdentity
	if importedIdentity(ctx, req, &id, "name_prefix", &resp.Diagnostics) {
		ref = id.NamePrefix.ValueString()
	}
	m, _ := r.manager(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	prefix, found, err := discoverPool(ctx, m, ref)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing Windows node pool (%s)", ref), err.Error())
		return
	}
	resp.Diagnostics.Append(setImportedPool(ctx, prefix, found, &resp.State)...)
	setIdentity(ctx, resp.Identity, nodePoolIdentity{NamePrefix: types.StringValue(prefix)}, &resp.Diagnostics)
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}

func (r *nodePoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var surge, unavailable types.Int64
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("max_surge"), &surge)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("max_unavailable"), &unavailable)...)
	// Both default to known values; a configured 0 for both stops every roll.
	surgeZero := (surge.IsNull() && poolDefaultMaxSurge == 0) || (!surge.IsNull() && !surge.IsUnknown() && surge.ValueInt64() == 0)
	unavailableZero := (unavailable.IsNull() && poolDefaultMaxUnavailable == 0) || (!unavailable.IsNull() && !unavailable.IsUnknown() && unavailable.ValueInt64() == 0)
	if surgeZero && unavailableZero {
		resp.Diagnostics.AddAttributeError(path.Root("max_surge"), "The pool could never roll",
			"max_surge and max_unavailable are both 0: no new member could be created before an old one goes, and no old one could go first. "+
				"Set max_surge to 1 or more (a new member is Ready before an old one is drained), or max_unavailable to 1 or more.")
	}
	var transport types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("transport"), &transport)...)
	if !transport.IsNull() && !transport.IsUnknown() {
		if key, _ := transport.Attributes()["ssh_host_key"].(types.String); !key.IsNull() {
			resp.Diagnostics.AddAttributeError(path.Root("transport").AtName("ssh_host_key"), "A pool's members each have their own host key",
				"transport.ssh_host_key pins one SSH host key, but each member generates its own at its first boot (the golden image's sysprep "+
					"deletes the template's). Remove it: each member's key is recorded in members[*].ssh_host_key at its join.")
		}
	}
}
