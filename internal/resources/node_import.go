package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// importedKey marks, in the private state, a node imported and not yet
// updated: its create-only inputs an import cannot read back (the template,
// the placement ids the VM was not asked for, cluster overrides) are null
// in the state, and the configuration's values for them are recorded by an
// in-place update instead of replacing a working node. The first update
// clears the mark; from then on changing them replaces the node as usual.
const importedKey = "imported"

// Values a node imported from vSphere gets for inputs with defaults that the
// VM does not record (the customization's user and time zone, the CNI mode,
// the drain settings): the defaults, so a configuration that keeps them plans
// no change.
func importDefaults() map[string]any {
	return map[string]any{
		"admin_user": "Administrator", "time_zone": int64(85), "cni": "none", "flannel_backend": "vxlan",
	}
}

// keyWindowsBuildFull is the ExtraConfig key in which windows_golden_image
// records a template's full Windows build; clones carry it.
const keyWindowsBuildFull = "guestinfo.windows.build-full"

// privateState is the plan modifier requests' view of the private state.
type privateState interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// importedNull reports a null state value of a node imported and not yet
// updated, which the configuration may fill in without a replacement.
func importedNull(ctx context.Context, private privateState, stateNull bool) bool {
	if !stateNull || private == nil {
		return false
	}
	v, _ := private.GetKey(ctx, importedKey)
	return len(v) > 0
}

var (
	nodeReplaceString = []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
		func(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !importedNull(ctx, req.Private, req.StateValue.IsNull())
		}, "Changing it replaces the node.", "Changing it replaces the node.")}
	nodeReplaceInt64 = []planmodifier.Int64{int64planmodifier.RequiresReplaceIf(
		func(ctx context.Context, req planmodifier.Int64Request, resp *int64planmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !importedNull(ctx, req.Private, req.StateValue.IsNull())
		}, "Changing it replaces the node.", "Changing it replaces the node.")}
	nodeReplaceObject = []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(
		func(ctx context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !importedNull(ctx, req.Private, req.StateValue.IsNull())
		}, "Changing it replaces the node.", "Changing it replaces the node.")}
)
