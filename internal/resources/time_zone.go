package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/timezone"
)

// timeZoneDescription documents time_zone wherever a resource has it.
const timeZoneDescription = "Windows time zone ID, as `Set-TimeZone -Id`, `tzutil /s` and an answer file's `TimeZone` take it " +
	"(`tzutil /l` lists them), for example `UTC`, `Pacific Standard Time` or `W. Europe Standard Time`; not an IANA name " +
	"(`Europe/Berlin`) nor a sysprep index number. Validated at plan against Unicode CLDR's list of Windows zones."

// timeZoneID validates a time_zone against the Windows time zone IDs, and
// names the nearest ones when it is none.
func timeZoneID() validator.String { return timeZoneValidator{} }

type timeZoneValidator struct{}

func (timeZoneValidator) Description(context.Context) string { return "a Windows time zone ID" }

func (v timeZoneValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (timeZoneValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	value := req.ConfigValue.ValueString()
	if timezone.Valid(value) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid Windows time zone ID",
		fmt.Sprintf("%s: %q is not a Windows time zone ID. Did you mean %s? Windows names its zones by their registry key "+
			"(tzutil /l lists them), spelled as Windows spells them; the default is %q.",
			req.Path, value, quotedList(timezone.Nearest(value)), timezone.Default))
}

// quotedList is "a", "b" or "c".
func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// timeZoneDefault is the plan modifier of a node's and a pool's time_zone
// when the configuration leaves it out: UTC for a new resource; the zone the
// state holds for an existing one. Nodes made when the default was GMT
// Standard Time (time_zone 85, upgraded to its ID) keep it, instead of all
// being replaced for a default they never chose.
type timeZoneDefault struct{}

var _ planmodifier.String = timeZoneDefault{}

func (timeZoneDefault) Description(context.Context) string {
	return "Defaults to " + timezone.Default + " for a new resource; an existing one keeps its zone while the argument is unset."
}

func (m timeZoneDefault) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (timeZoneDefault) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.StateValue.ValueString() == "" {
		resp.PlanValue = types.StringValue(timezone.Default)
		return
	}
	resp.PlanValue = req.StateValue
}
