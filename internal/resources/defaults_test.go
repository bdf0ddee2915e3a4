package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// schemaDefault is an attribute's Default value; nil when it has none.
func schemaDefault(ctx context.Context, a schema.Attribute) attr.Value {
	switch a := a.(type) {
	case schema.StringAttribute:
		if a.Default != nil {
			var r defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{}, &r)
			return r.PlanValue
		}
	case schema.Int64Attribute:
		if a.Default != nil {
			var r defaults.Int64Response
			a.Default.DefaultInt64(ctx, defaults.Int64Request{}, &r)
			return r.PlanValue
		}
	case schema.BoolAttribute:
		if a.Default != nil {
			var r defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{}, &r)
			return r.PlanValue
		}
	case schema.SingleNestedAttribute:
		if a.Default != nil {
			var r defaults.ObjectResponse
			a.Default.DefaultObject(ctx, defaults.ObjectRequest{}, &r)
			return r.PlanValue
		}
	case schema.ListNestedAttribute:
		if a.Default != nil {
			var r defaults.ListResponse
			a.Default.DefaultList(ctx, defaults.ListRequest{}, &r)
			return r.PlanValue
		}
	}
	return nil
}

func emptyState(ctx context.Context, s schema.Schema) tfsdk.State {
	return tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
}

// An imported node gets the schema's defaults for the inputs its VM does not
// record, so a configuration that keeps them plans no change; and the values
// the deprecated attributes settle on.
func TestNodeImportDefaultsAreTheSchemas(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&nodeResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	state := emptyState(ctx, sr.Schema)
	found := winnode.Found{VM: &vsphere.VMInfo{VM: vsphere.VM{Name: "win-0"}}, InventoryPath: "/dc1/vm/k8s/win-0"}
	if diags := setImported(ctx, found, &state); diags.HasError() {
		t.Fatal(diags)
	}
	for _, name := range []string{"admin_user", "time_zone", "drain"} {
		want := schemaDefault(ctx, sr.Schema.Attributes[name])
		if name == "time_zone" {
			// No schema default (timeZoneDefault plans it): a new node's zone.
			want = types.StringValue(timezone.Default)
		}
		var v attr.Value
		state.GetAttribute(ctx, path.Root(name), &v)
		if want == nil || !v.Equal(want) {
			t.Errorf("imported %s = %v, the schema's default is %v", name, v, want)
		}
	}
	var settled nodeModel
	settled.settleCNI()
	var m nodeModel
	if diags := state.Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	if !m.CNI.Equal(settled.CNI) {
		t.Errorf("imported cni = %v; a created node's is %v", m.CNI, settled.CNI)
	}
}

// An imported golden image has the schema's default for every input with a
// default (vCenter records none of them).
func TestGoldenImageImportDefaultsAreTheSchemas(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&goldenImageResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	var m goldenImageModel
	m.nullInputs()
	state := emptyState(ctx, sr.Schema)
	if diags := state.Set(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	checked := 0
	for name, a := range sr.Schema.Attributes {
		want := schemaDefault(ctx, a)
		if want == nil {
			continue
		}
		checked++
		var v attr.Value
		state.GetAttribute(ctx, path.Root(name), &v)
		if !v.Equal(want) {
			t.Errorf("imported %s = %v, the schema's default is %v", name, v, want)
		}
	}
	if checked < 5 {
		t.Errorf("only %d attributes with a default checked", checked)
	}
}
