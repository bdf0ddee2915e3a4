package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestQuantitySemanticEquals(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"0.1", "100m", true},
		{"1", "1000m", true},
		{"1024Mi", "1Gi", true},
		{"128Mi", "134217728", true},
		{"100m", "101m", false},
		{"1G", "1Gi", false}, // decimal and binary giga differ
		{"junk", "junk", true},
		{"junk", "100m", false},
	}
	for _, c := range cases {
		got, diags := newQuantity(c.a).StringSemanticEquals(context.Background(), newQuantity(c.b))
		if diags.HasError() {
			t.Fatalf("%s vs %s: %v", c.a, c.b, diags)
		}
		if got != c.want {
			t.Errorf("%q semantically equal to %q = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestQuantityValidate(t *testing.T) {
	cases := map[string]string{
		"100m": "", "0.5": "", "128Mi": "", "0": "",
		"lots":   `overhead.cpu: "lots" is not a valid Kubernetes resource quantity`,
		"1 Gi":   "is not a valid Kubernetes resource quantity",
		"-128Mi": `"-128Mi" is negative`,
	}
	for in, want := range cases {
		var resp xattr.ValidateAttributeResponse
		newQuantity(in).ValidateAttribute(context.Background(),
			xattr.ValidateAttributeRequest{Path: path.Root("overhead").AtName("cpu")}, &resp)
		switch {
		case want == "" && resp.Diagnostics.HasError():
			t.Errorf("%q: unexpected error %v", in, resp.Diagnostics)
		case want != "" && (!resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics[0].Detail(), want)):
			t.Errorf("%q: diagnostics %v, want one containing %q", in, resp.Diagnostics, want)
		}
	}
	var resp xattr.ValidateAttributeResponse
	quantityNull().ValidateAttribute(context.Background(), xattr.ValidateAttributeRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Errorf("null: %v", resp.Diagnostics)
	}
}

func TestSameAmountKeepsState(t *testing.T) {
	cases := []struct {
		name          string
		config, state types.String
		want          types.String
	}{
		{"same amount, other spelling", types.StringValue("0.1"), types.StringValue("100m"), types.StringValue("100m")},
		{"a different amount", types.StringValue("0.2"), types.StringValue("100m"), types.StringValue("0.2")},
		{"created", types.StringValue("0.1"), types.StringNull(), types.StringValue("0.1")},
		{"removed", types.StringNull(), types.StringValue("100m"), types.StringNull()},
		{"unknown", types.StringUnknown(), types.StringValue("100m"), types.StringUnknown()},
	}
	for _, c := range cases {
		req := planmodifier.StringRequest{ConfigValue: c.config, StateValue: c.state, PlanValue: c.config}
		resp := planmodifier.StringResponse{PlanValue: req.PlanValue}
		sameAmountKeepsState{}.PlanModifyString(context.Background(), req, &resp)
		if !resp.PlanValue.Equal(c.want) {
			t.Errorf("%s: planned %v, want %v", c.name, resp.PlanValue, c.want)
		}
	}
}
