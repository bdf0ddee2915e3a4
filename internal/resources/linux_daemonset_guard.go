package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/linuxguard"
)

func NewLinuxDaemonSetGuard() resource.Resource { return &linuxDaemonSetGuardResource{} }

type linuxDaemonSetGuardResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure   = (*linuxDaemonSetGuardResource)(nil)
	_ resource.ResourceWithImportState = (*linuxDaemonSetGuardResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*linuxDaemonSetGuardResource)(nil)
)

func (r *linuxDaemonSetGuardResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_linux_daemonset_guard"
	// The identity lists the guarded DaemonSets, which change in place.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *linuxDaemonSetGuardResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan plans what the guard will select and that every selected
// DaemonSet ends up guarded. Planning `guarded` as all of `selected` is what
// turns a selector removed outside Terraform into a diff.
func (r *linuxDaemonSetGuardResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan linuxDaemonSetGuardModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *linuxDaemonSetGuardModel
	if !req.State.Raw.IsNull() {
		state = &linuxDaemonSetGuardModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	unknown := types.SetUnknown(types.StringType)
	switch {
	case plan.Names.IsUnknown():
		plan.Selected, plan.Guarded = unknown, unknown
	case !plan.Names.IsNull():
		plan.Selected, plan.Guarded = plan.Names, plan.Names
	case state != nil && state.Names.IsNull() && !state.Selected.IsNull() && !state.Selected.IsUnknown():
		// names omitted: the selection made at creation stands.
		plan.Selected, plan.Guarded = state.Selected, state.Selected
	default:
		// Created now, or names just removed: the selection is made at apply.
		plan.Selected, plan.Guarded = unknown, unknown
	}
	plan.ID = types.StringUnknown()
	if !plan.Namespace.IsUnknown() && !plan.Names.IsUnknown() {
		plan.ID = types.StringValue(guardID(plan.Namespace.ValueString(), setStrings(ctx, plan.Names, &resp.Diagnostics)))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	// For the readiness checks of nodes planned after this guard (they
	// depend on it): what it guards counts as guarded.
	if r.clients != nil && !plan.Namespace.IsUnknown() {
		ns := plan.Namespace.ValueString()
		switch {
		case !plan.Selected.IsUnknown():
			for _, name := range setStrings(ctx, plan.Selected, &resp.Diagnostics) {
				r.clients.Planned.AddGuard(ns + "/" + name)
			}
		case plan.Names.IsNull():
			r.clients.Planned.AddGuard(ns + "/*")
		}
	}
}

func (r *linuxDaemonSetGuardResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan linuxDaemonSetGuardModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	g := r.guard(ctx, plan.Namespace, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := fmt.Sprintf("creating Windows Linux DaemonSet guard (%s)", g.Namespace)
	selected, err := g.Select(ctx, setStrings(ctx, plan.Names, &resp.Diagnostics), !plan.Names.IsNull())
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	r.guardAndRecord(ctx, g, &plan, selected, summary, &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, guardIdentity(ctx, plan.Namespace, plan.Names, &resp.Diagnostics), &resp.Diagnostics)
}

func (r *linuxDaemonSetGuardResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state linuxDaemonSetGuardModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, guardIdentity(ctx, state.Namespace, state.Names, &resp.Diagnostics), &resp.Diagnostics)
	g := r.guard(ctx, state.Namespace, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	namespace := g.Namespace
	summary := fmt.Sprintf("reading Windows Linux DaemonSet guard (%s)", namespace)
	selected, known := state.selection(ctx, &resp.Diagnostics)
	obs, err := g.Observe(ctx, selected, known)
	for _, name := range obs.Missing {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows Linux DaemonSet guard (%s): DaemonSet %s/%s not found", namespace, namespace, name),
			"The DaemonSet was deleted outside Terraform; the guard no longer selects it. If `names` lists it, the next apply fails until it exists again or is removed from `names`.")
	}
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	state.ID = types.StringValue(guardID(namespace, setStrings(ctx, state.Names, &resp.Diagnostics)))
	state.Selected = stringSet(obs.Present)
	state.Guarded = stringSet(obs.Guarded)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *linuxDaemonSetGuardResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state linuxDaemonSetGuardModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	g := r.guard(ctx, plan.Namespace, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := fmt.Sprintf("updating Windows Linux DaemonSet guard (%s)", g.Namespace)
	previous := setStrings(ctx, state.Selected, &resp.Diagnostics)
	// Unknown when names was removed: the guard keeps what it guards and
	// adds what is unconstrained.
	planned := setStrings(ctx, plan.Selected, &resp.Diagnostics)
	selected, err := g.Reselect(ctx, previous, planned, !plan.Selected.IsUnknown())
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	r.guardAndRecord(ctx, g, &plan, selected, summary, &resp.State, &resp.Diagnostics)
	setIdentity(ctx, resp.Identity, guardIdentity(ctx, plan.Namespace, plan.Names, &resp.Diagnostics), &resp.Diagnostics)
}

// guardAndRecord guards the selected DaemonSets and saves the result, even
// after a failure: the state then names every DaemonSet that may carry the
// selector, the resource is tainted, and its replacement starts by giving
// the field back.
func (r *linuxDaemonSetGuardResource) guardAndRecord(ctx context.Context, g *linuxguard.Guard, plan *linuxDaemonSetGuardModel,
	selected []string, summary string, state *tfsdk.State, diags *diag.Diagnostics) {
	guarded, errs := g.Apply(ctx, selected)
	for _, err := range errs {
		diags.AddError(summary, err.Error())
	}
	plan.ID = types.StringValue(guardID(g.Namespace, setStrings(ctx, plan.Names, diags)))
	plan.Selected = stringSet(selected)
	plan.Guarded = stringSet(guarded)
	diags.Append(state.Set(ctx, plan)...)
}

func (r *linuxDaemonSetGuardResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state linuxDaemonSetGuardModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	g := r.guard(ctx, state.Namespace, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	for _, err := range g.Release(ctx, setStrings(ctx, state.Selected, &resp.Diagnostics)) {
		resp.Diagnostics.AddError(fmt.Sprintf("deleting Windows Linux DaemonSet guard (%s)", g.Namespace), err.Error())
	}
}

// ImportState takes `<namespace>` (the DaemonSets whose node selector the
// guard's field manager owns) or `<namespace>/<name>,<name>...`.
// By identity it takes the namespace and, optionally, the names.
func (r *linuxDaemonSetGuardResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importID := req.ID
	var id linuxDaemonSetGuardIdentity
	if importedIdentity(ctx, req, &id, "namespace", &resp.Diagnostics) {
		var names []string
		resp.Diagnostics.Append(id.Names.ElementsAs(ctx, &names, false)...)
		importID = guardID(id.Namespace.ValueString(), names)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	namespace, list, hasNames := strings.Cut(importID, "/")
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if namespace == "" || (hasNames && len(names) == 0) {
		resp.Diagnostics.AddError("importing Windows Linux DaemonSet guard",
			fmt.Sprintf("The import ID %q is not <namespace> or <namespace>/<name>,<name>: for example kube-system/kube-proxy,kube-flannel-ds.", importID))
		return
	}
	namesValue := types.SetNull(types.StringType)
	if hasNames {
		namesValue = stringSet(names)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), guardID(namespace, names))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), namespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("names"), namesValue)...)
	setIdentity(ctx, resp.Identity, guardIdentity(ctx, types.StringValue(namespace), namesValue, &resp.Diagnostics), &resp.Diagnostics)
}

// guard is the guard of a namespace, over the run's cluster; nil with a
// diagnostic when there is no cluster.
func (r *linuxDaemonSetGuardResource) guard(ctx context.Context, namespace types.String, diags *diag.Diagnostics) *linuxguard.Guard {
	k := kubeClient(ctx, r.clients, diags)
	if k == nil {
		return nil
	}
	return &linuxguard.Guard{Kube: k, Namespace: namespace.ValueString(), Progress: func(msg string, fields map[string]any) {
		tflog.Info(ctx, msg, fields)
	}}
}

// guardID is the import ID: the namespace, plus the sorted names when given.
func guardID(namespace string, names []string) string {
	if len(names) == 0 {
		return namespace
	}
	sorted := slices.Sorted(slices.Values(names))
	return namespace + "/" + strings.Join(sorted, ",")
}
