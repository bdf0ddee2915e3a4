package networking

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// Plugin is the cluster network plugin (a Plugin name) the mode extends
	// to Windows, whose configuration must suit Windows; "" when the mode
	// relies on none.
	Plugin() string
	// Detect recognises the cluster's own network plugin that the mode
	// extends, by the objects its upstream manifests create, reading them
	// through r; nil (and no error) when it is not installed or the mode
	// extends none. Discovery asks every mode (Detect).
	Detect(ctx context.Context, r ClusterReader) (*Plugin, error)
	// CheckPlugin judges the cluster's plugin, as Detect found it, for
	// Windows nodes: what was found and, when something must change,
	// exactly which setting (windows_cluster's readiness check "cni" and
	// the plan of windows_node_networking, CheckMode). daemonSets lists a
	// namespace's DaemonSets, for the restart command a remedy names.
	CheckPlugin(p Plugin, daemonSets func(namespace string) []string) Verdict

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
	// Artifacts are the downloads the golden image installs for the mode
	// (windows_golden_image's network_artifacts.<mode>.<name>): where each
	// lands on the host, and what the user's URL must point at.
	Artifacts() []Artifact

	// Attributes are the mode's computed attributes, which
	// windows_node_networking nests under an attribute named for the mode
	// (flannel = { vni, port }); p is the cluster's plugin as Detect found
	// it, nil when unknown (the schema asks with nil for the names and
	// kinds). Empty when the mode has none.
	Attributes(p *Plugin) []Attribute

	// Probe is what the network probe of a node expects of the mode: how
	// its messages name the pod network, and whether it proves anything.
	Probe() Probe
}

// HostDirsMode is a Mode whose agents keep files on the host beyond the
// CNI folders: the golden image creates those directories with a protected
// DACL (bootstrap.AgentDirs), so no local user creates them first. Optional,
// so a mode without such directories need not say so.
type HostDirsMode interface {
	Mode
	// HostDirs are absolute Windows paths of directories the agents read
	// or write.
	HostDirs() []string
}

// HostSetupMode is a Mode whose nodes need host prerequisites the golden
// image does not give every node (Windows features, boot options): the join
// runs its script before the kubelet starts, and restarts the computer when
// the script prints rebootMarker (the step may reboot). The script must be
// idempotent: it runs at every join, and again after a cut connection.
// Optional, so a mode without such prerequisites need not say so.
type HostSetupMode interface {
	Mode
	// HostSetup renders the step's script; rebootMarker is what it prints
	// right before it restarts the computer.
	HostSetup(rebootMarker string) (string, error)
}

// HostDirs lists every registered mode's HostDirs, in the modes' order.
func HostDirs() []string {
	var out []string
	for _, m := range Modes() {
		if h, ok := m.(HostDirsMode); ok {
			out = append(out, h.HostDirs()...)
		}
	}
	return out
}

// ClusterReader is what a mode's Detect reads the cluster through (the
// kube package implements it); absent objects are found = false, not
// errors.
type ClusterReader interface {
	ConfigMap(ctx context.Context, namespace, name string) (data map[string]string, found bool, err error)
	DaemonSet(ctx context.Context, namespace, name string) (found bool, err error)
	// Object reads a custom resource (Calico's IPAMConfig, Antrea's
	// ...) as unstructured content; namespace "" for cluster-scoped ones.
	Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (obj map[string]any, found bool, err error)
	// Objects lists a cluster-scoped custom resource (Calico's IPPools);
	// served is false when the API server does not serve it (its CRD not
	// installed). A refusal (Forbidden) is an error: a check must not pass
	// a cluster it could not read.
	Objects(ctx context.Context, gvr schema.GroupVersionResource) (items []map[string]any, served bool, err error)
}

// Artifact is one download the golden image installs for a mode.
type Artifact struct {
	// Name is its key under the mode in windows_golden_image's
	// network_artifacts: a lower-case identifier ("flanneld", "cni_plugin").
	Name string
	// Description says what the URL must point at, with an upstream
	// example, for the schema's documentation.
	Description string
	// InstallAs is where the program lands on the host (a HostPrograms
	// entry when the mode needs it to run).
	InstallAs string
	// Member is the file to take out of an archive (.tgz or .zip),
	// relative to ExtractTo, and install as InstallAs; "" when the download
	// is the program itself or the whole archive unpacks (ExtractTo).
	Member string
	// ExtractTo unpacks the archive there (every file): set it for an
	// archive of several programs; with Member alone the archive unpacks
	// into InstallAs's folder.
	ExtractTo string
	// Required: the mode cannot run without it (the golden image's plan
	// says so when a node image lacks it).
	Required bool
}

// AttributeKind is the type of a mode's computed attribute.
type AttributeKind int

// The kinds of computed attributes.
const (
	AttributeInt64 AttributeKind = iota
	AttributeString
)

// Attribute is one of a mode's computed attributes.
type Attribute struct {
	Name        string
	Description string
	Kind        AttributeKind
	Int64       int64  // when Kind is AttributeInt64
	String      string // when Kind is AttributeString
}

// Probe is what the network probe of a node says about, and expects of, a
// mode.
type Probe struct {
	// PodNetwork names the path between pods on two nodes as the mode
	// builds it, for the probe's "expected" line: "flannel's VXLAN overlay
	// (HNS network flannel.4096)".
	PodNetwork string
	// Unproven, when not "", is the plan's warning that nothing the
	// provider installs proves the node's network (mode none): the probe
	// still runs when the cluster's agents exist.
	Unproven string
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
	// ModeSettings are the mode's computed attributes (Attributes) as the
	// resource holds them, string ones by name: what the plan read of the
	// cluster's plugin (antrea's traffic_encap_mode), which the mode's
	// objects follow. Empty when unknown; a mode then uses its defaults.
	ModeSettings map[string]string
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

var modes = map[string]Mode{}

// Register adds a mode; each mode's file calls it from init (and a test's
// fake mode from its _test.go, which is how TestUnitFakeMode proves a mode
// needs nothing outside its own files).
func Register(m Mode) {
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

// Cleaner is what RegisterForTest needs of a *testing.T.
type Cleaner interface{ Cleanup(func()) }

// RegisterForTest registers a test's own mode until the test ends: the
// proof that a mode needs nothing outside its own file (TestUnitFakeMode
// in the resources package). Tests that call it must not run in parallel
// with others that read the registry.
func RegisterForTest(t Cleaner, m Mode) {
	Register(m)
	t.Cleanup(func() { delete(modes, m.Name()) })
}
