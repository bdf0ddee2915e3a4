package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// An object adopted by import (a node's VM, a golden image's template) has
// create-only inputs the import cannot read back: the template a VM was
// cloned from, the checksums an image was built with. The import leaves them
// null, and the first apply records the configuration's values for them in
// place instead of replacing a working object; from then on changing them
// replaces it as usual.
//
// Every resource recognises such an object one way: ImportState puts
// importedKey in the private state, and the first Update removes it. The
// private state says so explicitly, wherever the import's nulls are, and it
// lasts exactly as long as it should: a Read keeps it (the framework carries
// it from request to response), a replacement starts without it, and users
// neither see it nor can set it. The alternative, reading "imported" from an
// attribute that only an import leaves null, ties the meaning to one
// attribute and breaks when a Read fills that attribute in.
//
// Resources whose import reads every create-only input from the object
// (runtime class, node networking, guard) need no mark.
const importedKey = "imported"

// privateGetter is the private state as requests carry it.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is the private state as responses carry it.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// imported says whether the object was imported and not updated since.
func imported(ctx context.Context, private privateGetter) bool {
	v, _ := private.GetKey(ctx, importedKey)
	return len(v) > 0
}

// markImported records an import (ImportState).
func markImported(ctx context.Context, private privateSetter) diag.Diagnostics {
	return private.SetKey(ctx, importedKey, []byte("true"))
}

// clearImported records that the configuration's inputs are in the state
// now (Update).
func clearImported(ctx context.Context, private privateSetter) diag.Diagnostics {
	return private.SetKey(ctx, importedKey, nil)
}

// replaceUnlessImported is the plan modifier of a create-only input an
// import cannot read: a change replaces the object, except on the first
// apply after an import, which records the configured value in place. It
// decides like the framework's RequiresReplaceIf: never on create or
// destroy, nor when the value does not change; changed, when set, narrows
// what counts as a change.
type replaceUnlessImported struct {
	description string
	changed     func(state, plan attr.Value) bool
}

var (
	_ planmodifier.String = replaceUnlessImported{}
	_ planmodifier.Int64  = replaceUnlessImported{}
	_ planmodifier.Bool   = replaceUnlessImported{}
	_ planmodifier.List   = replaceUnlessImported{}
	_ planmodifier.Set    = replaceUnlessImported{}
	_ planmodifier.Map    = replaceUnlessImported{}
	_ planmodifier.Object = replaceUnlessImported{}
)

func (m replaceUnlessImported) Description(context.Context) string { return m.description }

func (m replaceUnlessImported) MarkdownDescription(context.Context) string { return m.description }

func (m replaceUnlessImported) requiresReplace(ctx context.Context, state tfsdk.State, plan tfsdk.Plan, stateValue, planValue attr.Value, private privateGetter) bool {
	switch {
	case state.Raw.IsNull() || plan.Raw.IsNull() || planValue.Equal(stateValue):
		return false
	case m.changed != nil && !m.changed(stateValue, planValue):
		return false
	}
	return !imported(ctx, private)
}

func (m replaceUnlessImported) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifyBool(ctx context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifySet(ctx context.Context, req planmodifier.SetRequest, resp *planmodifier.SetResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifyMap(ctx context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}

func (m replaceUnlessImported) PlanModifyObject(ctx context.Context, req planmodifier.ObjectRequest, resp *planmodifier.ObjectResponse) {
	resp.RequiresReplace = m.requiresReplace(ctx, req.State, req.Plan, req.StateValue, req.PlanValue, req.Private)
}
