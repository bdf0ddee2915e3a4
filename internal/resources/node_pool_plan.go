package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// ModifyPlan says what an apply does to the members: the pool's revision,
// and — when members are created, replaced or removed — a warning naming
// them, why, in what order and how the roll keeps capacity. A new pool runs
// the readiness checks of a windows_node at plan.
func (r *nodePoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx = vsphereOperation(ctx, "windows_node_pool", "plan")
	if req.Plan.Raw.IsNull() {
		var state nodePoolModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if n := len(state.Members.Elements()); n > 0 {
			resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node pool %s: %d members will be drained and destroyed", state.NamePrefix.ValueString(), n),
				fmt.Sprintf("Each member is cordoned and drained, its Node deleted and its VM destroyed, %d at a time. %s",
					state.MaxParallel.ValueInt64(), drainDescription(state.drainOptions(ctx, &resp.Diagnostics))))
		}
		return
	}
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		warnAdminUser(ctx, req.Plan, &resp.Diagnostics)
		warnNoProxy(ctx, r.clients, "windows_node_pool "+plan.NamePrefix.ValueString(), plan.machineModel, nil, &resp.Diagnostics)
	}
	planActiveDirectory(ctx, r.clients, plan.machineModel, "windows_node_pool "+plan.NamePrefix.ValueString(), &resp.Diagnostics)
	rev, known := plan.revision(ctx, &resp.Diagnostics)
	plan.ID = plan.NamePrefix
	plan.Transport = withHostKey(plan.Transport, "")
	if !known {
		plan.Revision, plan.Members, plan.ReadyReplicas = types.StringUnknown(), types.ListUnknown(memberObjectType), types.Int64Unknown()
	} else {
		plan.Revision = types.StringValue(rev)
	}
	if req.State.Raw.IsNull() {
		plan.Members, plan.ReadyReplicas = types.ListUnknown(memberObjectType), types.Int64Unknown()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		machine := plan.machine()
		machine.Name = types.StringValue(fmt.Sprintf("%s (pool)", plan.NamePrefix.ValueString()))
		(&nodeResource{clients: r.clients}).planChecks(ctx, machine, resp)
		return
	}
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !imported(ctx, req.Private) {
		warnPoolWinRMHTTPAfterVMTools(ctx, state.Transport, plan.Transport, &resp.Diagnostics)
	}
	prefix := state.NamePrefix.ValueString()
	members := state.members(ctx, &resp.Diagnostics)
	warnWindowsSupport(ctx, r.clients, "Windows node pool "+prefix, memberBuilds(members), plan.SkipChecks, &resp.Diagnostics)
	if !known {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows node pool %s may roll its members", prefix),
			"What the members are made of ("+strings.Join(unknownInputs(plan), ", ")+") is known only after apply: if it changed, "+
				"every member is replaced, as the roll settings allow."+revisionsNow(members))
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if imported(ctx, req.Private) {
		members = winpool.Adopt(members, rev)
	}
	carried, restamped := carriedRevision(ctx, r.clients, state, plan, &resp.Diagnostics)
	if restamped {
		members = winpool.Restamp(members, carried, rev)
	}
	pool := winpool.Pool{Prefix: prefix, Revision: rev, Policy: plan.policy()}
	rollout := winpool.Plan(pool, members, time.Now())
	if rollout.Empty() && !imported(ctx, req.Private) {
		plan.Members, plan.ReadyReplicas = state.Members, state.ReadyReplicas
		if restamped {
			plan.Members = restampMemberList(ctx, state.Members, carried, rev, &resp.Diagnostics)
		}
	} else {
		plan.Members, plan.ReadyReplicas = types.ListUnknown(memberObjectType), types.Int64Unknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if !rollout.Empty() {
		revs := updateRevisions{Has: map[string]string{}, Will: r.templateBuildFull(ctx, plan.Template)}
		for _, m := range members {
			revs.Has[m.Name] = m.WindowsBuildFull
		}
		summary, detail := describeRollout(pool, rollout, changedInputs(state, plan), revs, plan.drainOptions(ctx, &resp.Diagnostics))
		resp.Diagnostics.AddWarning(summary, detail)
	}
	if summary, detail := describeUnhealthy(prefix, members, rollout, pool.ReplaceUnhealthyAfter); summary != "" {
		resp.Diagnostics.AddWarning(summary, detail)
	}
}

// describeUnhealthy is the plan's warning of the members the refresh found
// unhealthy past Ready (members[*].health_causes) that the apply does not
// replace: each with its causes, and what would replace it.
func describeUnhealthy(prefix string, members []winpool.Member, r winpool.Rollout, after time.Duration) (string, string) {
	goes := map[string]bool{}
	for _, c := range r.Goes() {
		goes[c.Member] = true
	}
	var b strings.Builder
	n := 0
	for _, m := range members {
		if len(m.Causes) == 0 || goes[m.Name] {
			continue
		}
		n++
		fmt.Fprintf(&b, "  - %s (%s): %s\n", m.Name, m.Health, strings.Join(m.Causes, "; "))
	}
	if n == 0 {
		return "", ""
	}
	next := "replace_unhealthy_after is not set, so the apply replaces none of them for it."
	if after > 0 {
		next = fmt.Sprintf("A member NotReady, or with agents not Running and Ready, for %s (replace_unhealthy_after) is replaced by the apply after that.", after)
	}
	return fmt.Sprintf("Windows node pool %s: %d member(s) unhealthy", prefix, n),
		"The refresh found:\n" + b.String() + next + " The cluster DNS without endpoints is the cluster's to repair: no member's replacement repairs it."
}

// carriedRevision is the revision that members made of the plan's inputs
// carry when only the form of the template changed (template_identity.go):
// the plan's inputs with the state's template value. restamped is false when
// the template did not change form (the same value, another VM, or one
// known only at apply).
func carriedRevision(ctx context.Context, c *clients.Clients, state, plan nodePoolModel, diags *diag.Diagnostics) (carried string, restamped bool) {
	if state.Template.Equal(plan.Template) || !sameTemplate(ctx, c, state.Template, plan.Template) {
		return "", false
	}
	asBefore := plan
	asBefore.Template = state.Template
	return asBefore.revision(ctx, diags)
}

// restampMemberList is the state's members with the revision from carried
// to rev.
func restampMemberList(ctx context.Context, list types.List, from, to string, diags *diag.Diagnostics) types.List {
	if list.IsNull() || list.IsUnknown() {
		return list
	}
	var members []memberModel
	diags.Append(list.ElementsAs(ctx, &members, false)...)
	for i := range members {
		if members[i].Revision.ValueString() == from {
			members[i].Revision = types.StringValue(to)
		}
	}
	out, d := types.ListValueFrom(ctx, memberObjectType, members)
	diags.Append(d...)
	return out
}

// policy is the roll settings of the model.
func (m *nodePoolModel) policy() winpool.Policy {
	p := winpool.Policy{
		Replicas: int(m.Replicas.ValueInt64()), MaxParallel: int(m.MaxParallel.ValueInt64()),
		MaxSurge: int(m.MaxSurge.ValueInt64()), MaxUnavailable: int(m.MaxUnavailable.ValueInt64()),
	}
	p.ReplaceUnhealthyAfter, _ = time.ParseDuration(m.ReplaceUnhealthyAfter.ValueString())
	return p
}

// describeRollout is the plan's warning of a rollout.
func describeRollout(p winpool.Pool, r winpool.Rollout, changed []string, revs updateRevisions, drain kube.DrainOptions) (string, string) {
	var parts []string
	if n := len(r.Replace); n > 0 {
		parts = append(parts, fmt.Sprintf("replaces %d", n))
	}
	if r.Create > 0 {
		parts = append(parts, fmt.Sprintf("adds %d", r.Create))
	}
	if n := len(r.Remove); n > 0 {
		parts = append(parts, fmt.Sprintf("removes %d", n))
	}
	summary := fmt.Sprintf("Windows node pool %s %s member(s)", p.Prefix, strings.Join(parts, ", "))
	var b strings.Builder
	why := func(c winpool.Change) string {
		if c.Reason == winpool.ReasonOutdated && len(changed) > 0 {
			return c.Reason + ": " + strings.Join(changed, ", ") + " changed"
		}
		return c.Reason
	}
	if len(r.Replace) > 0 {
		b.WriteString("Replaced, in this order (with the update revision, build.UBR, each has and its successor will have):\n")
		for i, c := range r.Replace {
			fmt.Fprintf(&b, "  %d. %s (%s): %s -> %s\n", i+1, c.Member, why(c), revs.has(c.Member), revs.will())
		}
	}
	if len(r.Remove) > 0 {
		b.WriteString("Removed, in this order:\n")
		for i, c := range r.Remove {
			fmt.Fprintf(&b, "  %d. %s (%s): %s\n", i+1, c.Member, why(c), revs.has(c.Member))
		}
	}
	if r.Create > 0 {
		fmt.Fprintf(&b, "Created: %d new member(s), up to %d at a time, at update revision %s.\n", r.Create, p.MaxParallel, revs.will())
	}
	if len(r.Replace) > 0 || len(r.Remove) > 0 {
		fmt.Fprintf(&b, "\nWith max_surge = %d and max_unavailable = %d, the pool has at most %d members and at least %d Ready ones "+
			"throughout: a new member counts once it is Ready with its networking agents running. A member that goes is cordoned and "+
			"drained, its Node deleted and its VM destroyed. An interrupted apply leaves every member in the state, and the next "+
			"apply resumes from there. %s", p.MaxSurge, p.MaxUnavailable, p.Replicas+p.MaxSurge, max(p.Replicas-p.MaxUnavailable, 0), drainDescription(drain))
	}
	return summary, strings.TrimSpace(b.String())
}

// changedInputs names the inputs of the revision that differ between the
// state and the plan.
func changedInputs(state, plan nodePoolModel) []string {
	var out []string
	for _, in := range revisionAttributes(state, plan) {
		// Both null is no change, whatever element types a model made in
		// Go (not read from Terraform) leaves its collections without.
		if !in.state.Equal(in.plan) && !(in.state.IsNull() && in.plan.IsNull()) {
			out = append(out, in.name)
		}
	}
	return out
}

// unknownInputs names the inputs of the revision unknown in the plan.
func unknownInputs(plan nodePoolModel) []string {
	var out []string
	for _, in := range revisionAttributes(plan, plan) {
		if in.plan.IsUnknown() {
			out = append(out, in.name)
		}
	}
	return out
}

type revisionAttribute struct {
	name        string
	state, plan attr.Value
}

// revisionAttributes pairs the revision's inputs of two models by name.
func revisionAttributes(a, b nodePoolModel) []revisionAttribute {
	return []revisionAttribute{
		{"template", a.Template, b.Template}, {"folder", a.Folder, b.Folder}, {"resource_pool_id", a.ResourcePoolID, b.ResourcePoolID},
		{"datastore_id", a.DatastoreID, b.DatastoreID}, {"network_id", a.NetworkID, b.NetworkID}, {"host_id", a.HostID, b.HostID},
		{"num_cpus", a.NumCPUs, b.NumCPUs}, {"memory_mb", a.MemoryMB, b.MemoryMB}, {"disk_size_gb", a.DiskSizeGB, b.DiskSizeGB},
		{"linked_clone", a.LinkedClone, b.LinkedClone}, {"admin_user", a.AdminUser, b.AdminUser},
		{"admin_password_wo_version", a.AdminPasswordWOVersion, b.AdminPasswordWOVersion}, {"time_zone", a.TimeZone, b.TimeZone},
		{"networking_id", a.NetworkingID, b.NetworkingID}, {"api_server", a.APIServer, b.APIServer},
		{"cluster_dns", a.ClusterDNS, b.ClusterDNS}, {"cluster_domain", a.ClusterDomain, b.ClusterDomain},
		{"service_cidr", a.ServiceCIDR, b.ServiceCIDR}, {"cluster_cidr", a.ClusterCIDR, b.ClusterCIDR},
		{"failure_domains", a.FailureDomains, b.FailureDomains}, {"proxy", a.Proxy, b.Proxy},
		{"datastore_cluster_id", a.DatastoreClusterID, b.DatastoreClusterID}, {"storage_policy_id", a.StoragePolicyID, b.StoragePolicyID},
		{"tags", a.Tags, b.Tags}, {"custom_attributes", a.CustomAttributes, b.CustomAttributes}, {"annotation", a.Annotation, b.Annotation},
		{"disk", a.Disks, b.Disks}, {"network_interface", a.NetworkInterfaces, b.NetworkInterfaces},
	}
}

// memberBuilds are the members' builds, as their Nodes reported them.
func memberBuilds(members []winpool.Member) []string {
	out := make([]string, 0, len(members))
	for _, m := range members {
		out = append(out, m.WindowsBuildFull)
	}
	return out
}

// updateRevisions are the Windows builds with their update revision
// (build.UBR) the plan names per member: the one each member has, as its
// Node reported it at the refresh, and the one a new member will have, as
// the template's golden image recorded it ("" when the template is known
// only after apply, or was not read). A warning rather than a per-member
// attribute: a roll replaces members by new ones whose names are known only
// after apply, so Terraform would render the whole members list as "(known
// after apply)"; the warning prints under the plan, member by member, and
// again when the apply plans the same change.
type updateRevisions struct {
	Has  map[string]string
	Will string
}

func (u updateRevisions) has(member string) string {
	if b := u.Has[member]; b != "" {
		return b
	}
	return "(not reported)"
}

func (u updateRevisions) will() string {
	if u.Will != "" {
		return u.Will
	}
	return "(the new template's, known after apply)"
}

// revisionsNow lists the members' update revisions, for a plan that cannot
// yet tell which members roll.
func revisionsNow(members []winpool.Member) string {
	if len(members) == 0 {
		return ""
	}
	parts := make([]string, 0, len(members))
	revs := updateRevisions{Has: map[string]string{}}
	for _, m := range members {
		revs.Has[m.Name] = m.WindowsBuildFull
		parts = append(parts, m.Name+" "+revs.has(m.Name))
	}
	return " The members' update revisions (build.UBR) now: " + strings.Join(parts, ", ") + "; a new member gets the new template's, known after apply."
}

// templateBuildFull reads the build with its update revision a known
// template's golden image recorded: "" when it cannot (unknown, no vCenter
// yet, not a golden image), which the plan then says is known after apply.
func (r *nodePoolResource) templateBuildFull(ctx context.Context, template types.String) string {
	return templateBuildFull(ctx, r.clients, template)
}
