package networking

import (
	"strings"
	"testing"
)

// TestAntreaFollowsTheClusterTrafficMode: the antrea mode's attributes
// carry the cluster's trafficEncapMode and tunnelType (noEncap, vxlan), and
// its Windows agents' antrea-agent.conf is rendered from them; without
// them (or with a mode the Windows agents do not run) Antrea's defaults.
func TestAntreaFollowsTheClusterTrafficMode(t *testing.T) {
	attrs := func(p *Plugin) map[string]string {
		out := map[string]string{}
		for _, a := range (antrea{}).Attributes(p) {
			out[a.Name] = a.String
		}
		return out
	}
	plugin := func(conf string) *Plugin {
		c, err := ParseAntreaAgentConf(conf)
		if err != nil {
			t.Fatal(err)
		}
		return &Plugin{Name: PluginAntrea, Config: c}
	}
	for _, tc := range []struct {
		name         string
		p            *Plugin
		mode, tunnel string
	}{
		{"unknown", nil, "encap", "geneve"},
		{"defaults", plugin("featureGates:\n"), "encap", "geneve"},
		{"noEncap", plugin("trafficEncapMode: NoEncap\n"), "noEncap", "geneve"},
		{"vxlan", plugin("tunnelType: vxlan\n"), "encap", "vxlan"},
		{"hybrid, refused at plan", plugin("trafficEncapMode: hybrid\n"), "encap", "geneve"},
	} {
		got := attrs(tc.p)
		if got["traffic_encap_mode"] != tc.mode || got["tunnel_type"] != tc.tunnel {
			t.Errorf("%s: attributes %v, want %s/%s", tc.name, got, tc.mode, tc.tunnel)
		}
		objs, err := (antrea{}).Objects(Spec{Namespace: "ns", APIServer: "https://10.0.0.1:6443", ModeSettings: got})
		if err != nil {
			t.Fatal(err)
		}
		conf := objs[0].ConfigMap.Data
		want := "trafficEncapMode: " + tc.mode + "\ntunnelType: " + tc.tunnel + "\n"
		if !strings.Contains(conf["antrea-agent.conf"], want) {
			t.Errorf("%s: antrea-agent.conf\n%s\nwant it to hold %q", tc.name, conf["antrea-agent.conf"], want)
		}
	}
}
