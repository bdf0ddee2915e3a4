// Package winpool keeps a pool of Windows nodes made from one template at
// its size and revision, the way a Kubernetes Deployment keeps its pods and
// a Cluster API MachineDeployment its machines: a change to what the
// members are made of rolls new members in (max surge) before old ones are
// drained and removed (max unavailable); a member whose VM is gone, whose
// create failed, or whose Node (or its networking agents) has not been
// Ready for too long is replaced; a smaller pool removes its unhealthy members first, then its newest.
//
// A member is created, joined and removed by internal/winnode (the Nodes
// interface); the pool decides which, how many at once, and in what order.
// It knows nothing of Terraform: the caller saves the members it is handed
// whenever they change, so a member is recorded the moment its VM exists.
package winpool

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// Health is a member's state as last observed.
type Health string

const (
	// Ready: the Node's Ready condition is True.
	Ready Health = "ready"
	// NotReady: the Node exists and is not Ready (since NotReadySince).
	NotReady Health = "not_ready"
	// NotJoined: the VM exists and no Node does (a create that failed
	// before the join, or a Node deleted outside Terraform).
	NotJoined Health = "not_joined"
	// VMMissing: the VM is gone (destroyed outside Terraform).
	VMMissing Health = "vm_missing"
	// AgentsNotReady: the Node is Ready, and its networking agents are not
	// Running and Ready (or have no pod on it) since NotReadySince: its pods
	// have no working Service or pod network.
	AgentsNotReady Health = "agents_not_ready"
	// NetworkProbeFailed: the Node and its agents are Ready, and the
	// network probe of the refresh (probe_on_refresh) failed since
	// NotReadySince: a pod there cannot reach DNS, a Service, another
	// node's pod or its own NodePort.
	NetworkProbeFailed Health = "network_probe_failed"
)

// Member is one node of the pool, as the state records it.
type Member struct {
	Name string
	winnode.Identity
	// Revision is the pool revision the member was made from; "" while it
	// is being created and after a create that failed (such a member is
	// replaced, as a tainted windows_node is).
	Revision string
	// FailureDomain is the name of the failure domain it was placed in;
	// "" when the pool has none.
	FailureDomain    string
	Created          time.Time
	IP               string
	WindowsBuildFull string
	KubeletVersion   string
	SSHHostKey       string
	Health           Health
	// NotReadySince is when the Node's Ready condition last turned false or
	// unknown (its lastTransitionTime), or, for AgentsNotReady, when the
	// first of its agents stopped being Ready (its pod's Ready transition;
	// the first refresh that saw an agent without a pod); zero unless Health
	// is NotReady or AgentsNotReady.
	NotReadySince time.Time
	// Causes say what is wrong with the member past Ready as last read
	// (kube.NodeHealth.Causes: the Node, its agents, the cluster DNS).
	Causes []string
}

// Observe sets the member's health from what winnode.Manager.ReadManyHealth
// saw at now.
func (m *Member) Observe(obs winnode.Observed, now time.Time) {
	wasAgents, wasProbe, since := m.Health == AgentsNotReady, m.Health == NetworkProbeFailed, m.NotReadySince
	m.NotReadySince, m.Causes = time.Time{}, nil
	if obs.Health != nil {
		m.Causes = obs.Health.Causes
	}
	switch {
	case obs.VM == nil:
		m.Health, m.Causes = VMMissing, nil
		return
	case obs.Node == nil:
		m.Health = NotJoined
	case !kube.NodeIsReady(obs.Node):
		m.Health = NotReady
		m.NotReadySince = notReadySince(obs.Node)
	case obs.Health != nil && len(obs.Health.AgentsDown) > 0:
		m.Health = AgentsNotReady
		// An agent with no pod tells no time: the member has been so
		// since the first refresh that saw it.
		switch {
		case !obs.Health.Since.IsZero():
			m.NotReadySince = obs.Health.Since
		case wasAgents && !since.IsZero():
			m.NotReadySince = since
		default:
			m.NotReadySince = now.UTC().Truncate(time.Second)
		}
	case obs.ProbeFailure != "":
		// A probe tells no time either: failing since the first refresh
		// that saw it fail.
		m.Health = NetworkProbeFailed
		m.Causes = append(slices.Clone(m.Causes), obs.ProbeFailure)
		m.NotReadySince = now.UTC().Truncate(time.Second)
		if wasProbe && !since.IsZero() {
			m.NotReadySince = since
		}
	default:
		m.Health = Ready
	}
	if ip := obs.VM.IP(vsphere.IPFilter{}); ip != "" {
		m.IP = ip
	}
	if obs.Node != nil {
		m.KubeletVersion = obs.Node.Status.NodeInfo.KubeletVersion
	}
}

// notReadySince is when the Node's Ready condition turned what it is now;
// a Node that never reported one is NotReady since it was created.
func notReadySince(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return n.CreationTimestamp.Time
}

// FailureDomain is one placement the members are spread over, round-robin
// by how many members each has (a set of hosts, a datastore: whatever
// fails together).
type FailureDomain struct {
	Name                                string
	ResourcePoolID, DatastoreID, HostID string
}

// Policy is how the pool converges.
type Policy struct {
	Replicas int
	// MaxParallel bounds the creates (and removals) in flight at once.
	MaxParallel int
	// MaxSurge: how many members above Replicas a roll may create before
	// removing old ones. MaxUnavailable: how many below Replicas may be
	// unavailable meanwhile. Not both zero (nothing could move).
	MaxSurge, MaxUnavailable int
	// ReplaceUnhealthyAfter replaces a member whose Node has been NotReady,
	// or whose networking agents have not been Running and Ready, this
	// long; 0 never does.
	ReplaceUnhealthyAfter time.Duration
}

// Pool is what the members should be.
type Pool struct {
	// Prefix of the member names: <prefix>-<5 characters>.
	Prefix string
	// Template is every member's spec but its name (and its placement when
	// Domains are set).
	Template winnode.Spec
	Domains  []FailureDomain
	// Revision identifies what the members are made of (Revision()).
	Revision string
	Policy
	Drain kube.DrainOptions
	// AntiAffinity keeps the members on different ESXi hosts where DRS can
	// (SpreadOverHosts).
	AntiAffinity bool
}

// spec is the spec of a new member named name in the given domain.
func (p *Pool) spec(name string, domain *FailureDomain) winnode.Spec {
	s := p.Template
	s.Name = name
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[LabelPool] = p.Prefix
	if domain != nil {
		if domain.ResourcePoolID != "" {
			s.ResourcePoolID = domain.ResourcePoolID
		}
		if domain.DatastoreID != "" {
			s.DatastoreID = domain.DatastoreID
		}
		if domain.HostID != "" {
			s.HostID = domain.HostID
		}
	}
	return s
}

// Revision is a short digest of what members are made of: everything that
// needs new machines to change. The caller passes those inputs (never
// secrets: a password change is named by its version).
func Revision(inputs any) (string, error) {
	b, err := json.Marshal(inputs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6]), nil
}

// NameSuffixLength is the length of the random part of a member's name.
// With the "-" it leaves the prefix MaxPrefixLength characters of the 15 a
// Windows computer name (NetBIOS) may have.
const NameSuffixLength = 5

// MaxPrefixLength is the longest name prefix.
const MaxPrefixLength = 15 - 1 - NameSuffixLength

// nameAlphabet is the alphabet of Kubernetes' generated names
// (k8s.io/apimachinery/pkg/util/rand.String): no vowels, no 0, 1 or 3, so
// no words and no look-alikes.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// NewName returns <prefix>-<5 random characters> not in taken.
func NewName(prefix string, taken map[string]bool) (string, error) {
	for range 100 {
		b := make([]byte, NameSuffixLength)
		for i := range b {
			n, err := rand.Int(rand.Reader, big.NewInt(int64(len(nameAlphabet))))
			if err != nil {
				return "", err
			}
			b[i] = nameAlphabet[n.Int64()]
		}
		if name := prefix + "-" + string(b); !taken[name] {
			return name, nil
		}
	}
	return "", fmt.Errorf("no free member name with prefix %q", prefix)
}
