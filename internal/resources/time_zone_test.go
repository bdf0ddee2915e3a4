package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestTimeZoneDefault: unset, a new resource plans UTC and an existing one
// keeps the zone of its state (a node upgraded from index 85 keeps GMT
// Standard Time); a configured zone is left as configured.
func TestTimeZoneDefault(t *testing.T) {
	ctx := context.Background()
	plan := tfsdk.Plan{Raw: tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{})}
	for _, c := range []struct {
		name          string
		config, state types.String
		want          string
	}{
		{"new, unset", types.StringNull(), types.StringNull(), "UTC"},
		{"existing, unset", types.StringNull(), types.StringValue("GMT Standard Time"), "GMT Standard Time"},
		{"set", types.StringValue("Tokyo Standard Time"), types.StringValue("GMT Standard Time"), "Tokyo Standard Time"},
	} {
		resp := &planmodifier.StringResponse{PlanValue: c.config}
		if c.config.IsNull() {
			resp.PlanValue = types.StringUnknown() // Optional+Computed, unset
		}
		timeZoneDefault{}.PlanModifyString(ctx, planmodifier.StringRequest{Path: path.Root("time_zone"), ConfigValue: c.config,
			StateValue: c.state, PlanValue: resp.PlanValue, Plan: plan}, resp)
		if resp.PlanValue.ValueString() != c.want {
			t.Errorf("%s: planned %s, want %s", c.name, resp.PlanValue, c.want)
		}
	}
}

// TestTimeZoneValidator: an ID passes; anything else names the attribute
// and the nearest IDs.
func TestTimeZoneValidator(t *testing.T) {
	ctx := context.Background()
	for value, want := range map[string]string{
		"UTC": "", "W. Europe Standard Time": "",
		"utc":                  `Did you mean "UTC"?`,
		"Europe/Paris":         `Did you mean "Romance Standard Time"?`,
		"Eastern Standard Tim": `"Eastern Standard Time"`,
		"85":                   "is not a Windows time zone ID",
	} {
		resp := &validator.StringResponse{}
		timeZoneID().ValidateString(ctx, validator.StringRequest{Path: path.Root("time_zone"), ConfigValue: types.StringValue(value)}, resp)
		switch {
		case want == "" && resp.Diagnostics.HasError():
			t.Errorf("%q refused: %v", value, resp.Diagnostics)
		case want != "" && (!resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics[0].Detail(), want) ||
			!strings.HasPrefix(resp.Diagnostics[0].Detail(), "time_zone: ")):
			t.Errorf("%q: %v, want an error naming time_zone and %s", value, resp.Diagnostics, want)
		}
	}
}
