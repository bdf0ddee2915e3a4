package networking

import (
	"fmt"
	"sort"
	"strings"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
)

// Mode is one way Windows nodes get their pod network: the value of
// windows_node_networking's cni, and everything that value decides.
type Mode interface {
	// Name is the mode's cni value.
	Name() string

	// Agents are the node agents the mode runs on every Windows node, one
	// DaemonSet each: what a node's create waits for and what Delete
	// refuses to remove from under a node. Empty when the cluster's own CNI
	// installs its Windows parts.
	Agents() []Agent
	// Objects renders each agent's cluster objects for a spec, in the
	// order of Agents.
	Objects(s Spec) ([]AgentObjects, error)

	// NeedsClusterCIDR tells whether the mode hands out pod subnets from
	// the cluster (pod) CIDR, which must then be known.
	NeedsClusterCIDR() bool
	// VXLAN is the overlay's network identifier and UDP port; zero when
	// the mode runs none.
	VXLAN() (vni, port int)
	// Plugin is the cluster network plugin (a Plugin name) the mode extends
	// to Windows, whose configuration must suit Windows; "" when the mode
	// relies on none.
	Plugin() string

	// CNIConfPath is where the join writes the node's CNI configuration
	// list (CNIConfig); "" when the cluster's CNI writes its own.
	CNIConfPath() string
	// CNIConfig is the node's CNI configuration list, as JSON; nil when
	// CNIConfPath is "".
	CNIConfig(n Node) ([]byte, error)
	// HostPrograms are the programs on the Windows host the mode runs,
	// which the golden image installed: the join refuses a node without
	// them.
	HostPrograms() []string
	// WithoutNetworking is why a node cannot run the mode without a
	// windows_node_networking; nil when it can.
	WithoutNetworking() *Refusal
}

// Spec is what windows_node_networking installs for one cluster.
type Spec struct {
	Namespace        string
	HostProcessImage string
	// APIServer is the URL the agents reach the API server at: the
	// discovered endpoint, never the kubernetes Service VIP (that VIP only
	// works once kube-proxy runs on the node, which is what kube-proxy is
	// starting to do).
	APIServer   string
	ClusterCIDR string // the pod network the mode hands out subnets from
	ServiceCIDR string
	// Labels mark every object as the provider's; each object adds
	// LabelComponent with its agent's name.
	Labels map[string]string
}

// Agent is a node agent a mode runs on every Windows node: one DaemonSet
// with its own ServiceAccount.
type Agent struct {
	// Name is what messages call it: "kube-proxy", "flannel".
	Name      string
	DaemonSet string
	// Selector selects the agent's pods (the DaemonSet's selector).
	Selector map[string]string
}

// AgentObjects is everything one agent needs: its identity, its RBAC, its
// configuration and its DaemonSet.
type AgentObjects struct {
	Agent              Agent
	ServiceAccount     *corev1ac.ServiceAccountApplyConfiguration
	ClusterRole        *rbacv1ac.ClusterRoleApplyConfiguration // nil when it binds a role that exists (system:node-proxier)
	ClusterRoleBinding *rbacv1ac.ClusterRoleBindingApplyConfiguration
	ConfigMap          *corev1ac.ConfigMapApplyConfiguration
	DaemonSet          *appsv1ac.DaemonSetApplyConfiguration
}

// Node is what a node's CNI configuration is made from: the cluster's
// network facts as the join has them.
type Node struct {
	ClusterCIDR   string
	ServiceCIDR   string
	ClusterDNS    []string
	ClusterDomain string
}

// Problem is a plan's diagnostic: its summary and its detail (the cause and
// the fix).
type Problem struct {
	Summary string
	Detail  string
}

// Refusal says why a mode needs a windows_node_networking: as the plan's
// diagnostic, and as the create's error (Join).
type Refusal struct {
	Problem
	Join string
}

var modes = map[string]Mode{}

// register adds a mode; each mode's file calls it from init.
func register(m Mode) {
	if _, dup := modes[m.Name()]; dup {
		panic("networking: mode " + m.Name() + " registered twice")
	}
	modes[m.Name()] = m
}

// Lookup finds a mode by its name.
func Lookup(name string) (Mode, bool) {
	m, ok := modes[name]
	return m, ok
}

// Names lists the modes' names, sorted, for validators and messages.
func Names() []string {
	out := make([]string, 0, len(modes))
	for n := range modes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Modes lists the modes, sorted by name.
func Modes() []Mode {
	out := make([]Mode, 0, len(modes))
	for _, n := range Names() {
		out = append(out, modes[n])
	}
	return out
}

// Default is the mode of a node without windows_node_networking, and of a
// namespace that holds no mode's agents: the cluster's CNI brings its own.
func Default() Mode { return none{} }

// Get finds a mode by its name, or says which names there are.
func Get(name string) (Mode, error) {
	if m, ok := modes[name]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("unknown CNI mode %q (one of %s)", name, strings.Join(Names(), ", "))
}

// ByDaemonSets is the mode whose agents' DaemonSets are among names (the
// DaemonSets a namespace holds), else Default.
func ByDaemonSets(names []string) Mode {
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, m := range Modes() {
		for _, a := range m.Agents() {
			if have[a.DaemonSet] {
				return m
			}
		}
	}
	return Default()
}
