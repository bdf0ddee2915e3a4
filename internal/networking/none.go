package networking

import "context"

// none: the cluster's own CNI (Calico, Antrea) installs its Windows agent,
// kube-proxy and CNI configuration itself; the provider installs nothing
// and the join writes no CNI configuration. It is also the mode of a node
// without windows_node_networking (Default). Nothing the provider installs
// proves such a node's network, so the plan says so (Probe.Unproven); the
// probe still runs when the node has agents to prove.
type none struct{}

func init() { Register(none{}) }

func (none) Name() string                                           { return "none" }
func (none) Agents() []Agent                                        { return nil }
func (none) Objects(Spec) ([]AgentObjects, error)                   { return nil, nil }
func (none) NeedsClusterCIDR() bool                                 { return false }
func (none) Plugin() string                                         { return "" }
func (none) Detect(context.Context, ClusterReader) (*Plugin, error) { return nil, nil }
func (none) CNIConfPath() string                                    { return "" }
func (none) CNIConfig(Node) ([]byte, error)                         { return nil, nil }
func (none) HostPrograms() []string                                 { return nil }
func (none) Artifacts() []Artifact                                  { return nil }
func (none) Attributes(*Plugin) []Attribute                         { return nil }

// CheckPlugin: none extends no plugin, so it judges nothing.
func (none) CheckPlugin(p Plugin, _ func(string) []string) Verdict {
	return Verdict{Status: VerdictPass, Message: "cni = \"none\" extends no plugin of the cluster: its own CNI installs its Windows parts."}
}

func (none) Probe() Probe {
	return Probe{PodNetwork: "the cluster's own CNI",
		Unproven: "With cni = \"none\" the provider installs no network agents, so nothing it runs proves the Windows nodes' pod network " +
			"until the cluster's own CNI runs its Windows agents on them: the network probe then runs on each node whose agents exist. " +
			"Install the CNI's Windows components (Calico's calico-node-windows, Antrea's antrea-agent-windows) or choose a mode the provider installs."}
}
