package networking

// none: the cluster's own CNI (Calico, Antrea) installs its Windows agent,
// kube-proxy and CNI configuration itself; the provider installs nothing
// and the join writes no CNI configuration. It is also the mode of a node
// without windows_node_networking (Default).
type none struct{}

func init() { register(none{}) }

func (none) Name() string                         { return "none" }
func (none) Agents() []Agent                      { return nil }
func (none) Objects(Spec) ([]AgentObjects, error) { return nil, nil }
func (none) NeedsClusterCIDR() bool               { return false }
func (none) VXLAN() (vni, port int)               { return 0, 0 }
func (none) Plugin() string                       { return "" }
func (none) CNIConfPath() string                  { return "" }
func (none) CNIConfig(Node) ([]byte, error)       { return nil, nil }
func (none) HostPrograms() []string               { return nil }
func (none) WithoutNetworking() *Refusal          { return nil }
