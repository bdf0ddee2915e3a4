package provider_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// upgrade runs the provider server's UpgradeResourceState, as Terraform does
// when a state's schema version is older than the resource's, on a version-0
// state, and returns the upgraded attributes.
func upgrade(t *testing.T, typeName string, v0 map[string]any) (map[string]tftypes.Value, *tfprotov6.UpgradeResourceStateResponse) {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(provider.New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	s := schemas.ResourceSchemas[typeName]
	if s == nil || s.Version != 1 {
		t.Fatalf("%s: schema %+v, want version 1", typeName, s)
	}
	raw, err := json.Marshal(v0)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: typeName, Version: 0, RawState: &tfprotov6.RawState{JSON: raw},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.UpgradedState == nil {
		return nil, resp
	}
	typ := s.ValueType()
	v, err := resp.UpgradedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]tftypes.Value{}
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs, resp
}

func str(t *testing.T, v tftypes.Value) string {
	t.Helper()
	var s string
	if err := v.As(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNodeStateUpgradesTimeZone: a version-0 node's time_zone, sysprep's
// index, becomes the ID of the zone it named (85, the old default: GMT
// Standard Time), everything else is kept, and an index Microsoft's table
// does not have is an error that says what to do.
func TestNodeStateUpgradesTimeZone(t *testing.T) {
	for _, c := range []struct {
		index float64
		want  string
	}{{85, "GMT Standard Time"}, {4, "Pacific Standard Time"}, {235, "Tokyo Standard Time"}} {
		attrs, resp := upgrade(t, "windows_node", map[string]any{
			"id": "vm-42", "name": "win-1", "template": "/dc1/vm/templates/win2022-k8s", "time_zone": c.index, "num_cpus": 4,
		})
		if len(resp.Diagnostics) > 0 || attrs == nil {
			t.Fatalf("index %v: %+v", c.index, resp.Diagnostics)
		}
		if got := str(t, attrs["time_zone"]); got != c.want {
			t.Errorf("time_zone %v upgraded to %q, want %q", c.index, got, c.want)
		}
		if got := str(t, attrs["template"]); got != "/dc1/vm/templates/win2022-k8s" {
			t.Errorf("template = %q: the upgrade lost it", got)
		}
	}
	_, resp := upgrade(t, "windows_node", map[string]any{"id": "vm-42", "name": "win-1", "time_zone": 7})
	if len(resp.Diagnostics) == 0 || !strings.Contains(resp.Diagnostics[0].Detail, "time_zone = 7") ||
		!strings.Contains(resp.Diagnostics[0].Detail, "terraform state rm") {
		t.Errorf("an index outside the table: %+v", resp.Diagnostics)
	}
}

// TestNodePoolStateUpgradeKeepsMembersCurrent: the pool's revision digests
// time_zone; the upgrade restamps the members that were current, so the
// next plan rolls none, and leaves an outdated member outdated.
func TestNodePoolStateUpgradeKeepsMembersCurrent(t *testing.T) {
	member := func(name, revision string) map[string]any {
		return map[string]any{"name": name, "id": "vm-" + name, "revision": revision, "health": "Ready"}
	}
	attrs, resp := upgrade(t, "windows_node_pool", map[string]any{
		"id": "pool", "name_prefix": "pool", "template": "/dc1/vm/templates/win2022-k8s", "folder": "/dc1/vm/k8s",
		"resource_pool_id": "resgroup-1", "time_zone": 85, "replicas": 2, "revision": "old", "ready_replicas": 2,
		"members": []any{member("pool-a", "old"), member("pool-b", "older")},
	})
	if len(resp.Diagnostics) > 0 || attrs == nil {
		t.Fatalf("%+v", resp.Diagnostics)
	}
	if got := str(t, attrs["time_zone"]); got != "GMT Standard Time" {
		t.Errorf("time_zone = %q", got)
	}
	rev := str(t, attrs["revision"])
	if rev == "old" || rev == "" {
		t.Fatalf("revision = %q: not recomputed", rev)
	}
	var members []tftypes.Value
	if err := attrs["members"].As(&members); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range members {
		var fields map[string]tftypes.Value
		if err := m.As(&fields); err != nil {
			t.Fatal(err)
		}
		got[str(t, fields["name"])] = str(t, fields["revision"])
	}
	if got["pool-a"] != rev || got["pool-b"] != "older" {
		t.Errorf("member revisions = %v; want pool-a at %s (it was current) and pool-b still outdated", got, rev)
	}
}

// TestGoldenImageStateUpgradeRenamesTimezone: timezone becomes time_zone.
func TestGoldenImageStateUpgradeRenamesTimezone(t *testing.T) {
	attrs, resp := upgrade(t, "windows_golden_image", map[string]any{"id": "vm-7", "timezone": "W. Europe Standard Time"})
	if len(resp.Diagnostics) > 0 || attrs == nil {
		t.Fatalf("%+v", resp.Diagnostics)
	}
	if got := str(t, attrs["time_zone"]); got != "W. Europe Standard Time" {
		t.Errorf("time_zone = %q", got)
	}
}
