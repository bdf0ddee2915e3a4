package resources

import (
	"cmp"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
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
