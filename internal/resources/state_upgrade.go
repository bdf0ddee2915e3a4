package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/timezone"
)

// State upgrades. Version 1 of windows_node, windows_node_pool and
// windows_golden_image gave the three one time zone attribute: time_zone, a
// Windows time zone ID. Version 0 had a number (sysprep's index, 85 = GMT
// Standard Time by default) on nodes and pools, and a string named
// timezone on images. Nothing else changed, so each upgrader rewrites the
// one attribute in the prior state's JSON and reads the rest with the
// current schema, instead of keeping a copy of every version-0 schema.

var (
	_ resource.ResourceWithUpgradeState = (*nodeResource)(nil)
	_ resource.ResourceWithUpgradeState = (*nodePoolResource)(nil)
	_ resource.ResourceWithUpgradeState = (*goldenImageResource)(nil)
)

func (r *nodeResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
		upgradeJSON(ctx, req, resp, "windows_node", timeZoneFromIndex)
	}}}
}

func (r *nodePoolResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
		if !upgradeJSON(ctx, req, resp, "windows_node_pool", timeZoneFromIndex) {
			return
		}
		restampMembers(ctx, resp)
	}}}
}

func (r *goldenImageResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
		upgradeJSON(ctx, req, resp, "windows_golden_image", func(attrs map[string]json.RawMessage) error {
			if v, ok := attrs["timezone"]; ok {
				attrs["time_zone"] = v
				delete(attrs, "timezone")
			}
			return nil
		})
	}}}
}

// upgradeJSON rewrites the prior state's attributes and reads them into the
// response with the current schema; false when it could not.
func upgradeJSON(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse, kind string, rewrite func(map[string]json.RawMessage) error) bool {
	summary := "Upgrading the state of " + kind + " to schema version 1"
	if req.RawState == nil || len(req.RawState.JSON) == 0 {
		resp.Diagnostics.AddError(summary, "The prior state has no JSON (a state written by Terraform 0.11 or earlier): apply it with an older provider version first.")
		return false
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(req.RawState.JSON, &attrs); err != nil {
		resp.Diagnostics.AddError(summary, "Reading the prior state: "+err.Error())
		return false
	}
	if err := rewrite(attrs); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return false
	}
	upgraded, err := json.Marshal(attrs)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return false
	}
	value, err := (&tfprotov6.RawState{JSON: upgraded}).UnmarshalWithOpts(resp.State.Schema.Type().TerraformType(ctx),
		tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		resp.Diagnostics.AddError(summary, "Reading the upgraded state with the current schema: "+err.Error())
		return false
	}
	resp.State.Raw = value
	return true
}

// timeZoneFromIndex turns a version-0 time_zone (sysprep's index) into the
// ID of the zone it named: 85, the old default, becomes GMT Standard Time,
// so a node keeps the zone it has and no plan replaces it.
func timeZoneFromIndex(attrs map[string]json.RawMessage) error {
	raw, ok := attrs["time_zone"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var index int64
	if err := json.Unmarshal(raw, &index); err != nil {
		return fmt.Errorf("time_zone %s in the prior state is not a number: %w", raw, err)
	}
	id, ok := timezone.FromIndex(index)
	if !ok {
		return fmt.Errorf("time_zone = %d in the prior state is not in Microsoft's Time Zone Index Values, so which Windows time zone "+
			"ID it names is unknown. Remove the resource from the state (terraform state rm) and import it again, then set time_zone to "+
			"the ID of its zone (tzutil /g on the node prints it)", index)
	}
	attrs["time_zone"], _ = json.Marshal(id)
	return nil
}

// restampMembers gives the members of an upgraded pool the revision the
// upgraded inputs compute: the revision digests time_zone, whose value
// changed form, not meaning. Members that were current stay current (no
// roll); those that were outdated stay outdated.
func restampMembers(ctx context.Context, resp *resource.UpgradeStateResponse) {
	var pool nodePoolModel
	resp.Diagnostics.Append(resp.State.Get(ctx, &pool)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rev, ok := pool.revision(ctx, &resp.Diagnostics)
	if !ok {
		return
	}
	if !pool.Members.IsNull() && !pool.Members.IsUnknown() {
		var members []memberModel
		resp.Diagnostics.Append(pool.Members.ElementsAs(ctx, &members, false)...)
		for i := range members {
			if members[i].Revision.Equal(pool.Revision) {
				members[i].Revision = types.StringValue(rev)
			}
		}
		list, d := types.ListValueFrom(ctx, memberObjectType, members)
		resp.Diagnostics.Append(d...)
		pool.Members = list
	}
	pool.Revision = types.StringValue(rev)
	resp.Diagnostics.Append(resp.State.Set(ctx, &pool)...)
}
