package kubeletsim

import (
	"encoding/json"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// TestModesMatchProvider holds the simulator's modes (modes.go) equal to the
// provider's registry: the same names, every program a mode runs from C:\k
// simulated as an agent, and every plugin type of its CNI configuration
// modelled. A mode registered on one side only fails here.
func TestModesMatchProvider(t *testing.T) {
	if got, want := ModeNames(), networking.Names(); !slices.Equal(got, want) {
		t.Fatalf("the simulator models modes %v, the provider registers %v: register the mode on both sides (kubeletsim/modes.go, networking)", got, want)
	}
	for _, m := range networking.Modes() {
		sim := simModes[m.Name()]
		for _, prog := range m.HostPrograms() {
			base := strings.TrimSuffix(path.Base(strings.ReplaceAll(prog, `\`, "/")), ".exe")
			switch {
			case strings.HasPrefix(prog, networking.CNIBinDir+`\`):
				if !slices.Contains(sim.CNIPlugins, base) {
					t.Errorf("%s: CNI plugin %s is not among the simulated mode's %v", m.Name(), prog, sim.CNIPlugins)
				}
			case !slices.Contains(sim.Agents, base):
				t.Errorf("%s: program %s is not among the simulated mode's agents %v", m.Name(), prog, sim.Agents)
			}
		}
		for _, a := range sim.Agents {
			if agentRuns[a] == nil {
				t.Errorf("%s: agent %s is not registered (registerAgent)", m.Name(), a)
			}
		}
		conf, err := m.CNIConfig(networking.Node{ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"})
		if err != nil || conf == nil {
			continue
		}
		var doc struct {
			Plugins []struct {
				Type     string
				Delegate *struct{ Type string }
				IPAM     *struct{ Type string }
			}
		}
		if err := json.Unmarshal(conf, &doc); err != nil {
			t.Fatalf("%s: CNI configuration: %v", m.Name(), err)
		}
		for _, p := range doc.Plugins {
			types := []string{p.Type}
			if p.Delegate != nil {
				types = append(types, p.Delegate.Type)
			}
			if p.IPAM != nil {
				types = append(types, p.IPAM.Type)
			}
			for _, typ := range types {
				if !slices.Contains(sim.CNIPlugins, typ) {
					t.Errorf("%s: the CNI configuration names plugin %q, which the simulated mode does not model (%v)", m.Name(), typ, sim.CNIPlugins)
				}
			}
		}
	}
}
