package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestWarnNoProxy: the plan warns naming each address the user's no_proxy
// misses (the overrides stand in for discovery, which needs a cluster), and
// says nothing when the list holds them all.
func TestWarnNoProxy(t *testing.T) {
	proxy := func(noProxy ...string) types.Object {
		elems := make([]attr.Value, 0, len(noProxy))
		for _, e := range noProxy {
			elems = append(elems, types.StringValue(e))
		}
		return types.ObjectValueMust(proxyAttrTypes, map[string]attr.Value{
			"http": types.StringValue("http://proxy.corp:3128"), "https": types.StringValue("http://proxy.corp:3128"),
			"no_proxy": types.ListValueMust(types.StringType, elems),
		})
	}
	m := machineModel{ServiceCIDR: types.StringValue("10.96.0.0/12"), ClusterCIDR: types.StringValue("10.244.0.0/16"),
		APIServer: types.StringValue("https://api.corp:6443"), Proxy: proxy(".corp")}
	ipv4 := &vsphere.StaticIPv4{Address: "192.168.10.21", PrefixLength: 24}
	var diags diag.Diagnostics
	warnNoProxy(context.Background(), nil, "windows_node n", m, ipv4, &diags)
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("diagnostics = %v, want one warning", diags)
	}
	detail := diags.Warnings()[0].Detail()
	for _, want := range []string{"10.96.0.0/12", "10.244.0.0/16", "192.168.10.0/24"} {
		if !strings.Contains(detail, want) {
			t.Errorf("warning %q does not name %s", detail, want)
		}
	}
	if strings.Contains(detail, "api.corp") {
		t.Errorf("warning %q names the API server, which .corp covers", detail)
	}
	diags = nil
	m.Proxy = proxy(".corp", "10.0.0.0/8", "192.168.0.0/16")
	warnNoProxy(context.Background(), nil, "windows_node n", m, ipv4, &diags)
	if len(diags) != 0 {
		t.Errorf("a complete no_proxy: diagnostics = %v, want none", diags)
	}
}
