package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

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

func tolerationSchema() schema.NestedAttributeObject {
	return schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Taint key to tolerate; omit (with `operator = \"Exists\"`) to tolerate every taint.",
				Validators:          []validator.String{labelKey()},
			},
			"operator": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("Equal"),
				MarkdownDescription: "`Equal` (the default) or `Exists`.",
				Validators:          []validator.String{stringvalidator.OneOf("Equal", "Exists")},
			},
			"value": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Taint value to tolerate, with `operator = \"Equal\"`.",
				Validators:          []validator.String{labelValue()},
			},
			"effect": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Taint effect to tolerate: `NoSchedule`, `PreferNoSchedule` or `NoExecute`; omit for all effects.",
				Validators:          []validator.String{stringvalidator.OneOf("NoSchedule", "PreferNoSchedule", "NoExecute")},
			},
			"toleration_seconds": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "How long a pod stays bound after a `NoExecute` taint appears.",
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
		},
	}
}

// tolerationsValidator checks the rules that span a toleration's fields, the
// same ones the API server would reject at apply time.
type tolerationsValidator struct{}

func (tolerationsValidator) Description(context.Context) string {
	return "tolerations are consistent (operator, key, value, effect)"
}

func (v tolerationsValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (tolerationsValidator) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var list types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tolerations"), &list)...)
	if list.IsNull() || list.IsUnknown() {
		return
	}
	var tolerations []tolerationModel
	resp.Diagnostics.Append(list.ElementsAs(ctx, &tolerations, false)...)
	for i, t := range tolerations {
		at := path.Root("tolerations").AtListIndex(i)
		exists := t.Operator.ValueString() == "Exists"
		switch {
		case exists && t.Value.ValueString() != "":
			resp.Diagnostics.AddAttributeError(at.AtName("value"), "Invalid toleration",
				at.AtName("value").String()+`: a toleration with operator = "Exists" matches any value: remove value, or use operator = "Equal".`)
		case !exists && !t.Operator.IsUnknown() && !t.Key.IsUnknown() && t.Key.ValueString() == "":
			resp.Diagnostics.AddAttributeError(at.AtName("key"), "Invalid toleration",
				at.AtName("key").String()+`: a toleration without a key must use operator = "Exists" (it then tolerates every taint): set key, or set operator = "Exists".`)
		}
		if !t.TolerationSeconds.IsNull() && !t.Effect.IsUnknown() && t.Effect.ValueString() != "NoExecute" {
			resp.Diagnostics.AddAttributeError(at.AtName("toleration_seconds"), "Invalid toleration",
				at.AtName("toleration_seconds").String()+`: toleration_seconds applies only to effect = "NoExecute": remove it, or set effect = "NoExecute".`)
		}
	}
}
