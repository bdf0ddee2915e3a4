package kubeletsim

import (
	"context"
	"sort"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// The networking modes the simulator models, each registered from its own
// file (agents_flannel.go): the agent programs its DaemonSets' start
// scripts run on the host and the CNI plugin types its configuration list
// names. The sandbox imports nothing of the provider, so this is its own
// list; TestModesMatchProvider holds it equal to the provider's registry
// (networking.Modes): a mode registered on one side and not the other
// fails there.

// simMode is what the simulator runs for one networking mode.
type simMode struct {
	// Agents are the programs (by the name of their executable, without
	// .exe) the mode's node agents run.
	Agents []string
	// CNIPlugins are the plugin types of the mode's CNI configuration
	// (type, delegate type and ipam type), whose executables the host
	// holds in the CNI bin dir.
	CNIPlugins []string
}

var (
	simModes = map[string]simMode{}
	// agentRuns are the agent programs by name, shared by the modes that
	// run them (kube-proxy).
	agentRuns = map[string]func(ctx context.Context, p *winsim.Process) int{}
)

// registerMode adds a mode; each mode's file calls it from init.
func registerMode(name string, m simMode) {
	if _, dup := simModes[name]; dup {
		panic("kubeletsim: mode " + name + " registered twice")
	}
	simModes[name] = m
}

// registerAgent adds an agent program; a program two modes run is
// registered once.
func registerAgent(name string, run func(ctx context.Context, p *winsim.Process) int) {
	if _, dup := agentRuns[name]; dup {
		panic("kubeletsim: agent " + name + " registered twice")
	}
	agentRuns[name] = run
}

// ModeNames lists the modes the simulator models, sorted.
func ModeNames() []string {
	out := make([]string, 0, len(simModes))
	for n := range simModes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// none: the cluster's own CNI brings its Windows parts; the simulator runs
// nothing for it.
func init() {
	registerMode("none", simMode{})
	registerAgent("kube-proxy", runKubeProxy)
}
