package winnode

// Joining a node: the guest bootstrapped with the join steps, the kubelet
// registered through a short-lived bootstrap token kept alive until it is
// used, the Node and its agents awaited, the network proven (probe.go) and,
// when asked, the reboot after the join.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/redact"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

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
		join.RemoteLoginsOff = true // nothing reaches the node over WinRM
	}
	if spec.HTTPSListener && tcfg.CertSHA256 == "" {
		// A fresh clone: its listener is made now, over vCenter, and its
		// certificate pinned for this connection and every later one.
		m.progress(ctx, "WinRM HTTPS listener", map[string]any{"vm": id.VMID})
		via := remote.Config{Protocol: remote.ProtocolVMTools, Host: ip, User: tcfg.User, Password: tcfg.Password,
			Guest: m.VSphere.GuestOperations(id.VMID), ConnectTimeout: tcfg.ConnectTimeout, Backoff: tcfg.Backoff}
		admit := spec.HTTPSListenerAdmit
		if len(admit) == 0 {
			a, err := managementAddress(ip)
			if err != nil {
				return res, guest.Stage("finding the address the provider reaches the guest from, for its WinRM HTTPS firewall rule (set transport.management_cidrs)", err)
			}
			admit = []string{a}
		}
		pin, err := guest.CreateHTTPSListener(ctx, m.Connect, via, ip, admit)
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
	res.NoProxy = join.Proxy.NoProxy
	if spec.Domain != nil {
		join.ADDomain = spec.Domain.Domain
	}
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
	// (proveNetwork).
	probe := func(node *corev1.Node) error {
		if spec.SkipNetworkProbe {
			return nil
		}
		paths, took, err := m.proveNetwork(ctx, g, spec, join, node, agents, redact.New(token, spec.AdminPassword, spec.GuestPassword()))
		if err != nil {
			return err
		}
		res.ProbePaths, res.ProbeDuration = paths, took
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
	cfg.Proxy = proxyFor(spec, cfg)
	if cfg.KubeletAdmit, err = kubeletAdmit(net, cfg); err != nil {
		return cfg, err
	}
	if cfg.CNIConfList, err = mode.CNIConfig(networking.Node{
		ClusterCIDR: cfg.ClusterCIDR, ServiceCIDR: cfg.ServiceCIDR, ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain,
	}); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// proxyFor is the node's proxy with NO_PROXY completed: the user's list
// and whatever it misses of the cluster's Service and pod networks, the API
// server and the node's subnet (its static IPv4 network, else its address),
// so the kubelet and containerd never send cluster traffic to the proxy.
func proxyFor(spec Spec, cfg bootstrap.JoinConfig) bootstrap.Proxy {
	p := spec.Proxy
	if !p.IsSet() {
		return bootstrap.Proxy{}
	}
	p.NoProxy, _ = bootstrap.CompleteNoProxy(p.NoProxy, NoProxyFacts(spec, cfg.ServiceCIDR, cfg.ClusterCIDR, cfg.APIServer, cfg.NodeIP))
	return p
}

// NoProxyFacts are the addresses a node's NO_PROXY must hold, from what is
// known of it: the plan's check (with what discovery knows at plan) and
// the join use the same.
func NoProxyFacts(spec Spec, serviceCIDR, clusterCIDR, apiServer, nodeIP string) bootstrap.NoProxyFacts {
	subnet := nodeIP
	if spec.IPv4 != nil && spec.IPv4.PrefixLength > 0 {
		if _, n, err := net.ParseCIDR(fmt.Sprintf("%s/%d", spec.IPv4.Address, spec.IPv4.PrefixLength)); err == nil {
			subnet = n.String()
		}
	}
	return bootstrap.NoProxyFacts{ServiceCIDR: serviceCIDR, ClusterCIDR: clusterCIDR, APIServer: apiServer, NodeSubnet: subnet}
}

// networkingMode is the node's CNI mode: that of the networking resource
// it references (read from the cluster: which agents it installed), else
// networking.Default.
func (m *Manager) networkingMode(ctx context.Context, spec Spec) (networking.Mode, error) {
	if spec.Networking == "" {
		return networking.Default(), nil
	}
	name, err := m.Kube.ObservedNetworkingMode(ctx, spec.Networking)
	if err != nil {
		return nil, err
	}
	return networking.Get(name)
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// kubeletAdmit is whom the kubelet's firewall rule admits: the API servers'
// advertised addresses (the endpoints of default/kubernetes), or the API
// endpoint's own address when those are not readable and it is one, and the
// pod network (metrics-server and other in-cluster scrapers).
func kubeletAdmit(n *kube.ClusterNetwork, cfg bootstrap.JoinConfig) ([]string, error) {
	admit := append([]string(nil), n.APIServerAddresses...)
	if len(admit) == 0 {
		if u, err := url.Parse(cfg.APIServer); err == nil && net.ParseIP(u.Hostname()) != nil {
			admit = append(admit, u.Hostname())
		}
	}
	if len(admit) == 0 {
		return nil, fmt.Errorf("the API servers' addresses, which the kubelet's firewall rule admits, are unknown: the EndpointSlices "+
			"of Service default/kubernetes are not readable (apply examples/rbac/terraform-provider-windows.yaml: its Role in the "+
			"default namespace lists them) and the API endpoint %s is not an IP address", cfg.APIServer)
	}
	pods := n.ClusterCIDRs
	if cfg.ClusterCIDR != "" {
		pods = []string{cfg.ClusterCIDR}
	}
	return append(admit, pods...), nil
}

// managementAddress is the address this process connects to a guest from,
// as its host's routing picks it (a UDP socket's connect sends nothing and
// binds the source address the route to the guest gives: ip(7), udp(7)):
// the management network's address of the provider, which the guest sees
// unless a NAT stands between them.
func managementAddress(guestIP string) (string, error) {
	c, err := net.Dial("udp", net.JoinHostPort(guestIP, "5986"))
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}
