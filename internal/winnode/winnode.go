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
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/adminpass"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/redact"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
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

	// Guest customization.
	AdminUser string
	// AdminPassword is the user's admin_password_wo; the node's own
	// Administrator password is derived from it (GuestPassword).
	AdminPassword string
	// TimeZone is the Windows time zone ID the join sets (timezone.IDs).
	TimeZone string
	IPv4     *vsphere.StaticIPv4 // nil: DHCP

	Transport remote.Config // Host, User and Password are filled in
	// HTTPSListener: the provider creates the guest's WinRM HTTPS listener
	// over vmtools, with a certificate made on the guest, and pins it
	// (guest.CreateHTTPSListener), unless Transport pins one already.
	HTTPSListener bool

	// Kubernetes.
	Labels map[string]string
	Taints []corev1.Taint
	// Networking is the namespace of the cluster's windows_node_networking
	// ("" when the node references none): its mode decides the node's CNI
	// configuration and which agents must run on the node before it is done.
	Networking string
	// CNI is the deprecated per-node mode; with Networking set it must
	// agree with it (or be empty).
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

// Create clones, customizes, bootstraps and joins a node. onVM is called as
// soon as the VM exists, before anything else can fail, so the caller saves
// it: from then on a failure leaves a tracked VM, never an untracked one.
// The clone carries the node's name and template (cloneMarks) from its
// first moment, so that a create that died before its caller saved the VM
// (the process killed between the clone and the state write) leaves a VM
// the next create finds and adopts, instead of cloning a second one.
func (m *Manager) Create(ctx context.Context, spec Spec, onVM func(Identity)) (Result, error) {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	var res Result
	req := cloneRequest(spec)
	id, adopted, err := m.adopt(ctx, spec, req)
	switch {
	case err != nil && id.VMID == "":
		return res, guest.Stage("checking the node's VM name", err)
	case adopted:
		m.progress(ctx, "adopt earlier clone", map[string]any{"vm": id.VMID})
	default:
		m.progress(ctx, "clone", map[string]any{"template": spec.Template})
		id, err = m.VSphere.CloneNode(ctx, req)
		if err != nil && id.VMID == "" {
			return res, guest.Stage("cloning "+spec.Template, err)
		}
	}
	res.Identity = id
	if onVM != nil {
		onVM(res.Identity)
	}
	if err != nil {
		// The VM exists but its identity is incomplete: tracked, then failed.
		return res, guest.Stage("cloning "+spec.Template, err)
	}
	if adopted {
		// It may be on already (its create died later than the clone):
		// its customization has then ended or goes on, and the wait below
		// reads which.
		if _, err := m.PowerOnIfOff(ctx, id.VMID); err != nil {
			return res, err
		}
	} else {
		m.progress(ctx, "power on", map[string]any{"vm": id.VMID})
		if err := m.VSphere.PowerOn(ctx, id.VMID); err != nil {
			return res, guest.Stage("powering on", err)
		}
	}
	m.progress(ctx, "customize", map[string]any{"vm": id.VMID})
	if err := m.VSphere.WaitForCustomization(ctx, id.VMID); err != nil {
		return res, guest.Stage("guest customization", err)
	}
	joined, err := m.Join(ctx, spec, res.Identity)
	joined.Identity = res.Identity
	return joined, err
}

// Join bootstraps the node on an existing VM: wait for its IP, discover the
// cluster, create a bootstrap token, run the join steps, wait for Ready, set
// providerID, labels and taints, delete the token. Re-running it converges
// (a node deleted from the cluster is re-joined this way).
func (m *Manager) Join(ctx context.Context, spec Spec, id Identity) (Result, error) {
	return m.join(ctx, spec, id, false)
}

// join is Join; agentsRunOn says the node's agents may run from before
// this join: a join again on a VM that kept running, whose agent containers
// (containerd's shims hold them) outlive the kubelet's restart, and which
// the new kubelet adopts without starting them again.
func (m *Manager) join(ctx context.Context, spec Spec, id Identity, agentsRunOn bool) (Result, error) {
	ctx, stopProgress := m.keepProgress(ctx)
	defer stopProgress()
	res := Result{Identity: id}
	m.progress(ctx, "wait for IP", map[string]any{"vm": id.VMID})
	ip, err := m.VSphere.WaitForIP(ctx, id.VMID)
	if err != nil {
		return res, guest.Stage("waiting for the guest's IP address", err)
	}
	res.IP = ip

	m.progress(ctx, "discover cluster", nil)
	join, err := m.joinConfig(ctx, spec, ip)
	if err != nil {
		return res, guest.Stage("discovering the cluster", err)
	}

	tcfg := spec.Transport
	tcfg.Host, tcfg.User, tcfg.Password = ip, spec.AdminUser, spec.GuestPassword()
	if tcfg.Protocol == remote.ProtocolVMTools {
		tcfg.Guest = m.VSphere.GuestOperations(id.VMID)
	}
	if spec.HTTPSListener && tcfg.CertSHA256 == "" {
		// A fresh clone: its listener is made now, over vCenter, and its
		// certificate pinned for this connection and every later one.
		m.progress(ctx, "WinRM HTTPS listener", map[string]any{"vm": id.VMID})
		via := remote.Config{Protocol: remote.ProtocolVMTools, Host: ip, User: tcfg.User, Password: tcfg.Password,
			Guest: m.VSphere.GuestOperations(id.VMID), ConnectTimeout: tcfg.ConnectTimeout, Backoff: tcfg.Backoff}
		pin, err := guest.CreateHTTPSListener(ctx, m.Connect, via, ip)
		if err != nil {
			return res, err
		}
		tcfg.CertSHA256 = pin
	}
	res.WinRMCertificateSHA256 = tcfg.CertSHA256
	m.progress(ctx, "connect", map[string]any{"host": ip, "protocol": string(tcfg.Protocol)})
	g, err := guest.Connect(ctx, m.Connect, tcfg, "join")
	if err != nil {
		return res, guest.Stage("connecting to the guest", err)
	}
	defer func() { _ = g.Close() }()
	res.SSHHostKey = g.HostKey()

	buildStep, err := bootstrap.WindowsBuildStep()
	if err != nil {
		return res, err
	}
	out, err := g.Run(ctx, buildStep)
	if err != nil {
		return res, err
	}
	if res.WindowsBuildFull, err = bootstrap.ParseWindowsBuild(out); err != nil {
		return res, &guest.StageError{Stage: "reading the Windows build", Err: err, Evidence: remote.LastLines(out, 5)}
	}
	build := winversion.TrimUBR(res.WindowsBuildFull)
	res.CNI = join.CNI
	join.Labels = map[string]string{LabelWindowsBuild: build}
	join.Taints = spec.Taints

	if err := m.removeStaleNode(ctx, spec.Name, id); err != nil {
		return res, guest.Stage("checking the Node name", err)
	}

	m.progress(ctx, "bootstrap token", nil)
	if err := m.Kube.DeleteStaleBootstrapTokens(ctx, "windows_node "+spec.Name); err != nil {
		return res, guest.Stage("deleting an earlier join's bootstrap token", err)
	}
	token, tokenID, err := m.Kube.CreateBootstrapToken(ctx, BootstrapTokenTTL, "windows_node "+spec.Name)
	if err != nil {
		return res, guest.Stage("creating a bootstrap token", err)
	}
	var (
		tokenOnce sync.Once
		tokenErr  error
	)
	deleteToken := func() error {
		tokenOnce.Do(func() {
			// Also once ctx is cancelled or past the resource's timeout, so
			// that the credential does not linger; but bounded, so that an
			// API server that does not answer cannot hold the run.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenDeleteTimeout)
			defer cancel()
			tokenErr = m.Kube.DeleteBootstrapToken(dctx, tokenID)
		})
		return tokenErr
	}
	// Also after a failure: an unused join credential must not linger.
	defer func() { _ = deleteToken() }()
	join.BootstrapToken = token
	// Refreshed until the Node is Ready, when the kubelet has used it.
	keepCtx, stopKeeping := context.WithCancel(ctx)
	defer stopKeeping()
	tokenLost := make(chan error, 1)
	go func() { tokenLost <- m.keepTokenAlive(keepCtx, tokenID, BootstrapTokenTTL) }()

	steps, err := bootstrap.JoinSteps(join)
	if err != nil {
		return res, guest.Stage("rendering the join steps", err)
	}
	for _, step := range steps {
		m.progress(ctx, "step "+step.Name, nil)
		if _, err := g.Run(ctx, step); err != nil {
			return res, err
		}
	}

	// Done when it works, not when the kubelet says Ready: the node agents
	// of its networking mode (networking.Mode.Agents) must be
	// Running and Ready on it. They are watched from the Node's Ready on,
	// alongside the settings after it, and count only when their
	// containers run since this kubelet registered the Node: a node
	// replaced under the same name finds the pods its predecessor left
	// (the pod garbage collector spares pods whose node is back), Running
	// and Ready as the old kubelet last reported them until the new one
	// runs them (seen: the network probe found no load balancer yet).
	// Joined again on a VM that kept running, the node's own agents run on
	// from before the kubelet's restart (agentsRunOn): any Running and
	// Ready pod of the node counts, and the network probe proves the path.
	var agents []kube.Agent
	if mode, ok := networking.Lookup(join.CNI); ok {
		agents = mode.Agents()
	}
	agentsCtx, stopAgents := context.WithCancel(ctx)
	defer stopAgents()
	agentsDone := make(chan error, 1)

	m.progress(ctx, "wait for Ready", map[string]any{"node": spec.Name})
	readyNode, err := m.Kube.WaitForNodeReady(ctx, spec.Name)
	if err == nil && len(agents) > 0 {
		since := kube.RegisteredByKubeletAt(readyNode)
		if agentsRunOn {
			since = time.Time{}
		}
		go func() {
			_, err := m.Kube.WaitForAgentsReadySince(agentsCtx, spec.Name, spec.Networking, agents, since)
			agentsDone <- err
		}()
	}
	if err != nil {
		stopKeeping()
		if lost := <-tokenLost; lost != nil {
			err = fmt.Errorf("%w; %w", err, lost)
		}
		// The join credential is still valid here: keep it out of the evidence.
		evidence := redact.New(token).String(g.Tail(ctx, bootstrap.KubeletLogFile, 20))
		return res, &guest.StageError{Stage: "waiting for the Node to become Ready", Err: err, Evidence: evidence}
	}
	stopKeeping()
	readyAt := time.Now()
	// The kubelet has its own certificate now: the join credential goes,
	// while the settings are applied.
	tokenDone := make(chan error, 1)
	go func() { tokenDone <- deleteToken() }()
	m.progress(ctx, "node settings", map[string]any{"node": spec.Name, "provider_id": id.ProviderID()})
	node, err := m.Kube.ApplyNodeSettings(ctx, spec.Name, kube.NodeSettings{
		ProviderID: id.ProviderID(), Labels: NodeLabels(spec.Labels, build), Taints: spec.Taints,
		VM: kube.NodeVM(m.VSphere.VCenterID(), id.VMID),
	})
	if terr := <-tokenDone; terr != nil {
		return res, guest.Stage("deleting the bootstrap token", terr)
	}
	if err != nil {
		return res, guest.Stage("setting the Node's providerID, labels and taints", err)
	}
	if node.Spec.PodCIDR == "" {
		// The controller manager allocates it moments after registration;
		// wait a little so the state records it. A cluster that does not
		// allocate pod CIDRs failed the readiness check at plan time.
		wctx, cancel := context.WithTimeout(ctx, podCIDRWait)
		if cidr, err := m.Kube.WaitForNodePodCIDR(wctx, spec.Name); err == nil {
			node.Spec.PodCIDR = cidr
		}
		cancel()
	}
	if len(agents) > 0 {
		m.progress(ctx, "wait for node agents", map[string]any{"node": spec.Name, "namespace": spec.Networking})
		if err := <-agentsDone; err != nil {
			return res, guest.Stage("waiting for the node agents to run", err)
		}
	}
	// The kubelet has had its client certificate since it registered: the
	// bootstrap kubeconfig goes (its token was deleted at Ready).
	after, err := bootstrap.AfterReadySteps()
	if err != nil {
		return res, guest.Stage("rendering the steps after Ready", err)
	}
	for _, step := range after {
		m.progress(ctx, "step "+step.Name, nil)
		if _, err := g.Run(ctx, step); err != nil {
			return res, err
		}
	}
	// Past Ready: a pod on the node must resolve through the cluster DNS
	// and reach a Service and a pod on another node before the node counts
	// (kube.ProbeNetwork). Without node agents nothing routes a pod's
	// traffic, so there is nothing to prove.
	probe := func(node *corev1.Node) error {
		if len(agents) == 0 || spec.SkipNetworkProbe {
			return nil
		}
		m.progress(ctx, "network probe", map[string]any{"node": spec.Name})
		probeStart := time.Now()
		paths, err := m.Kube.ProbeNetwork(ctx, probeRequest(spec, join, node, agents))
		if err != nil {
			return m.probeFailed(ctx, g, err, redact.New(token, spec.AdminPassword, spec.GuestPassword()))
		}
		res.ProbePaths, res.ProbeDuration = paths, time.Since(probeStart)
		return nil
	}
	if err := probe(node); err != nil {
		return res, err
	}
	res.ReadyToDone = time.Since(readyAt)
	if spec.RebootAfterJoin {
		start := time.Now()
		if node, err = m.rebootAfterJoin(ctx, g, spec, id, node, agents); err != nil {
			return res, err
		}
		if err := probe(node); err != nil {
			return res, guest.Stage("after the reboot", err)
		}
		res.RebootRecovery = time.Since(start)
	}
	res.Node = node
	return res, nil
}

// probeRequest is the node's network probe: from a pod scheduled onto it by
// its labels and taints, reaching its own NodePort at its InternalIP, with
// its agents' logs as evidence should it fail.
func probeRequest(spec Spec, join bootstrap.JoinConfig, node *corev1.Node, agents []kube.Agent) kube.ProbeRequest {
	req := kube.ProbeRequest{Node: spec.Name, ClusterDomain: join.ClusterDomain, RuntimeClass: spec.ProbeRuntimeClass,
		NodeIP: join.NodeIP, AgentNamespace: spec.Networking, Agents: agents}
	if node != nil {
		req.NodeLabels, req.NodeTaints = node.Labels, node.Spec.Taints
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				req.NodeIP = a.Address
			}
		}
	}
	return req
}

// probeFailed adds the host's evidence to a failed probe: HNS's networks,
// endpoints and load balancers and the agents' last log lines, read over
// the guest's transport (bootstrap.ProbeEvidenceStep) and redacted like
// every step's output.
func (m *Manager) probeFailed(ctx context.Context, g *guest.Session, err error, red *redact.Redactor) error {
	var pe *kube.ProbeError
	if errors.As(err, &pe) {
		if step, serr := bootstrap.ProbeEvidenceStep(pe.AgentLogs); serr == nil {
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeEvidenceTimeout)
			out, rerr := g.Run(ectx, step)
			cancel()
			if rerr != nil {
				out = "(could not be read: " + rerr.Error() + ")"
			}
			pe.HostEvidence = red.String(out)
		}
	}
	return guest.Stage("proving the node's network path", err)
}

// probeEvidenceTimeout bounds reading the host's evidence of a failed probe.
const probeEvidenceTimeout = time.Minute

// rebootAfterJoin restarts the guest (bootstrap.RebootStep) and waits for
// the new boot to be Ready, on a watch, and for its agents to run again
// since the restart (a pod as the stopped kubelet left it does not count).
func (m *Manager) rebootAfterJoin(ctx context.Context, g *guest.Session, spec Spec, id Identity, before *corev1.Node, agents []kube.Agent) (*corev1.Node, error) {
	m.progress(ctx, "reboot after join", map[string]any{"node": spec.Name})
	if latest, err := m.Kube.FindNode(ctx, spec.Name); err == nil {
		before = latest // its last heartbeat before the restart
	}
	step, err := bootstrap.RebootStep()
	if err != nil {
		return nil, guest.Stage("rendering the reboot step", err)
	}
	since := time.Now()
	out, err := g.Run(ctx, step)
	if err != nil {
		return nil, err
	}
	if !guest.RebootRequested(step, out) {
		return nil, guest.Stage("rebooting the node after its join", fmt.Errorf("the guest did not start its restart: %q", out))
	}
	if err := g.Reboot(ctx, func(ctx context.Context) error { return m.VSphere.WaitForGuestRestart(ctx, id.VMID) }); err != nil {
		return nil, err
	}
	m.progress(ctx, "wait for Ready after the reboot", map[string]any{"node": spec.Name})
	node, err := m.Kube.WaitForNodeReadyAgain(ctx, before)
	if err != nil {
		return nil, guest.Stage("waiting for the Node to be Ready after the reboot", err)
	}
	if len(agents) > 0 {
		m.progress(ctx, "wait for node agents after the reboot", map[string]any{"node": spec.Name})
		if _, err := m.Kube.WaitForAgentsReadySince(ctx, spec.Name, spec.Networking, agents, since); err != nil {
			return nil, guest.Stage("waiting for the node agents to run again after the reboot", err)
		}
	}
	return node, nil
}

// keepTokenAlive refreshes the bootstrap token every third of its ttl until
// ctx ends, as Cluster API's kubeadm bootstrap provider does for a machine
// that has not joined (refreshBootstrapTokenIfNeeded, requeued every
// TokenTTL/3: two chances to refresh before it expires, should one fail).
// It returns nil when stopped, or why the token can no longer be refreshed:
// it is gone (expired before a refresh, or deleted), so the kubelet's TLS
// bootstrap is refused (401 Unauthorized).
func (m *Manager) keepTokenAlive(ctx context.Context, id string, ttl time.Duration) error {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		err := m.Kube.RefreshBootstrapToken(ctx, id, ttl)
		switch {
		case err == nil:
			m.progress(ctx, "bootstrap token refreshed", map[string]any{"ttl": ttl.String()})
		case kube.IsNotFound(err):
			return fmt.Errorf("the bootstrap token expired or was deleted before the kubelet joined with it (the API server then refuses its TLS bootstrap: 401 Unauthorized in its log): apply again, the node is replaced with a fresh token")
		case ctx.Err() != nil:
			return nil
		}
		// Another error (the API server away): the next tick tries again,
		// before the token expires.
	}
}

// podCIDRWait bounds the wait for the Node's pod CIDR after it is Ready.
const podCIDRWait = 10 * time.Second

// cloneRequest is the VM of a node: its Windows computer name is the node
// name in upper case.
// GuestPassword is the node's own Administrator password, derived from
// AdminPassword and the node's name (adminpass.ForNode): the customization
// sets it and every connection to the node uses it, so no two nodes share
// one and nothing is stored.
func (s Spec) GuestPassword() string {
	return adminpass.ForNode(s.AdminPassword, s.Name, s.AdminUser)
}

func cloneRequest(spec Spec) CloneRequest {
	return CloneRequest{
		Template: spec.Template, Name: spec.Name, Folder: spec.Folder,
		ResourcePoolID: spec.ResourcePoolID, DatastoreID: spec.DatastoreID, NetworkID: spec.NetworkID, HostID: spec.HostID,
		NumCPUs: spec.NumCPUs, MemoryMB: spec.MemoryMB, DiskSizeGB: spec.DiskSizeGB, LinkedClone: spec.LinkedClone,
		Annotation:  "Kubernetes Windows node " + spec.Name + " (terraform-provider-windows)",
		ExtraConfig: cloneMarks(spec),
		Sysprep:     vsphere.Sysprep{ComputerName: strings.ToUpper(spec.Name), AdminPassword: spec.GuestPassword(), TimeZone: sysprepIndex(spec.TimeZone), IPv4: spec.IPv4},
	}
}

// sysprepIndex is what the customization can say of a time zone: the vSphere
// API takes sysprep's legacy index (CustomizationGuiUnattended.TimeZone), which
// Microsoft's table has for the zones of its day only; for the others (UTC
// among them) UTC+0 without daylight saving. The join's time-zone step then
// sets the zone by its ID, whatever the customization left.
func sysprepIndex(id string) int32 {
	if i, ok := timezone.Index(id); ok {
		return i
	}
	return timezone.UTCIndex
}

// joinConfig discovers what the join needs from the cluster itself; the
// user's overrides win.
func (m *Manager) joinConfig(ctx context.Context, spec Spec, ip string) (bootstrap.JoinConfig, error) {
	discover := m.Kube.DiscoverNetwork
	if m.Network != nil {
		discover = m.Network
	}
	net, err := discover(ctx)
	if err != nil {
		return bootstrap.JoinConfig{}, err
	}
	ca, err := m.Kube.ClusterCA()
	if err != nil {
		return bootstrap.JoinConfig{}, err
	}
	mode, err := m.networkingMode(ctx, spec)
	if err != nil {
		return bootstrap.JoinConfig{}, err
	}
	cfg := bootstrap.JoinConfig{
		NodeName: spec.Name, NodeIP: ip,
		APIServer: or(spec.APIServer, net.APIEndpoint), ClusterCA: ca,
		ClusterDomain: or(spec.ClusterDomain, net.ClusterDomain),
		CNI:           mode.Name(), TimeZone: spec.TimeZone,
	}
	if dns := or(spec.ClusterDNS, net.DNSServiceIP); dns != "" {
		cfg.ClusterDNS = []string{dns}
	} else {
		return cfg, errors.New("no DNS Service found in kube-system (kube-dns, or labelled k8s-app=kube-dns): deploy the cluster DNS, or set cluster_dns")
	}
	cfg.ServiceCIDR = spec.ServiceCIDR
	if cfg.ServiceCIDR == "" && len(net.ServiceCIDRs) > 0 {
		cfg.ServiceCIDR = net.ServiceCIDRs[0]
	}
	cfg.ClusterCIDR = spec.ClusterCIDR
	if cfg.ClusterCIDR == "" && len(net.ClusterCIDRs) > 0 {
		cfg.ClusterCIDR = net.ClusterCIDRs[0]
	}
	if mode.NeedsClusterCIDR() && cfg.ClusterCIDR == "" {
		return cfg, fmt.Errorf("%s needs the cluster (pod) CIDR and no source names it (kubeadm-config networking.podSubnet, flannel net-conf.json, --cluster-cidr): set cluster_cidr", mode.Name())
	}
	if cfg.CNIConfList, err = mode.CNIConfig(networking.Node{
		ClusterCIDR: cfg.ClusterCIDR, ServiceCIDR: cfg.ServiceCIDR, ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain,
	}); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// networkingMode is the node's CNI mode: that of the networking resource
// it references (read from the cluster: which agents it installed), else
// networking.Default. The deprecated per-node cni must agree.
func (m *Manager) networkingMode(ctx context.Context, spec Spec) (networking.Mode, error) {
	if spec.Networking == "" {
		if mode, ok := networking.Lookup(spec.CNI); ok {
			if refusal := mode.WithoutNetworking(); refusal != nil {
				return nil, errors.New(refusal.Join)
			}
		}
		return networking.Default(), nil
	}
	name, err := m.Kube.ObservedNetworkingMode(ctx, spec.Networking)
	if err != nil {
		return nil, err
	}
	if spec.CNI != "" && spec.CNI != name {
		return nil, fmt.Errorf("the node's cni = %q but its windows_node_networking (namespace %s) runs %q: remove the node's deprecated cni attribute", spec.CNI, spec.Networking, name)
	}
	return networking.Get(name)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
