package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// defaultHandler is the runtime handler containerd 1.7 and 2.x configure for
// process-isolated Windows containers
// (plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runhcs-wcow-process).
const defaultHandler = "runhcs-wcow-process"

// defaultArch is the CPU architecture a RuntimeClass selects by default, and
// an imported one whose selector names none.
const defaultArch = "amd64"

func NewRuntimeClass() resource.Resource { return &runtimeClassResource{} }

type runtimeClassResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure        = (*runtimeClassResource)(nil)
	_ resource.ResourceWithImportState      = (*runtimeClassResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*runtimeClassResource)(nil)
	_ resource.ResourceWithConfigValidators = (*runtimeClassResource)(nil)
)

func (r *runtimeClassResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_runtime_class"
}

func (r *runtimeClassResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan derives what the plan can know before apply: the build of a
// windows_version, and the complete node selector. Planning the complete
// selector is what turns a change made outside Terraform into a diff.
func (r *runtimeClassResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan runtimeClassModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if v := plan.WindowsVersion; !v.IsNull() && !v.IsUnknown() {
		if release, err := winversion.ByVersion(v.ValueString()); err == nil {
			plan.WindowsBuild = types.StringValue(release.Build)
		}
	}
	selector, known := plan.nodeSelector(ctx, &resp.Diagnostics)
	if known {
		plan.EffectiveNodeSelector = stringMap(selector)
	} else {
		plan.EffectiveNodeSelector = types.MapUnknown(types.StringType)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *runtimeClassResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics, "creating", (*kube.Client).CreateRuntimeClass)
}

func (r *runtimeClassResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics, "updating", (*kube.Client).UpdateRuntimeClass)
}

// write makes the cluster's RuntimeClass what the plan describes, with
// apply (create or update), and records the result.
func (r *runtimeClassResource) write(ctx context.Context, planned tfsdk.Plan, state *tfsdk.State, identity *tfsdk.ResourceIdentity,
	diags *diag.Diagnostics, verb string, apply func(*kube.Client, context.Context, kube.RuntimeClassSpec) (*nodev1.RuntimeClass, error)) {
	var plan runtimeClassModel
	diags.Append(planned.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	spec := plan.spec(ctx, diags)
	k := kubeClient(ctx, r.clients, diags)
	if diags.HasError() {
		return
	}
	summary := fmt.Sprintf("%s Windows RuntimeClass (%s)", verb, spec.Name)
	tflog.Info(ctx, verb+" RuntimeClass", map[string]any{"name": spec.Name, "handler": spec.Handler})
	rc, err := apply(k, ctx, spec)
	switch {
	case apierrors.IsAlreadyExists(err):
		diags.AddAttributeError(path.Root("name"), summary,
			fmt.Sprintf("A RuntimeClass named %q already exists in the cluster. Import it to manage it with Terraform: "+
				"terraform import <address> %s", spec.Name, spec.Name))
		return
	case err != nil:
		diags.AddError(summary, err.Error())
		return
	}
	plan.fromWritten(rc)
	diags.Append(state.Set(ctx, &plan)...)
	setIdentity(ctx, identity, runtimeClassIdentity{Name: plan.Name}, diags)
}

func (r *runtimeClassResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state runtimeClassModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, runtimeClassIdentity{Name: state.ID}, &resp.Diagnostics)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	rc, err := k.FindRuntimeClass(ctx, name)
	if kube.IsNotFound(err) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows RuntimeClass (%s) not found", name),
			"The RuntimeClass was deleted outside Terraform; it is removed from the state and the next apply creates it again.")
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading Windows RuntimeClass (%s)", name), err.Error())
		return
	}
	state.fromAPI(rc)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *runtimeClassResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state runtimeClassModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "deleting RuntimeClass", map[string]any{"name": state.ID.ValueString()})
	if err := k.DeleteRuntimeClass(ctx, state.ID.ValueString()); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("deleting Windows RuntimeClass (%s)", state.ID.ValueString()), err.Error())
	}
}

// ImportState takes the RuntimeClass name, as the import ID or the
// identity's name; Read then derives the build, the architecture and the
// extra selector entries from the object.
func (r *runtimeClassResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name := req.ID
	var id runtimeClassIdentity
	if importedIdentity(ctx, req, &id, "name", &resp.Diagnostics) {
		name = id.Name.ValueString()
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	setIdentity(ctx, resp.Identity, runtimeClassIdentity{Name: types.StringValue(name)}, &resp.Diagnostics)
}
