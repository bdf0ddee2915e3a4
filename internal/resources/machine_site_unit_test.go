package resources

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestRefreshSite: what a node's refresh reads back of its VM's notes, tags
// and custom attributes (refreshSite's rules), each against what the state
// had.
func TestRefreshSite(t *testing.T) {
	const name = "win-1"
	own := "Kubernetes Windows node win-1 (terraform-provider-windows)"
	set := func(tags ...string) types.Set {
		v := make([]attr.Value, 0, len(tags))
		for _, s := range tags {
			v = append(v, types.StringValue(s))
		}
		return types.SetValueMust(types.StringType, v)
	}
	attrs := func(kv map[string]string) types.Map {
		v := map[string]attr.Value{}
		for k, s := range kv {
			v[k] = types.StringValue(s)
		}
		return types.MapValueMust(types.StringType, v)
	}
	for _, tc := range []struct {
		name      string
		state     machineModel
		vm        vsphere.VMInfo
		tags      []string
		wantNotes types.String
		wantTags  types.Set
		wantAttrs types.Map
	}{{
		name:  "unchanged, unset: the provider's own notes, no tags or attributes read",
		state: machineModel{Annotation: types.StringNull(), Tags: types.SetNull(types.StringType), CustomAttributes: types.MapNull(types.StringType)},
		vm:    vsphere.VMInfo{Annotation: own, CustomAttributes: map[string]string{"7": "backup"}}, tags: []string{"t9"},
		wantNotes: types.StringNull(), wantTags: types.SetNull(types.StringType), wantAttrs: types.MapNull(types.StringType),
	}, {
		name:  "notes edited, a tag detached and one attached, the attribute edited, another's attribute left out",
		state: machineModel{Annotation: types.StringValue("mine"), Tags: set("t1", "t2"), CustomAttributes: attrs(map[string]string{"1": "worker"})},
		vm:    vsphere.VMInfo{Annotation: "edited", CustomAttributes: map[string]string{"1": "edited", "7": "backup"}}, tags: []string{"t1", "t3"},
		wantNotes: types.StringValue("edited"), wantTags: set("t1", "t3"), wantAttrs: attrs(map[string]string{"1": "edited"}),
	}, {
		name:      "the provider's notes cleared, every tag detached, the attribute cleared",
		state:     machineModel{Annotation: types.StringNull(), Tags: set("t1"), CustomAttributes: attrs(map[string]string{"1": "worker"})},
		vm:        vsphere.VMInfo{Annotation: ""},
		wantNotes: types.StringValue(""), wantTags: set(), wantAttrs: attrs(nil),
	}, {
		name:      "empty notes asked for, the space SetAnnotation writes read",
		state:     machineModel{Annotation: types.StringValue(""), Tags: types.SetNull(types.StringType), CustomAttributes: types.MapNull(types.StringType)},
		vm:        vsphere.VMInfo{Annotation: " "},
		wantNotes: types.StringValue(""), wantTags: types.SetNull(types.StringType), wantAttrs: types.MapNull(types.StringType),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.state
			m.refreshSite(name, &tc.vm, tc.tags)
			if !m.Annotation.Equal(tc.wantNotes) {
				t.Errorf("annotation %s, want %s", m.Annotation, tc.wantNotes)
			}
			if !m.Tags.Equal(tc.wantTags) {
				t.Errorf("tags %s, want %s", m.Tags, tc.wantTags)
			}
			if !m.CustomAttributes.Equal(tc.wantAttrs) {
				t.Errorf("custom_attributes %s, want %s", m.CustomAttributes, tc.wantAttrs)
			}
		})
	}
}
