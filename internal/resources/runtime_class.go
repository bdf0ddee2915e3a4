package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
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

type runtimeClassModel struct {
	ID                    types.String `tfsdk:"id"`
	Name                  types.String `tfsdk:"name"`
	WindowsBuild          types.String `tfsdk:"windows_build"`
	WindowsVersion        types.String `tfsdk:"windows_version"`
	Handler               types.String `tfsdk:"handler"`
	Arch                  types.String `tfsdk:"arch"`
	NodeSelector          types.Map    `tfsdk:"node_selector"`
	Tolerations           types.List   `tfsdk:"tolerations"`
	Overhead              types.Object `tfsdk:"overhead"`
	EffectiveNodeSelector types.Map    `tfsdk:"effective_node_selector"`
}

func (r *runtimeClassResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_runtime_class"
}

func (r *runtimeClassResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A `node.k8s.io/v1` RuntimeClass that sends pods to Windows nodes of one Windows build. " +
			"Pods name it in `runtimeClassName` instead of repeating node selectors and tolerations: the RuntimeClass " +
			"selects `kubernetes.io/os=windows`, `kubernetes.io/arch` and `node.kubernetes.io/windows-build`, and " +
			"tolerates the `os=windows:NoSchedule` taint that `windows_node` sets by default.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The RuntimeClass name.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the RuntimeClass, which pods set as `runtimeClassName`. Changing it replaces the RuntimeClass.",
				Validators:          []validator.String{dnsSubdomain()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"windows_build": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Windows build of the nodes to select, as in their `node.kubernetes.io/windows-build` label, for example `10.0.20348` " +
					"(for example from `windows_golden_image.<name>.windows_build`). Exactly one of `windows_build` and `windows_version` is required; " +
					"when `windows_version` is set this is computed from it.",
				Validators: []validator.String{windowsBuild()},
			},
			"windows_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Windows Server release of the nodes to select: `2019` (`1809`, `ltsc2019`), `2022` (`21h2`, `ltsc2022`) or `2025` (`24h2`, `ltsc2025`). " +
					"Exactly one of `windows_build` and `windows_version` is required.",
				Validators: []validator.String{windowsVersion()},
			},
			"handler": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(defaultHandler),
				MarkdownDescription: "Container runtime handler. Defaults to `" + defaultHandler + "`, the handler containerd 1.7 and 2.x configure for " +
					"process-isolated Windows containers. The handler is immutable in Kubernetes: changing it replaces the RuntimeClass.",
				Validators:    []validator.String{dnsLabel()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"arch": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(defaultArch),
				MarkdownDescription: "CPU architecture of the nodes to select (`kubernetes.io/arch`). Defaults to `" + defaultArch + "`.",
				Validators:          []validator.String{stringvalidator.OneOf("amd64", "arm64")},
			},
			"node_selector": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Extra node labels to select, merged over the computed ones (`kubernetes.io/os`, `kubernetes.io/arch`, " +
					"`node.kubernetes.io/windows-build`).",
				Validators: []validator.Map{
					mapvalidator.KeysAre(labelKey()),
					mapvalidator.ValueStringsAre(labelValue()),
				},
			},
			"tolerations": schema.ListNestedAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Tolerations added to pods of this RuntimeClass. Defaults to one toleration of the `os=windows:NoSchedule` taint " +
					"that `windows_node` sets; set `[]` for none.",
				Default:      listdefault.StaticValue(types.ListValueMust(tolerationObjectType, []attr.Value{defaultToleration()})),
				NestedObject: tolerationSchema(),
				Validators:   []validator.List{listvalidator.UniqueValues()},
			},
			"overhead": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Resources a pod of this RuntimeClass uses beyond its containers' requests (the Windows container's utility VM or job object), added by the scheduler.",
				Attributes: map[string]schema.Attribute{
					"cpu": quantityAttribute("CPU overhead, a Kubernetes quantity, for example `100m` or `0.1` (the same amount: the API " +
						"server stores `100m`, and either spelling plans no change against the other)."),
					"memory": quantityAttribute("Memory overhead, a Kubernetes quantity, for example `128Mi`."),
				},
			},
			"effective_node_selector": schema.MapAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "The complete node selector of the RuntimeClass: the computed labels merged with `node_selector`. A change made outside Terraform shows up here as drift.",
			},
		},
	}
}

func (r *runtimeClassResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		// At the resource, not on windows_build: the attribute-level form
		// names only the other attribute when neither is set.
		resourcevalidator.ExactlyOneOf(path.MatchRoot("windows_build"), path.MatchRoot("windows_version")),
		tolerationsValidator{},
	}
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

// nodeSelector is the complete selector the configuration asks for; known is
// false while any input is unknown.
func (m runtimeClassModel) nodeSelector(ctx context.Context, diags *diag.Diagnostics) (map[string]string, bool) {
	if m.WindowsBuild.IsUnknown() || m.Arch.IsUnknown() || m.NodeSelector.IsUnknown() {
		return nil, false
	}
	var extra map[string]string
	diags.Append(m.NodeSelector.ElementsAs(ctx, &extra, false)...)
	return kube.WindowsSelector(m.WindowsBuild.ValueString(), m.Arch.ValueString(), extra), true
}

func (m runtimeClassModel) spec(ctx context.Context, diags *diag.Diagnostics) kube.RuntimeClassSpec {
	selector, _ := m.nodeSelector(ctx, diags)
	spec := kube.RuntimeClassSpec{
		Name:         m.Name.ValueString(),
		Handler:      m.Handler.ValueString(),
		NodeSelector: selector,
		Tolerations:  tolerationsToAPI(ctx, m.Tolerations, diags),
	}
	overhead, err := kube.ParseQuantities(overheadToMap(ctx, m.Overhead, diags))
	if err != nil {
		diags.AddAttributeError(path.Root("overhead"), "Invalid overhead", err.Error())
	}
	spec.Overhead = overhead
	return spec
}
