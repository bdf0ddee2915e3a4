package resources

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type linuxDaemonSetGuardModel struct {
	ID        types.String `tfsdk:"id"`
	Namespace types.String `tfsdk:"namespace"`
	Names     types.Set    `tfsdk:"names"`
	Selected  types.Set    `tfsdk:"selected"`
	Guarded   types.Set    `tfsdk:"guarded"`
}

// setStrings returns the elements of a set of strings, sorted; nil for a
// null or unknown set.
func setStrings(ctx context.Context, set types.Set, diags *diag.Diagnostics) []string {
	if set.IsNull() || set.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(set.ElementsAs(ctx, &out, false)...)
	slices.Sort(out)
	return out
}

// stringSet is a known set of strings; empty (not null) for no elements, so
// "guards nothing" and "not read yet" stay distinguishable.
func stringSet(in []string) types.Set {
	values := make([]attr.Value, 0, len(in))
	for _, s := range in {
		values = append(values, types.StringValue(s))
	}
	return types.SetValueMust(types.StringType, values)
}

// selection is what a refresh reads: the DaemonSets the guard selected, or
// those names lists (imported with names); not known for an import without
// names (the guard's field manager tells).
func (m *linuxDaemonSetGuardModel) selection(ctx context.Context, diags *diag.Diagnostics) (selected []string, known bool) {
	switch {
	case !m.Selected.IsNull():
		return setStrings(ctx, m.Selected, diags), true
	case !m.Names.IsNull():
		return setStrings(ctx, m.Names, diags), true
	}
	return nil, false
}
