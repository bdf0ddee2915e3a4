package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// The plan tells what an apply does to a running node. Terraform shows an
// in-place update as harmless ("update in-place"), so every change that
// drains, restarts or power-cycles the node adds a warning to the plan that
// names the node, what will happen and how the drain behaves; so do a
// replacement and a destroy, which drain the old node. The warnings come
// from the plan itself: Terraform prints them under the plan, and again when
// it plans the same change at apply time.

// planDisruption warns about what the update (or replacement) of an existing
// node does to it, and leaves unknown what a power cycle may change.
func (r *nodeResource) planDisruption(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, state nodeModel
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	if replaced := withPaths(replacePaths(ctx, req), resp.RequiresReplace); len(replaced) > 0 {
		// The update revision (build.UBR) it has, as the Node reported it,
		// and the one the new node will have, as its template records it
		// (updateRevisions: a warning, as for a pool's members).
		revs := updateRevisions{Has: map[string]string{name: state.WindowsBuildFull.ValueString()}}
		if slices.ContainsFunc(replaced, func(p path.Path) bool { return p.Equal(path.Root("template")) }) {
			revs.Will = templateBuildFull(ctx, r.clients, plan.Template)
		} else {
			revs.Will = revs.has(name)
		}
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s will be replaced: the old node is drained and destroyed", name),
			fmt.Sprintf("Changing %s replaces the node: Terraform destroys the old node and creates a new one (the new one first with "+
				"lifecycle { create_before_destroy = true }). Update revision (build.UBR): %s -> %s. %s",
				pathList(replaced), revs.has(name), revs.will(), destroyDescription(state)))
		return
	}

	// What Update does, decided the same way (winnode.PlanHardware).
	hardware := winnode.PlanHardware(state.sizing(), plan.sizing())
	if hardware.Reconfigures() {
		var vm *vsphere.VMInfo
		if !hardware.Pending() {
			vm = r.readVM(ctx, state.ID.ValueString())
		}
		reason, known := hardware.PowerCycle(vm)
		summary, detail := hardwareWarning(name, hardwareChanges(hardware), reason, known, drainDescription(plan.drainOptions(ctx, &resp.Diagnostics)))
		resp.Diagnostics.AddWarning(summary, detail)
		// A power cycle (decided again at apply, when Update reads the VM)
		// restarts the kubelet and may give the guest another DHCP address.
		plan.Ready = types.BoolUnknown()
		plan.IPAddress = types.StringUnknown()
		plan.Health = types.ObjectUnknown(healthAttrTypes)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
	if grow := hardware.GrowDisk; grow != nil {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s: the disk grows while the node runs", name),
			fmt.Sprintf("disk_size_gb %d -> %d: the virtual disk is extended in place, with no drain, no restart and no power cycle. "+
				"The Windows volume is not extended by this update: extend it in the guest to use the new space.",
				grow.From, grow.To.Value))
	}

	switch plan.rejoin(ctx, state, req.Private) {
	case winnode.RejoinNodeGone:
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s will join the cluster again", name),
			"Its Node is gone from the cluster while the VM runs: the update runs the join steps again on the guest (a new bootstrap "+
				"token, the kubelet's configuration rewritten and its service restarted) and waits for the new Node to be Ready; the controller "+
				"manager allocates it a new pod CIDR. Nothing is drained: without a Node no pods are bound to it. No reboot.")
	case winnode.RejoinNetworking:
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s will join the cluster again in place", name),
			fmt.Sprintf("networking_id %s -> %s: the update runs the join steps again on the running guest: it removes the flanneld and "+
				"kube-proxy Windows services of the earlier design, rewrites the kubelet's (and the networking's CNI) configuration and restarts "+
				"the kubelet service, then waits for the Node to be Ready and for the networking's node agents, if it runs any. The Node may "+
				"report NotReady while the kubelet restarts. No drain and no reboot: pods already on the node are not restarted, so they "+
				"keep the network they started with until they are recreated.",
				valueOrNone(state.NetworkingID), valueOrNone(plan.NetworkingID)))
	}
}

// planAgentRepair plans the repair of a Ready node whose networking agents
// the refresh found failing (health.agents: no pod, CrashLoopBackOff, an
// image or container error): the update restarts their pods and waits for
// every agent (winnode.Manager.RepairAgents), so health is known only after
// apply; the warning names the node, the agents and each one's cause. An
// agent that is only starting (created, or running and not yet Ready) is
// named in a warning and left alone: restarting it would not help. A node
// NotReady is repaired whole instead (its services, then its agents).
func (r *nodeResource) planAgentRepair(ctx context.Context, state nodeModel, resp *resource.ModifyPlanResponse) {
	var plan nodeModel
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...)
	h, ok := state.health(ctx)
	if resp.Diagnostics.HasError() || !ok || !state.Joined.ValueBool() || !state.Ready.ValueBool() ||
		!plan.NetworkingID.Equal(state.NetworkingID) {
		return
	}
	down, failing, causes := h.agentsDown(ctx)
	if len(down) == 0 {
		return
	}
	name := state.Name.ValueString()
	found := fmt.Sprintf("The refresh found Node %s Ready and these agents not Running and Ready on it, so pods on the node have no "+
		"working Service or pod network:\n  - %s", name, strings.Join(causes, "\n  - "))
	if len(failing) == 0 {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s: node agents not Running and Ready (%s)", name, strings.Join(down, ", ")),
			found+"\nNone is failing (each is starting, or running and not yet Ready), so the apply leaves them alone; if they stay so, "+
				"look at the node's HNS networks and the agents' logs.")
		return
	}
	plan.Health = types.ObjectUnknown(healthAttrTypes)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s: node agents not Running and Ready (%s): the apply restarts %s",
		name, strings.Join(down, ", "), strings.Join(failing, ", ")),
		found+"\nThe apply evicts the failing agents' pods (their DaemonSets create them again at once) and waits until every agent is "+
			"Running and Ready; if one does not come back (its host state lost for good, as an HNS network its agent cannot create "+
			"again), the apply fails naming its pod, its state and its last output.")
}

// planHealth warns of what breaks a running node past Ready that the
// provider cannot repair, from the health the refresh read: the cluster
// DNS without endpoints (every pod on the node fails to resolve names; its
// network probe would fail naming DNS).
func planHealth(ctx context.Context, state nodeModel, resp *resource.ModifyPlanResponse) {
	h, ok := state.health(ctx)
	if !ok || !state.Joined.ValueBool() || h.ClusterDNSReadyEndpoints.ValueInt64() > 0 {
		return
	}
	name := state.Name.ValueString()
	resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s: cluster DNS has no endpoints", name),
		fmt.Sprintf("Service kube-system/kube-dns has no ready endpoints, so no pod on node %s resolves names through the cluster DNS "+
			"(its network probe fails at \"cluster DNS\"). The provider cannot repair this: make kube-dns select running DNS pods again "+
			"(kubectl -n kube-system get endpointslices -l kubernetes.io/service-name=kube-dns).", name))
}

// warnDestroy tells what destroying a node does to it.
func (r *nodeResource) warnDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return
	}
	var state nodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node %s will be drained and destroyed", state.Name.ValueString()), destroyDescription(state))
}

// readVM reads the node's VM for the plan; nil when it cannot (no vCenter
// configured yet, or unreachable), which leaves the decision to apply.
func (r *nodeResource) readVM(ctx context.Context, vmID string) *vsphere.VMInfo {
	if r.clients == nil || r.clients.VSphereConfig.Server == "" || vmID == "" {
		return nil
	}
	vc, err := r.clients.VSphere(ctx)
	if err != nil {
		return nil
	}
	info, err := vc.ReadVM(ctx, vsphere.VMRef(vmID))
	if err != nil {
		return nil
	}
	return info
}

// hardwareChanges names the CPU and memory changes as the plan shows them.
func hardwareChanges(c winnode.HardwareChange) []string {
	var out []string
	for _, f := range []struct {
		name   string
		change *winnode.Resize
	}{{"num_cpus", c.CPUs}, {"memory_mb", c.Memory}} {
		if f.change == nil {
			continue
		}
		to := "(known after apply)"
		if !f.change.To.Unknown {
			to = fmt.Sprint(f.change.To.Value)
		}
		out = append(out, fmt.Sprintf("%s %d -> %s", f.name, f.change.From, to))
	}
	return out
}

// hardwareWarning is the plan warning of a CPU or memory change: a drain and
// power cycle when the VM must be off for it (reason), none when hot-add
// applies it to the running VM, or either when that is known only at apply.
func hardwareWarning(node string, changes []string, reason string, known bool, drain string) (summary, detail string) {
	change := strings.Join(changes, ", ")
	cycle := "The update cordons and drains the node, shuts the guest down, reconfigures the VM, powers it on, waits until the Node " +
		"is Ready again and uncordons it. " + drain
	switch {
	case !known:
		return fmt.Sprintf("Windows node %s may be drained and power-cycled", node),
			change + ": whether the VM's CPU and memory hot-add can apply this while it runs is decided at apply, when the VM is read. " +
				"If they cannot (hot-add off, or CPUs or memory removed): " + cycle
	case reason != "":
		return fmt.Sprintf("Windows node %s will be drained and power-cycled", node), change + ": " + reason + ". " + cycle
	default:
		return fmt.Sprintf("Windows node %s: CPU and memory change while the node runs", node),
			change + ": the VM's hot-add applies this while it runs, with no drain, no restart and no power cycle."
	}
}

// destroyDescription says what destroying a node does, with its drain.
func destroyDescription(state nodeModel) string {
	var ignored diag.Diagnostics // the state's drain settings were valid when stored
	if !state.Joined.IsNull() && !state.Joined.ValueBool() {
		return "Its Node is already gone from the cluster, so nothing is drained: the guest is shut down and the VM destroyed."
	}
	return "Destroying cordons and drains the node, deletes its Node, shuts the guest down and destroys the VM. " +
		drainDescription(state.drainOptions(context.Background(), &ignored))
}

// drainDescription says how a drain with opts behaves, naming the settings
// (the drain block) that change it.
func drainDescription(opts kube.DrainOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The drain evicts the node's pods through the eviction API, so PodDisruptionBudgets are honoured (an eviction a budget "+
		"refuses is retried until it allows it); it gives up after %s (drain.timeout), failing the apply with the node left cordoned.", shortDuration(opts.Timeout))
	if opts.IgnoreDaemonSets {
		b.WriteString(" DaemonSet pods stay (drain.ignore_daemonsets).")
	} else {
		b.WriteString(" DaemonSet pods stop the drain before anything is evicted (drain.ignore_daemonsets = false).")
	}
	if opts.DeleteEmptyDirData {
		b.WriteString(" Pods with emptyDir volumes are evicted and that data is lost (drain.delete_emptydir_data).")
	} else {
		b.WriteString(" Pods with emptyDir volumes stop the drain before anything is evicted (drain.delete_emptydir_data = true evicts them, losing that data).")
	}
	if opts.Force {
		b.WriteString(" Pods no controller manages are deleted and not recreated (drain.force).")
	} else {
		b.WriteString(" Pods no controller manages stop the drain before anything is evicted (drain.force = true deletes them).")
	}
	return b.String()
}

// replacePaths are the attributes whose change replaces the node. The
// framework does not tell a resource's ModifyPlan what the attributes' plan
// modifiers decided (Terraform then plans the new node in a second call,
// without prior state), so they are asked again: one source of truth, the
// schema.
func replacePaths(ctx context.Context, req resource.ModifyPlanRequest) path.Paths {
	s, ok := req.Plan.Schema.(schema.Schema)
	if !ok {
		return nil
	}
	var out path.Paths
	for name, a := range s.Attributes {
		if p := path.Root(name); requiresReplace(ctx, req, p, a) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b path.Path) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// withPaths adds the paths ModifyPlan itself replaced for, sorted, once each.
func withPaths(paths, more path.Paths) path.Paths {
	for _, p := range more {
		if !paths.Contains(p) {
			paths = append(paths, p)
		}
	}
	slices.SortFunc(paths, func(a, b path.Path) int { return strings.Compare(a.String(), b.String()) })
	return paths
}

// requiresReplace runs the attribute's plan modifiers, as the framework ran
// them, and tells whether one of them requires a replacement.
func requiresReplace(ctx context.Context, req resource.ModifyPlanRequest, p path.Path, a schema.Attribute) bool {
	switch a := a.(type) {
	case schema.StringAttribute:
		return anyReplaces(ctx, req, p, a.PlanModifiers, func(m planmodifier.String, config, plan, state types.String) bool {
			resp := &planmodifier.StringResponse{PlanValue: plan}
			m.PlanModifyString(ctx, planmodifier.StringRequest{Path: p, PathExpression: p.Expression(), Config: req.Config, ConfigValue: config,
				Plan: req.Plan, PlanValue: plan, State: req.State, StateValue: state, Private: req.Private}, resp)
			return resp.RequiresReplace
		})
	case schema.Int64Attribute:
		return anyReplaces(ctx, req, p, a.PlanModifiers, func(m planmodifier.Int64, config, plan, state types.Int64) bool {
			resp := &planmodifier.Int64Response{PlanValue: plan}
			m.PlanModifyInt64(ctx, planmodifier.Int64Request{Path: p, PathExpression: p.Expression(), Config: req.Config, ConfigValue: config,
				Plan: req.Plan, PlanValue: plan, State: req.State, StateValue: state, Private: req.Private}, resp)
			return resp.RequiresReplace
		})
	case schema.BoolAttribute:
		return anyReplaces(ctx, req, p, a.PlanModifiers, func(m planmodifier.Bool, config, plan, state types.Bool) bool {
			resp := &planmodifier.BoolResponse{PlanValue: plan}
			m.PlanModifyBool(ctx, planmodifier.BoolRequest{Path: p, PathExpression: p.Expression(), Config: req.Config, ConfigValue: config,
				Plan: req.Plan, PlanValue: plan, State: req.State, StateValue: state, Private: req.Private}, resp)
			return resp.RequiresReplace
		})
	case schema.ListNestedAttribute:
		return anyReplaces(ctx, req, p, a.PlanModifiers, func(m planmodifier.List, config, plan, state types.List) bool {
			resp := &planmodifier.ListResponse{PlanValue: plan}
			m.PlanModifyList(ctx, planmodifier.ListRequest{Path: p, PathExpression: p.Expression(), Config: req.Config, ConfigValue: config,
				Plan: req.Plan, PlanValue: plan, State: req.State, StateValue: state, Private: req.Private}, resp)
			return resp.RequiresReplace
		})
	case schema.SingleNestedAttribute:
		return anyReplaces(ctx, req, p, a.PlanModifiers, func(m planmodifier.Object, config, plan, state types.Object) bool {
			resp := &planmodifier.ObjectResponse{PlanValue: plan}
			m.PlanModifyObject(ctx, planmodifier.ObjectRequest{Path: p, PathExpression: p.Expression(), Config: req.Config, ConfigValue: config,
				Plan: req.Plan, PlanValue: plan, State: req.State, StateValue: state, Private: req.Private}, resp)
			return resp.RequiresReplace
		})
	}
	return false
}

// anyReplaces reads the attribute at p from the configuration, the plan and
// the prior state, and tells whether one of its modifiers, run by replaces,
// requires a replacement. The framework's typed modifier requests have no
// common interface, so each attribute type says how to run one.
func anyReplaces[V, M any](ctx context.Context, req resource.ModifyPlanRequest, p path.Path, modifiers []M, replaces func(m M, config, plan, state V) bool) bool {
	var config, plan, state V
	if req.Config.GetAttribute(ctx, p, &config).HasError() || req.Plan.GetAttribute(ctx, p, &plan).HasError() ||
		req.State.GetAttribute(ctx, p, &state).HasError() {
		return false
	}
	return slices.ContainsFunc(modifiers, func(m M) bool { return replaces(m, config, plan, state) })
}

func pathList(paths path.Paths) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

func valueOrNone(v types.String) string {
	switch {
	case v.IsUnknown():
		return "(known after apply)"
	case v.IsNull():
		return "(none)"
	}
	return v.ValueString()
}
