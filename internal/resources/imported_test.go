package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// privateMap is a private state for the tests.
type privateMap map[string][]byte

func (p privateMap) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

func (p privateMap) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	if value == nil {
		delete(p, key)
	} else {
		p[key] = value
	}
	return nil
}

// The mark's life: set by an import, read by the plan modifiers, removed by
// the first update.
func TestImportedMark(t *testing.T) {
	ctx := context.Background()
	p := privateMap{}
	if imported(ctx, p) {
		t.Fatal("an empty private state reads as imported")
	}
	markImported(ctx, p)
	if !imported(ctx, p) {
		t.Fatal("markImported did not mark")
	}
	clearImported(ctx, p)
	if imported(ctx, p) || len(p) != 0 {
		t.Fatalf("clearImported left %v", p)
	}
}

func TestReplaceUnlessImported(t *testing.T) {
	ctx := context.Background()
	object := tftypes.Object{AttributeTypes: map[string]tftypes.Type{}}
	exists := tfsdk.State{Raw: tftypes.NewValue(object, map[string]tftypes.Value{})}
	planned := tfsdk.Plan{Raw: tftypes.NewValue(object, map[string]tftypes.Value{})}
	absent := tfsdk.State{Raw: tftypes.NewValue(object, nil)}
	destroyed := tfsdk.Plan{Raw: tftypes.NewValue(object, nil)}
	marked := privateMap{importedKey: []byte("true")}
	a, b := types.StringValue("a"), types.StringValue("b")
	ignoreB := func(_, plan attr.Value) bool { return !plan.Equal(b) }
	cases := []struct {
		name     string
		changed  func(state, plan attr.Value) bool
		state    tfsdk.State
		plan     tfsdk.Plan
		from, to attr.Value
		private  privateMap
		want     bool
	}{
		{"a change replaces", nil, exists, planned, a, b, privateMap{}, true},
		{"the first change after an import is recorded in place", nil, exists, planned, types.StringNull(), b, marked, false},
		{"so is a change of a value the import defaulted", nil, exists, planned, a, b, marked, false},
		{"no change", nil, exists, planned, a, a, privateMap{}, false},
		{"create", nil, absent, planned, types.StringNull(), b, privateMap{}, false},
		{"destroy", nil, exists, destroyed, a, types.StringNull(), privateMap{}, false},
		{"a difference changed does not count", ignoreB, exists, planned, a, b, privateMap{}, false},
		{"a difference changed counts", ignoreB, exists, planned, b, a, privateMap{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := replaceUnlessImported{description: "test", changed: c.changed}
			if got := m.requiresReplace(ctx, c.state, c.plan, c.from, c.to, c.private); got != c.want {
				t.Errorf("requiresReplace = %v, want %v", got, c.want)
			}
		})
	}
}
