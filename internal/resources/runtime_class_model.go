package resources

import (
	"cmp"
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

type tolerationModel struct {
	Key               types.String `tfsdk:"key"`
	Operator          types.String `tfsdk:"operator"`
	Value             types.String `tfsdk:"value"`
	Effect            types.String `tfsdk:"effect"`
	TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
}

var tolerationObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"key": types.StringType, "operator": types.StringType, "value": types.StringType,
	"effect": types.StringType, "toleration_seconds": types.Int64Type,
}}

type overheadModel struct {
	CPU    quantityValue `tfsdk:"cpu"`
	Memory quantityValue `tfsdk:"memory"`
}

var overheadObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"cpu": quantityType{}, "memory": quantityType{},
}}

// defaultToleration tolerates the taint windows_node registers nodes with.
func defaultToleration() attr.Value {
	return types.ObjectValueMust(tolerationObjectType.AttrTypes, map[string]attr.Value{
		"key": types.StringValue(defaultTaint.Key), "operator": types.StringValue(string(corev1.TolerationOpEqual)),
		"value": types.StringValue(defaultTaint.Value), "effect": types.StringValue(string(defaultTaint.Effect)), "toleration_seconds": types.Int64Null(),
	})
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

func tolerationsToAPI(ctx context.Context, list types.List, diags *diag.Diagnostics) []corev1.Toleration {
	var in []tolerationModel
	diags.Append(list.ElementsAs(ctx, &in, false)...)
	out := make([]corev1.Toleration, 0, len(in))
	for _, t := range in {
		tol := corev1.Toleration{
			Key:      t.Key.ValueString(),
			Operator: corev1.TolerationOperator(t.Operator.ValueString()),
			Value:    t.Value.ValueString(),
			Effect:   corev1.TaintEffect(t.Effect.ValueString()),
		}
		if !t.TolerationSeconds.IsNull() {
			tol.TolerationSeconds = t.TolerationSeconds.ValueInt64Pointer()
		}
		out = append(out, tol)
	}
	return out
}

func tolerationsFromAPI(in []corev1.Toleration) types.List {
	values := make([]attr.Value, 0, len(in))
	for _, t := range in {
		operator := string(t.Operator)
		if operator == "" {
			operator = string(corev1.TolerationOpEqual) // the API's meaning of an empty operator
		}
		values = append(values, types.ObjectValueMust(tolerationObjectType.AttrTypes, map[string]attr.Value{
			"key":                nullIfEmpty(t.Key),
			"operator":           types.StringValue(operator),
			"value":              nullIfEmpty(t.Value),
			"effect":             nullIfEmpty(string(t.Effect)),
			"toleration_seconds": types.Int64PointerValue(t.TolerationSeconds),
		}))
	}
	return types.ListValueMust(tolerationObjectType, values)
}

func overheadToMap(ctx context.Context, obj types.Object, diags *diag.Diagnostics) map[string]string {
	if obj.IsNull() || obj.IsUnknown() {
		return nil
	}
	var o overheadModel
	diags.Append(obj.As(ctx, &o, basetypes.ObjectAsOptions{})...)
	out := map[string]string{}
	if v := o.CPU.ValueString(); v != "" {
		out[string(corev1.ResourceCPU)] = v
	}
	if v := o.Memory.ValueString(); v != "" {
		out[string(corev1.ResourceMemory)] = v
	}
	return out
}

// overheadFromAPI is the overhead as the API server stores it, in canonical
// form ("100m" for a configured "0.1"); the quantity type's semantic
// equality keeps the configured spelling in the state when the amount is
// the same.
func overheadFromAPI(overhead *nodev1.Overhead) types.Object {
	if overhead == nil || len(overhead.PodFixed) == 0 {
		return types.ObjectNull(overheadObjectType.AttrTypes)
	}
	value := func(name corev1.ResourceName) attr.Value {
		q, ok := overhead.PodFixed[name]
		if !ok {
			return quantityNull()
		}
		return newQuantity(q.String())
	}
	return types.ObjectValueMust(overheadObjectType.AttrTypes, map[string]attr.Value{
		"cpu": value(corev1.ResourceCPU), "memory": value(corev1.ResourceMemory),
	})
}

// fromAPI refreshes the model from the cluster. The inputs that only shape
// the node selector (build, version, arch, extra entries) are kept as
// configured: a change to the selector made outside Terraform shows up in
// effective_node_selector, which the plan compares with what the inputs ask
// for. After an import there are no inputs yet (a configuration sets
// exactly one of windows_build and windows_version), so they are derived.
func (m *runtimeClassModel) fromAPI(rc *nodev1.RuntimeClass) {
	var tolerations []corev1.Toleration
	if rc.Scheduling != nil {
		tolerations = rc.Scheduling.Tolerations
	}
	m.fromWritten(rc)
	m.Name = types.StringValue(rc.Name)
	m.Handler = types.StringValue(rc.Handler)
	m.Tolerations = tolerationsFromAPI(tolerations)
	m.Overhead = overheadFromAPI(rc.Overhead)
	if !m.WindowsBuild.IsNull() || !m.WindowsVersion.IsNull() {
		return
	}
	build, arch, extra := kube.SplitWindowsSelector(selectorOf(rc))
	m.WindowsBuild = nullIfEmpty(build)
	m.Arch = types.StringValue(cmp.Or(arch, defaultArch))
	m.NodeSelector = types.MapNull(types.StringType)
	if len(extra) > 0 {
		m.NodeSelector = stringMap(extra)
	}
}

// fromWritten records what a create or an update wrote and the inputs do
// not tell: the id and the complete node selector.
func (m *runtimeClassModel) fromWritten(rc *nodev1.RuntimeClass) {
	m.ID = types.StringValue(rc.Name)
	m.EffectiveNodeSelector = stringMap(selectorOf(rc))
}

func selectorOf(rc *nodev1.RuntimeClass) map[string]string {
	if rc.Scheduling == nil {
		return map[string]string{}
	}
	return rc.Scheduling.NodeSelector
}

func stringMap(in map[string]string) types.Map {
	values := make(map[string]attr.Value, len(in))
	for k, v := range in {
		values[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, values)
}

func nullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}
