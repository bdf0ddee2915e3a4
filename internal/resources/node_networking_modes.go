package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// Each networking mode's computed attributes (networking.Mode.Attributes)
// nest under an attribute named for the mode: flannel = { vni, port }.
// The names come from the registry, so the model cannot carry them as
// tagged fields: getNetworking and setNetworking move them between the
// Terraform object and nodeNetworkingModel.Modes.

// modeAttributeSchemas are the modes' nested computed attributes, for the
// schema: one per mode that has attributes, null unless the resource runs
// that mode.
func modeAttributeSchemas() map[string]schema.Attribute {
	out := map[string]schema.Attribute{}
	for _, m := range networking.Modes() {
		attrs := m.Attributes(nil)
		if len(attrs) == 0 {
			continue
		}
		nested := map[string]schema.Attribute{}
		for _, a := range attrs {
			switch a.Kind {
			case networking.AttributeString:
				nested[a.Name] = schema.StringAttribute{Computed: true, MarkdownDescription: a.Description}
			default:
				nested[a.Name] = schema.Int64Attribute{Computed: true, MarkdownDescription: a.Description}
			}
		}
		out[m.Name()] = schema.SingleNestedAttribute{Computed: true, Attributes: nested,
			MarkdownDescription: "What the `" + m.Name() + "` mode computed; null with another `cni`."}
	}
	return out
}

// modeAttributeTypes are the object types of modeAttributeSchemas.
func modeAttributeTypes() map[string]attr.Type {
	out := map[string]attr.Type{}
	for name, a := range modeAttributeSchemas() {
		out[name] = a.GetType()
	}
	return out
}

// modeAttributeValues are the modes' nested attributes for a resource
// running mode name: its own object, the others null. p is the cluster's
// plugin when known.
func modeAttributeValues(name string, p *networking.Plugin) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]attr.Value{}
	for modeName, t := range modeAttributeTypes() {
		ot := t.(types.ObjectType)
		m, ok := networking.Lookup(modeName)
		if !ok || modeName != name {
			out[modeName] = types.ObjectNull(ot.AttrTypes)
			continue
		}
		vals := map[string]attr.Value{}
		for _, a := range m.Attributes(p) {
			switch a.Kind {
			case networking.AttributeString:
				vals[a.Name] = types.StringValue(a.String)
			default:
				vals[a.Name] = types.Int64Value(a.Int64)
			}
		}
		v, d := types.ObjectValue(ot.AttrTypes, vals)
		diags.Append(d...)
		out[modeName] = v
	}
	return out, diags
}

// getter and setter are tfsdk.Plan, tfsdk.State and tfsdk.Config.
type getter interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}
type setter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// getNetworking reads the resource's object into m, the modes' nested
// attributes into m.Modes.
func getNetworking(ctx context.Context, g getter, m *nodeNetworkingModel) diag.Diagnostics {
	var obj types.Object
	diags := g.Get(ctx, &obj)
	if diags.HasError() {
		return diags
	}
	attrs, attrTypes := obj.Attributes(), obj.AttributeTypes(ctx)
	modes := map[string]attr.Value{}
	for name := range modeAttributeTypes() {
		modes[name] = attrs[name]
		delete(attrs, name)
		delete(attrTypes, name)
	}
	base, d := types.ObjectValue(attrTypes, attrs)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	diags.Append(base.As(ctx, m, basetypes.ObjectAsOptions{})...)
	m.Modes = modes
	return diags
}

// setNetworking writes m, with the modes' nested attributes from m.Modes
// (null where it has none).
func setNetworking(ctx context.Context, s setter, m *nodeNetworkingModel) diag.Diagnostics {
	full := nodeNetworkingSchema(ctx).Type().(types.ObjectType).AttrTypes
	modeTypes := modeAttributeTypes()
	baseTypes := map[string]attr.Type{}
	for name, t := range full {
		if _, isMode := modeTypes[name]; !isMode {
			baseTypes[name] = t
		}
	}
	base, diags := types.ObjectValueFrom(ctx, baseTypes, m)
	if diags.HasError() {
		return diags
	}
	attrs := base.Attributes()
	for name, t := range modeTypes {
		if v, ok := m.Modes[name]; ok && v != nil {
			attrs[name] = v
		} else {
			attrs[name] = types.ObjectNull(t.(types.ObjectType).AttrTypes)
		}
	}
	obj, d := types.ObjectValue(full, attrs)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	return append(diags, s.Set(ctx, obj)...)
}

// warnUnproven: a node without windows_node_networking runs the default
// mode (none), whose network nothing the provider installs proves; the
// probe still runs once the cluster's CNI runs its Windows agents on it.
func warnUnproven(ctx context.Context, m nodeModel, diags *diag.Diagnostics) {
	if !m.NetworkingID.IsNull() {
		return
	}
	var skip diag.Diagnostics
	if skipsNetworkProbe(ctx, m.SkipChecks, &skip) {
		return // skip_checks warns about that itself
	}
	if u := networking.Default().Probe().Unproven; u != "" {
		diags.AddAttributeWarning(path.Root("networking_id"), "Nothing proves this node's network", u)
	}
}
