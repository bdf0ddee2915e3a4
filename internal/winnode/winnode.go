// Package winnode creates, joins, updates and removes a Windows worker node:
// a vSphere clone of a golden image, customized by sysprep, bootstrapped over
// WinRM or SSH with the bootstrap's join steps, and registered with the
// cluster through a short-lived bootstrap token. It orchestrates vCenter and
// the cluster behind the small interfaces it defines (VSphere, Kube; adapted
// from internal/vsphere and internal/kube in adapter.go), the guest through
// internal/guest, and internal/bootstrap's steps; it knows nothing of
// Terraform.
package winnode

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// BootstrapTokenTTL bounds the join credential: short enough that a token
// leaked by a provider that died mid-join is soon useless. A slow boot does
// not outlive it: until the node is Ready the token is refreshed every
// third of it (keepTokenAlive), and it is deleted as soon as the node has
// joined. A variable so that tests can make the boot outlast it.
var BootstrapTokenTTL = 30 * time.Minute

// LabelWindowsBuild is the node label pods and RuntimeClasses select on.
const LabelWindowsBuild = "node.kubernetes.io/windows-build"

// Spec is what a node is.
type Spec struct {
	Name string // Kubernetes node name (lower case) and Windows computer name

	// vSphere placement and hardware.
	Template       string // inventory path or managed object id
	Folder         string
	ResourcePoolID string
	DatastoreID    string
	NetworkID      string
	HostID         string
	NumCPUs        int32
	MemoryMB       int64
	DiskSizeGB     int64
	LinkedClone    bool
	// Site is what a datacenter's vSphere adds (site.go).
	Site SiteVM

	// Guest customization.
	AdminUser string
	// AdminPassword is the user's admin_password_wo; the node's own
	// Administrator password is derived from it (GuestPassword).
	AdminPassword string
	// TimeZone is the Windows time zone ID the join sets (timezone.IDs).
	TimeZone string
	IPv4     *vsphere.StaticIPv4 // nil: DHCP
	// Domain joins the node to an Active Directory domain in its
	// customization (nil: the workgroup); the join's outcome is checked on
	// the guest (bootstrap.DomainJoinedStep).
	Domain *vsphere.DomainJoin

	Transport remote.Config // Host, User and Password are filled in
	// HTTPSListener: the provider creates the guest's WinRM HTTPS listener
	// over vmtools, with a certificate made on the guest, and pins it
	// (guest.CreateHTTPSListener), unless Transport pins one already.
	HTTPSListener bool
	// HTTPSListenerAdmit are the addresses or CIDRs the listener's
	// firewall rule admits to 5986; empty: the address the provider
	// connects to the guest from (managementAddress).
	HTTPSListenerAdmit []string

	// Kubernetes.
	Labels map[string]string
	Taints []corev1.Taint
	// Networking is the namespace of the cluster's windows_node_networking
	// ("" when the node references none): its mode decides the node's CNI
	// configuration and which agents must run on the node before it is done.
	Networking string
	// CNI is the mode the node joined with, as its state recorded it: its
	// health reads that mode's agents without asking the cluster. The join
	// takes the mode from Networking alone.
	CNI string
	// SkipNetworkProbe leaves out the network probe at the end of the
	// create (skip_checks = ["network-probe"]); ProbeRuntimeClass is the
	// RuntimeClass its pod names ("" the provider's own whose scheduling
	// selects the node, if any: kube.ProbeRequest).
	SkipNetworkProbe  bool
	ProbeRuntimeClass string
	// RebootAfterJoin restarts the guest once the node is done (Ready, its
	// agents, its probe) and requires all of it again from the new boot
	// before the create counts: a gate for images whose networking does not
	// survive a reboot.
	RebootAfterJoin bool
	// Overrides of discovered cluster facts ("" = discover).
	APIServer, ClusterDNS, ClusterDomain, ServiceCIDR, ClusterCIDR string
	// Proxy is the site's proxy for containerd and the kubelet, its NoProxy
	// as the user listed it (the join completes it: proxyFor).
	Proxy bootstrap.Proxy
}

// Identity is the VM, saved to state the moment it exists.
type Identity struct {
	VMID, InstanceUUID, BIOSUUID, InventoryPath string
}

// ProviderID is the Node's spec.providerID in the form the vSphere cloud
// provider (and its CSI driver) expects.
func (id Identity) ProviderID() string { return "vsphere://" + strings.ToLower(id.BIOSUUID) }

// Result is a joined node.
type Result struct {
	Identity
	IP               string
	WindowsBuildFull string
	// CNI is the networking mode the node joined with.
	CNI string
	// NoProxy is the NO_PROXY the join gave containerd and the kubelet
	// (nil without a proxy).
	NoProxy []string
	// SSHHostKey is the SSH host key the guest presented and the transport
	// trusted (authorized_keys format); "" over WinRM.
	SSHHostKey string
	// WinRMCertificateSHA256 is the WinRM HTTPS certificate pinned: the
	// one the provider's listener was made with, or Transport's pin.
	WinRMCertificateSHA256 string
	Node                   *corev1.Node
	// ProbePaths are the network probe's paths, all passed; ProbeDuration
	// its time (zero when it did not run).
	ProbePaths    []kube.ProbePath
	ProbeDuration time.Duration
	// ReadyToDone is how long it took from the Node turning Ready to the end
	// of the create (providerID, labels, taints, token clean-up).
	ReadyToDone time.Duration
	// RebootRecovery is how long the reboot after the join took, from the
	// restart to Ready, agents and probe again (zero without one).
	RebootRecovery time.Duration
}

// Manager runs node operations against one vCenter and one cluster
// (NewManager makes one of the concrete clients).
type Manager struct {
	VSphere VSphere
	Kube    Kube
	Connect guest.Connector
	// Network, when set, supplies the discovered cluster network (the
	// provider discovers it once per run); nil discovers it on every join.
	Network func(context.Context) (*kube.ClusterNetwork, error)
	// HealthSnapshot, when set, supplies what a refresh judges nodes'
	// health with (the provider reads it once per run and namespace); nil
	// reads it on every refresh (Kube.ReadHealthSnapshot).
	HealthSnapshot func(ctx context.Context, namespace string, agents []kube.Agent) (*kube.HealthSnapshot, error)
	Progress       func(stage string, fields map[string]any)
	// RemoveComputerAccount, when set, deletes a destroyed node's computer
	// account from its Active Directory domain (internal/addirectory), once
	// its VM is gone; it reports whether there was one.
	RemoveComputerAccount func(ctx context.Context, computerName string) (bool, error)
}

// progress reports a stage: through the keeper of the operation under way
// (keepProgress), which reports it again every guest.ProgressEvery while it
// lasts, else once.
func (m *Manager) progress(ctx context.Context, stage string, fields map[string]any) {
	if keep, ok := ctx.Value(progressKey{}).(guest.Progress); ok {
		keep(stage, fields)
		return
	}
	if m.Progress != nil {
		m.Progress(stage, fields)
	}
}

type progressKey struct{}

// keepProgress starts the progress keeper of one operation (a Create, a
// Join, an Update, a Repair), carried by its ctx so that concurrent
// operations of one Manager (a pool's members) each keep their own stage;
// an operation inside another keeps the outer one's. stop ends it.
func (m *Manager) keepProgress(ctx context.Context) (context.Context, func()) {
	if _, ok := ctx.Value(progressKey{}).(guest.Progress); ok || m.Progress == nil {
		return ctx, func() {}
	}
	keep, stop := guest.KeepProgress(m.Progress)
	return context.WithValue(ctx, progressKey{}, keep), stop
}
