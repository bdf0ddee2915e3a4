package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
)

// quantityType is a string attribute holding a Kubernetes resource quantity
// ("250m", "0.5", "128Mi"). The API server stores quantities in canonical
// form — "0.1" CPU comes back as "100m", "1024Mi" as "1Gi" — so the same
// amount has several spellings. Its values are semantically equal when they
// are the same amount (resource.Quantity.Cmp), which keeps the configured
// spelling in the state after a create, an update or a refresh, and they are
// validated at plan time.
type quantityType struct {
	basetypes.StringType
}

var (
	_ basetypes.StringTypable                    = quantityType{}
	_ basetypes.StringValuableWithSemanticEquals = quantityValue{}
	_ xattr.ValidateableAttribute                = quantityValue{}
)

func (t quantityType) Equal(o attr.Type) bool {
	other, ok := o.(quantityType)
	return ok && t.StringType.Equal(other.StringType)
}

func (t quantityType) String() string { return "quantityType" }

func (t quantityType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return quantityValue{StringValue: in}, nil
}

func (t quantityType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	q, diags := t.ValueFromString(ctx, s)
	if diags.HasError() {
		return nil, fmt.Errorf("converting StringValue to quantityValue: %v", diags)
	}
	return q, nil
}

func (t quantityType) ValueType(context.Context) attr.Value { return quantityValue{} }

// quantityValue is a value of quantityType.
type quantityValue struct {
	basetypes.StringValue
}

func quantityNull() quantityValue { return quantityValue{StringValue: basetypes.NewStringNull()} }

func newQuantity(s string) quantityValue {
	return quantityValue{StringValue: basetypes.NewStringValue(s)}
}

func (v quantityValue) Type(context.Context) attr.Type { return quantityType{} }

func (v quantityValue) Equal(o attr.Value) bool {
	other, ok := o.(quantityValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals reports whether two spellings are the same amount.
func (v quantityValue) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	other, ok := newValuable.(quantityValue)
	if !ok {
		diags.AddError("Semantic equality check error",
			fmt.Sprintf("Expected a quantity value, got %T. This is a bug in the provider; please report it.", newValuable))
		return false, diags
	}
	return sameQuantity(v.ValueString(), other.ValueString()), diags
}

// ValidateAttribute rejects what the API server would reject at apply: a
// string that is no quantity, and a negative amount of a resource.
func (v quantityValue) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	q, err := k8sresource.ParseQuantity(v.ValueString())
	switch {
	case err != nil:
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Kubernetes resource quantity",
			fmt.Sprintf("%s: %q is not a valid Kubernetes resource quantity: write a quantity such as 250m, 0.5, 128Mi or 1Gi.", req.Path, v.ValueString()))
	case q.Sign() < 0:
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Kubernetes resource quantity",
			fmt.Sprintf("%s: %q is negative: an amount of a resource must be zero or more.", req.Path, v.ValueString()))
	}
}

// sameQuantity reports whether a and b parse as the same amount.
func sameQuantity(a, b string) bool {
	qa, errA := k8sresource.ParseQuantity(a)
	qb, errB := k8sresource.ParseQuantity(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return qa.Cmp(qb) == 0
}

// quantityAttribute is an optional quantity: validated at plan, kept in the
// configured spelling, and compared by amount.
func quantityAttribute(description string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional:            true,
		CustomType:          quantityType{},
		MarkdownDescription: description,
		PlanModifiers:       []planmodifier.String{sameAmountKeepsState{}},
	}
}

// sameAmountKeepsState plans the state's spelling when the configuration
// spells the same amount differently. Semantic equality covers the values
// the provider writes (create, update, refresh); it does not reach the plan,
// which compares the configuration with the state as text. After an import
// the state holds the API server's canonical spelling ("100m") while the
// configuration says "0.1": without this the plan would show a change that
// changes nothing. Terraform accepts a plan that keeps the prior value in
// place of an equivalent configured one.
type sameAmountKeepsState struct{}

func (sameAmountKeepsState) Description(context.Context) string {
	return "A different spelling of the same quantity (0.1 and 100m) is not a change."
}

func (m sameAmountKeepsState) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (sameAmountKeepsState) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if sameQuantity(req.ConfigValue.ValueString(), req.StateValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}
