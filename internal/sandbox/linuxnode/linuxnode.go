// Package linuxnode is the sandbox's Linux control-plane node: a Node
// registered as kubeadm registers its first node (labels, the control-plane
// taint, its pod CIDR, its lease renewed as the kubelet renews it), the Linux
// side of the cluster's network plugin (flannel: the node annotations
// flanneld's kube subnet manager writes; Calico: its CRDs and configuration
// in the Kubernetes datastore, calico.go), and the cluster DNS as its pod: real CoreDNS (tools/coredns) with
// its kubernetes plugin against the real API server, and a real Pod the
// kube-dns Service selects, so the real EndpointSlice controller puts the
// pod's address behind kube-dns. Selecting nothing with kube-dns (or deleting
// the pod) takes the DNS endpoints away as it does in a cluster.
//
// The node's dataplane is Dial: a packet the simulated overlay delivers to one
// of this node's pod addresses ends on the real socket of the program behind
// it (a DNS query to the CoreDNS pod's 53/UDP is a real UDP query to CoreDNS).
// Users' agnhost pods bound to the node run their connect subcommand through
// the node's kube-proxy rules and routes, and the Overlay for another node's
// pod address (pods.go).
package linuxnode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
)

// Names and addresses of the node and its DNS pod.
const (
	// NodeName is kubeadm's default: the control-plane host's name.
	NodeName = "sandbox-control-plane"
	// PodCIDR is the node's pod CIDR: the first /24 of the cluster CIDR,
	// which the controller manager's range allocator gives the first node
	// (and marks occupied when the node arrives with it).
	PodCIDR = "10.244.0.0/24"
	// DNSPodName is the CoreDNS pod; DNSPodIP its address in PodCIDR.
	DNSPodName = "coredns-sandbox"
	DNSPodIP   = "10.244.0.2"
	// CoreDNSImage is what the pod says it runs (the binary is built from
	// the same CoreDNS version, tools/coredns).
	CoreDNSImage = "registry.k8s.io/coredns/coredns:v1.15.0"
	// FlannelVNI is flannel's default VXLAN network identifier
	// (pkg/backend/vxlan: defaultVNI 1 on Linux; kube-flannel.yml's
	// net-conf.json for Windows clusters sets 4096, which both sides share).
	FlannelVNI = 4096

	kubeNodeLeaseNS = "kube-node-lease"
	leaseSeconds    = 40
)

// Options configure the node.
type Options struct {
	// Client is an admin client (the node registers itself and acts as its
	// own kubelet for its one pod's status).
	Client kubernetes.Interface
	// Dynamic is an admin client for the network plugin's own resources
	// (Calico's CRDs and objects); needed only with CNI CNICalico.
	Dynamic dynamic.Interface
	// CNI is the cluster's network plugin on the Linux side: CNIFlannel
	// ("" too) or CNICalico.
	CNI string
	// Kubeconfig is the admin kubeconfig file CoreDNS's kubernetes plugin
	// reads (its kubeconfig option), with its context.
	Kubeconfig, Context string
	// CoreDNS is the CoreDNS executable (tools/coredns/build.sh).
	CoreDNS string
	// Dir holds the Corefile and CoreDNS's log.
	Dir string
	// Domain is the cluster domain (kubelet clusterDomain).
	Domain string
	// Version is the kubelet version the node reports.
	Version string
	// Overlay carries its pods' connections to other nodes' pod addresses
	// (the Windows nodes'); nil: none (pods.go).
	Overlay Overlay
	Logf    func(string, ...any)
}

// Node is the running Linux node.
type Node struct {
	Name string
	// DNSAddr is the real address CoreDNS serves on (UDP and TCP).
	DNSAddr netip.AddrPort
	// LogFile is CoreDNS's output.
	LogFile string

	client kubernetes.Interface
	cmd    *exec.Cmd
	cancel context.CancelFunc
	wg     sync.WaitGroup
	exited chan struct{}
	logf   func(string, ...any)

	version  string
	cni      string
	podReady atomic.Bool // the DNS pod was created and reported Ready once

	dyn     dynamic.Interface
	domain  string
	overlay Overlay
	mu      sync.Mutex
	rr      int // kube-proxy's pick among a Service's endpoints
}

// Start registers the node, starts CoreDNS and creates its pod. It returns
// once CoreDNS serves (it prints its banner after every plugin started; the
// kubernetes plugin starts once its caches synced) and the pod is Ready.
func Start(ctx context.Context, opts Options) (_ *Node, err error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	n := &Node{Name: NodeName, client: opts.Client, logf: logf, exited: make(chan struct{}), version: opts.Version, cni: opts.CNI,
		dyn: opts.Dynamic, domain: opts.Domain, overlay: opts.Overlay}
	switch opts.CNI {
	case "", CNIFlannel:
		n.cni = CNIFlannel
	case CNICalico:
		if opts.Dynamic == nil {
			return nil, errors.New("linuxnode: Calico needs Options.Dynamic")
		}
	default:
		return nil, fmt.Errorf("linuxnode: the network plugin %q is not modelled (%s or %s)", opts.CNI, CNIFlannel, CNICalico)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	if err := n.register(ctx, opts.Version); err != nil {
		return nil, fmt.Errorf("linuxnode: registering %s: %w", NodeName, err)
	}
	n.wg.Go(func() { n.leaseLoop(runCtx) })
	if n.cni == CNICalico {
		if err := n.installCalico(ctx, opts.Dynamic); err != nil {
			return nil, fmt.Errorf("linuxnode: Calico: %w", err)
		}
	}
	if err := n.startCoreDNS(ctx, opts); err != nil {
		return nil, fmt.Errorf("linuxnode: CoreDNS: %w", err)
	}
	if err := n.createDNSPod(ctx); err != nil {
		return nil, fmt.Errorf("linuxnode: the CoreDNS pod: %w", err)
	}
	n.podReady.Store(true)
	n.wg.Go(func() { n.runUserPods(runCtx) })
	logf("linuxnode: %s Ready, CoreDNS serving %s as pod %s", NodeName, n.DNSAddr, DNSPodIP)
	return n, nil
}

// Dial is the node's dataplane: a connection to one of its pods' addresses
// (ip:port over network "udp" or "tcp") reaches the real socket of the
// program behind it. Anything else is unreachable, as a pod address nothing
// listens on is.
func (n *Node) Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	if dst.Addr() != netip.MustParseAddr(DNSPodIP) || dst.Port() != 53 || (network != "udp" && network != "tcp") {
		return nil, fmt.Errorf("linuxnode: %s %s: connection refused (nothing listens there on %s)", network, dst, NodeName)
	}
	select {
	case <-n.exited:
		return nil, fmt.Errorf("linuxnode: %s %s: connection refused (CoreDNS has exited)", network, dst)
	default:
	}
	var d net.Dialer
	return d.DialContext(ctx, network, n.DNSAddr.String())
}

// HasPodAddress reports whether addr is in the node's pod CIDR (the overlay
// route to this node's VTEP).
func (n *Node) HasPodAddress(addr netip.Addr) bool {
	return n.PodPrefix().Contains(addr)
}

// PodPrefix is where the node's pods get their addresses: its pod CIDR
// (flannel's subnet lease), or with Calico its affine IPAM block, which
// Calico routes to it (Calico IPAM ignores spec.podCIDR).
func (n *Node) PodPrefix() netip.Prefix {
	if n.cni == CNICalico {
		return netip.MustParsePrefix(CalicoBlock)
	}
	return netip.MustParsePrefix(PodCIDR)
}

func (n *Node) register(ctx context.Context, version string) error {
	backendData, _ := json.Marshal(map[string]any{"VNI": FlannelVNI, "VtepMAC": "02:42:ac:11:00:02"})
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: NodeName,
			Labels: map[string]string{
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": NodeName,
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
				"node-role.kubernetes.io/control-plane": "", "node.kubernetes.io/exclude-from-external-load-balancers": "",
			},
			Annotations: n.pluginAnnotations(backendData),
		},
		Spec: corev1.NodeSpec{
			PodCIDR: PodCIDR, PodCIDRs: []string{PodCIDR},
			// kubeadm init's control-plane taint (cmd/kubeadm/app/constants ControlPlaneTaint).
			Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if _, err := n.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Controllers write the new Node too (its taints, its lifecycle): a
	// conflict is retried on a fresh read, as the kubelet's status update is.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return n.reportReady(ctx, version) })
}

// pluginAnnotations are what the network plugin's agent on the node writes
// on its Node: flanneld's kube subnet manager (pkg/subnet/kube/kube.go
// AcquireLease), or calico-node's startup in the Kubernetes datastore (its
// address and its VXLAN tunnel: libcalico-go/lib/backend/k8s/resources/node.go).
func (n *Node) pluginAnnotations(flannelBackendData []byte) map[string]string {
	if n.cni == CNICalico {
		return map[string]string{
			CalicoIPv4AddressAnnotation:     "127.0.0.1/8",
			CalicoVXLANTunnelAddrAnnotation: CalicoVXLANTunnelAddr,
			CalicoVXLANTunnelMACAnnotation:  CalicoVTEPMAC,
		}
	}
	return map[string]string{
		"flannel.alpha.coreos.com/backend-data":        string(flannelBackendData),
		"flannel.alpha.coreos.com/backend-type":        "vxlan",
		"flannel.alpha.coreos.com/kube-subnet-manager": "true",
		"flannel.alpha.coreos.com/public-ip":           "127.0.0.1",
	}
}

// reportReady is the kubelet's node status: Ready, its address and info.
func (n *Node) reportReady(ctx context.Context, version string) error {
	node, err := n.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	node.Status.Conditions = []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
		// Each plugin's agent clears NetworkUnavailable with its own reason
		// (flannel "FlannelIsUp"; calico-node "CalicoIsUp",
		// node/pkg/lifecycle/utils/utils.go).
		cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, map[string]string{CNIFlannel: "FlannelIsUp", CNICalico: "CalicoIsUp"}[n.cni]),
		cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
	}
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: NodeName},
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	node.Status.Capacity, node.Status.Allocatable = res, res
	node.Status.NodeInfo = corev1.NodeSystemInfo{
		OperatingSystem: "linux", Architecture: "amd64", OSImage: "sandbox Linux",
		KubeletVersion: version, ContainerRuntimeVersion: "containerd://2.1.4",
	}
	_, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// leaseLoop renews kube-node-lease/<node> every quarter of its duration, as
// the kubelet's node lease controller does (pkg/kubelet/nodelease).
//
// Each round it also syncs its statuses as the kubelet does every
// nodeStatusUpdateFrequency (10 s) and its status manager on a change: a
// Node or DNS pod that the node lifecycle controller marked not Ready (the
// lease went stale while the API server was down) is reported Ready again,
// so cluster DNS comes back after an outage as on a kubeadm cluster.
func (n *Node) leaseLoop(ctx context.Context) {
	interval := leaseSeconds * time.Second / 4
	for {
		// Each round is bounded as the kubelet's heartbeat client is
		// (cmd/kubelet/app/server.go: its Timeout is the lesser of
		// nodeStatusUpdateFrequency, 10 s, and the lease duration), so a
		// request lost in an API server outage cannot stop the renewals.
		rctx, cancel := context.WithTimeout(ctx, interval)
		if err := n.renewLease(rctx); err != nil && ctx.Err() == nil {
			n.logf("linuxnode: renewing the node lease: %v", err)
		} else if err == nil {
			if err := n.syncStatus(rctx); err != nil && ctx.Err() == nil {
				n.logf("linuxnode: syncing the node's status: %v", err)
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// syncStatus reports the Node, and the DNS pod once it exists, Ready again
// when something else (the node lifecycle controller) changed that.
func (n *Node) syncStatus(ctx context.Context) error {
	node, err := n.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !conditionTrue(node.Status.Conditions) {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return n.reportReady(ctx, n.version) }); err != nil {
			return err
		}
	}
	if !n.podReady.Load() {
		return nil
	}
	pod, err := n.client.CoreV1().Pods(metav1.NamespaceSystem).Get(ctx, DNSPodName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return n.createDNSPod(ctx) // the pod exists: this reports its status again
}

func conditionTrue(conds []corev1.NodeCondition) bool {
	for _, c := range conds {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (n *Node) renewLease(ctx context.Context) error {
	leases := n.client.CoordinationV1().Leases(kubeNodeLeaseNS)
	now := metav1.NewMicroTime(time.Now())
	holder, dur := NodeName, int32(leaseSeconds)
	lease, err := leases.Get(ctx, NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: NodeName, Namespace: kubeNodeLeaseNS},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &holder, &dur, &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// corefile is kubeadm's default Corefile (cmd/kubeadm/app/phases/addons/dns
// manifests.go CoreDNSConfigMap) with the plugins this build has, bound to a
// loopback port, and the API server reached through a kubeconfig (the
// kubernetes plugin's kubeconfig option) instead of the in-cluster one.
func corefile(port, healthPort, readyPort int, domain, kubeconfig, kubeContext string) string {
	return fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    errors
    log
    health 127.0.0.1:%d {
       lameduck 1s
    }
    ready 127.0.0.1:%d
    kubernetes %s in-addr.arpa ip6.arpa {
       kubeconfig %s %s
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    cache 30
}
`, port, healthPort, readyPort, domain, kubeconfig, kubeContext)
}

func (n *Node) startCoreDNS(ctx context.Context, opts Options) error {
	ports, err := localport.Reserve(3, true)
	if err != nil {
		return err
	}
	n.DNSAddr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(ports[0]))
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return err
	}
	cf := filepath.Join(opts.Dir, "Corefile")
	if err := os.WriteFile(cf, []byte(corefile(ports[0], ports[1], ports[2], opts.Domain, opts.Kubeconfig, opts.Context)), 0o600); err != nil {
		return err
	}
	n.LogFile = filepath.Join(opts.Dir, "coredns.log")
	logFile, err := os.Create(n.LogFile)
	if err != nil {
		return err
	}
	n.cmd = exec.Command(opts.CoreDNS, "-conf", cf)
	n.cmd.Dir = opts.Dir
	n.cmd.Stderr = logFile
	out, err := n.cmd.StdoutPipe()
	if err != nil {
		_ = logFile.Close()
		return err
	}
	if err := n.cmd.Start(); err != nil {
		_ = logFile.Close()
		return err
	}
	// CoreDNS prints its banner ("CoreDNS-<version>") once every server
	// and plugin started (coremain/run.go showVersion after Start).
	banner := make(chan struct{})
	n.wg.Go(func() {
		defer func() { _ = logFile.Close() }()
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logFile, line+"\n")
			if strings.HasPrefix(line, "CoreDNS-") {
				once.Do(func() { close(banner) })
			}
		}
	})
	n.wg.Go(func() {
		_ = n.cmd.Wait()
		close(n.exited)
	})
	select {
	case <-banner:
		return nil
	case <-n.exited:
		tail, _ := os.ReadFile(n.LogFile)
		return fmt.Errorf("exited before serving: %s", lastLines(string(tail), 10))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// createDNSPod creates the CoreDNS pod on this node as kubeadm's coredns
// Deployment would place it, and reports it Running and Ready with its pod
// address, as the node's kubelet would.
func (n *Node) createDNSPod(ctx context.Context) error {
	pods := n.client.CoreV1().Pods(metav1.NamespaceSystem)
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: DNSPodName, Namespace: metav1.NamespaceSystem, Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: corev1.PodSpec{
			NodeName: NodeName, AutomountServiceAccountToken: &no, PriorityClassName: "system-cluster-critical",
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
				{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{
				Name: "coredns", Image: CoreDNSImage, Args: []string{"-conf", "/etc/coredns/Corefile"},
				Ports: []corev1.ContainerPort{
					{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
					{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9153, Protocol: corev1.ProtocolTCP},
				},
			}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = pods.Get(ctx, DNSPodName, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	now := metav1.Now()
	created.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: DNSPodIP, PodIPs: []corev1.PodIP{{IP: DNSPodIP}},
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "coredns", Image: CoreDNSImage, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, DNSPodName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = created.Status
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// Stop stops CoreDNS and the lease renewal. The Node object stays (the
// control plane is stopped with it).
func (n *Node) Stop() error {
	n.cancel()
	var err error
	if n.cmd != nil && n.cmd.Process != nil {
		select {
		case <-n.exited:
		default:
			_ = n.cmd.Process.Signal(os.Interrupt)
			select {
			case <-n.exited:
			case <-time.After(5 * time.Second):
				_ = n.cmd.Process.Kill()
			}
		}
	}
	n.wg.Wait()
	return err
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, "\n")
}
