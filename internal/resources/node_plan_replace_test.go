package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// replacePaths asks the node schema's own plan modifiers, of every attribute
// type that has them: the framework's RequiresReplace (string, int64, bool)
// and replaceUnlessImported (string, int64, list, object). Changes whose modifiers
// keep the node (num_cpus) are not listed.
func TestReplacePaths(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&nodeResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	s := sr.Schema
	ipv4 := func(address string) types.Object {
		return types.ObjectValueMust(map[string]attr.Type{"address": types.StringType, "prefix_length": types.Int64Type,
			"gateway": types.StringType, "dns_servers": types.ListType{ElemType: types.StringType}},
			map[string]attr.Value{"address": types.StringValue(address), "prefix_length": types.Int64Value(24),
				"gateway": types.StringNull(), "dns_servers": types.ListNull(types.StringType)})
	}
	disks := func(sizes ...int64) types.List {
		var v []attr.Value
		for _, n := range sizes {
			v = append(v, types.ObjectValueMust(diskAttrTypes, map[string]attr.Value{"size_gb": types.Int64Value(n)}))
		}
		return types.ListValueMust(types.ObjectType{AttrTypes: diskAttrTypes}, v)
	}
	nics := func(ids ...string) types.List {
		var v []attr.Value
		for _, id := range ids {
			v = append(v, types.ObjectValueMust(nicAttrTypes, map[string]attr.Value{"network_id": types.StringValue(id)}))
		}
		return types.ListValueMust(types.ObjectType{AttrTypes: nicAttrTypes}, v)
	}
	tags := func(ids ...string) types.Set {
		var v []attr.Value
		for _, id := range ids {
			v = append(v, types.StringValue(id))
		}
		return types.SetValueMust(types.StringType, v)
	}
	const tag1, tag2 = "urn:vmomi:InventoryServiceTag:11111111-1111-1111-1111-111111111111:GLOBAL", "urn:vmomi:InventoryServiceTag:22222222-2222-2222-2222-222222222222:GLOBAL"
	base := map[string]attr.Value{
		"datastore_cluster_id": types.StringValue("group-p5"), "storage_policy_id": types.StringValue("aa6d5a82-1c88-45da-85d3-3d74b91a5bad"),
		"tags": tags(tag1), "custom_attributes": types.MapValueMust(types.StringType, map[string]attr.Value{"101": types.StringValue("worker")}),
		"annotation": types.StringValue("a node"), "disk": disks(40), "network_interface": nics("dvportgroup-9"),
		"name": types.StringValue("win-1"), "template": types.StringValue("/DC0/vm/t"), "num_cpus": types.Int64Value(2),
		"time_zone": types.StringValue("GMT Standard Time"), "linked_clone": types.BoolValue(false), "ipv4": ipv4("10.0.0.21"),
		"admin_password_wo_version": types.Int64Value(1), "network_id": types.StringValue("network-7"),
	}
	request := func(changes map[string]attr.Value) resource.ModifyPlanRequest {
		state := tfsdk.State{Schema: s, Raw: emptyState(ctx, s).Raw}
		plan := tfsdk.Plan{Schema: s, Raw: emptyState(ctx, s).Raw}
		for name, v := range base {
			if d := state.SetAttribute(ctx, path.Root(name), v); d.HasError() {
				t.Fatal(d)
			}
			if changed, ok := changes[name]; ok {
				v = changed
			}
			if d := plan.SetAttribute(ctx, path.Root(name), v); d.HasError() {
				t.Fatal(d)
			}
		}
		return resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: s, Raw: plan.Raw}, Plan: plan, State: state}
	}
	for _, c := range []struct {
		name    string
		changes map[string]attr.Value
		want    string
	}{
		{"nothing changes", nil, ""},
		{"in place", map[string]attr.Value{"num_cpus": types.Int64Value(4)}, ""},
		{"string", map[string]attr.Value{"name": types.StringValue("win-2"), "num_cpus": types.Int64Value(4)}, "name"},
		{"string, replaced unless imported", map[string]attr.Value{"network_id": types.StringValue("network-8")}, "network_id"},
		// ModifyPlan decides the template (template_identity.go), not a plan modifier.
		{"template", map[string]attr.Value{"template": types.StringValue("/DC0/vm/u")}, ""},
		{"time zone", map[string]attr.Value{"time_zone": types.StringValue("UTC")}, "time_zone"},
		{"int64, replaced unless imported", map[string]attr.Value{"admin_password_wo_version": types.Int64Value(2)}, "admin_password_wo_version"},
		{"bool", map[string]attr.Value{"linked_clone": types.BoolValue(true)}, "linked_clone"},
		{"object, sorted", map[string]attr.Value{"ipv4": ipv4("10.0.0.22"), "linked_clone": types.BoolValue(true)}, "ipv4, linked_clone"},
		// The datacenter's settings (machine_site.go): what the VM is made
		// of replaces it, what vCenter changes on a VM in place does not.
		{"datastore cluster", map[string]attr.Value{"datastore_cluster_id": types.StringValue("group-p6")}, "datastore_cluster_id"},
		{"storage policy", map[string]attr.Value{"storage_policy_id": types.StringValue("4d5f673c-536f-11e6-beb8-9e71128cae77")}, "storage_policy_id"},
		{"a disk added", map[string]attr.Value{"disk": disks(40, 20)}, "disk"},
		{"a disk grown", map[string]attr.Value{"disk": disks(50)}, "disk"},
		{"a NIC added", map[string]attr.Value{"network_interface": nics("dvportgroup-9", "network-7")}, "network_interface"},
		{"tags, in place", map[string]attr.Value{"tags": tags(tag1, tag2)}, ""},
		{"custom attributes, in place", map[string]attr.Value{"custom_attributes": types.MapNull(types.StringType)}, ""},
		{"annotation, in place", map[string]attr.Value{"annotation": types.StringValue("another")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := pathList(replacePaths(ctx, request(c.changes))); got != c.want {
				t.Errorf("replacePaths = %q, want %q", got, c.want)
			}
		})
	}
}
