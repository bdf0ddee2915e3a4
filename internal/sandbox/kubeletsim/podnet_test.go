package kubeletsim_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestPodNetwork follows a Windows pod's packets: kube-proxy (on its
// ServiceAccount) programs HNS load balancers from the real EndpointSlices;
// an agnhost pod's name lookup is a real DNS query that the kube-dns load
// balancer sends over the overlay to the real CoreDNS on the Linux node, and
// its connection to the ClusterIP reaches CoreDNS's real TCP socket. With
// kube-dns selecting nothing the load balancer goes and the pod fails naming
// DNS; restored, it passes again. Without the HNS network, no pod has a network.
func TestPodNetwork(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	const name = "win-podnet"
	n := kubeletsimtest.NewNode(t, name, kubeletsimtest.Options{Checker: s.KubeletChecker(), Overlay: s.Overlay})
	nd := &node{Node: n, name: name, tr: acctest.ConnectNode(t, n)}
	if err := nd.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, nd.kubeletLog())
	}
	waitForNode(t, cs, name, "given a pod CIDR", func(x *corev1.Node) bool { return x.Spec.PodCIDR != "" })
	node, err := cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The source VIP: the network's .2 (sig-windows-tools' kube-proxy
	// start script asks HNS for the endpoint named "<network>_ep" there).
	sourceVIP := strings.TrimSuffix(strings.Split(kubeletsim.FirstHost(node.Spec.PodCIDR), "/")[0], ".1") + ".2"
	// What flanneld leaves (agents_flannel.go): the overlay network.
	if err := kubeletsim.PutHNSNetwork(n.Host, "flannel.4096", node.Spec.PodCIDR, 4096); err != nil {
		t.Fatal(err)
	}
	proxyKC := serviceAccountKubeconfig(t, s, n.Host, "kube-proxy-podnet", nil, "system:node-proxier")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- n.Host.Run(ctx, &winsim.Process{Path: bootstrap.KubeProxyExe, Args: []string{"--kubeconfig=" + proxyKC,
			"--hostname-override=" + name, "--proxy-mode=kernelspace", "--network-name=flannel.4096",
			"--source-vip=" + sourceVIP, "--cluster-cidr=" + controlplane.ClusterCIDR}, Stderr: &stderr})
	}()
	dnsLB := func() (kubeletsim.HNSLoadBalancer, bool) {
		for _, lb := range kubeletsim.ReadLoadBalancers(n.Host) {
			if lb.VIP == controlplane.DNSServiceIP && lb.Protocol == "UDP" {
				return lb, true
			}
		}
		return kubeletsim.HNSLoadBalancer{}, false
	}
	waitFor(t, "kube-proxy programmed kube-dns", func() bool { _, ok := dnsLB(); return ok }, done, &stderr)
	if lb, _ := dnsLB(); len(lb.Endpoints) != 1 || lb.SourceVIP != sourceVIP || lb.DSR {
		t.Errorf("kube-dns load balancer: %+v", lb)
	} else if ep := endpointByID(n.Host, lb.Endpoints[0]); ep == nil || ep.IP != linuxnode.DNSPodIP || !ep.Remote {
		t.Errorf("kube-dns load balancer %+v sends to %+v, want the remote endpoint of %s", lb, ep, linuxnode.DNSPodIP)
	}

	probe := func(t *testing.T, podName string) *corev1.Pod {
		t.Helper()
		img := probeImage
		c := func(cname string, args ...string) corev1.Container {
			return corev1.Container{Name: cname, Image: img, Args: append([]string{"connect"}, args...),
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName: name, RestartPolicy: corev1.RestartPolicyNever,
			Tolerations:    []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			InitContainers: []corev1.Container{c("dns-and-clusterip", "kube-dns.kube-system:53", "--timeout=5s")},
			Containers:     []corev1.Container{c("pod-on-linux-node", linuxnode.DNSPodIP+":53", "--timeout=5s")},
		}}
		if _, err := cs.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return waitForProbePod(t, cs, podName, func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		})
	}
	t.Run("passes", func(t *testing.T) {
		p := probe(t, "probe-1")
		if p.Status.Phase != corev1.PodSucceeded {
			t.Fatalf("probe pod %s: %+v %+v", p.Status.Phase, p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
		}
	})
	t.Run("DNS endpoints gone", func(t *testing.T) {
		setDNSSelector(t, cs, "nothing")
		waitFor(t, "kube-proxy removed kube-dns", func() bool { _, ok := dnsLB(); return !ok }, done, &stderr)
		p := probe(t, "probe-2")
		msg := ""
		if len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Terminated != nil {
			msg = p.Status.InitContainerStatuses[0].State.Terminated.Message
		}
		if p.Status.Phase != corev1.PodFailed || !strings.HasPrefix(msg, "DNS: ") || !strings.Contains(msg, "no HNS load balancer for UDP/53") {
			t.Errorf("probe pod %s, message %q", p.Status.Phase, msg)
		}
		setDNSSelector(t, cs, "kube-dns")
		waitFor(t, "kube-proxy programmed kube-dns again", func() bool { _, ok := dnsLB(); return ok }, done, &stderr)
		if p := probe(t, "probe-3"); p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("restored: probe pod %s: %+v", p.Status.Phase, p.Status.InitContainerStatuses)
		}
	})
	lastInitMessage := func(p *corev1.Pod) string {
		if len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Terminated != nil {
			return p.Status.InitContainerStatuses[0].State.Terminated.Message
		}
		return ""
	}
	t.Run("stale load balancer", func(t *testing.T) {
		lbID, gone, err := kubeletsim.MakeLoadBalancerStale(n.Host, controlplane.DNSServiceIP, 53, "TCP")
		if err != nil {
			t.Fatal(err)
		}
		// Names still resolve (UDP); the connection to the ClusterIP over
		// TCP is dropped at the stale load balancer.
		p := probe(t, "probe-stale")
		if msg := lastInitMessage(p); p.Status.Phase != corev1.PodFailed || !strings.HasPrefix(msg, "TIMEOUT") ||
			!strings.Contains(msg, "HNS load balancer "+lbID+" sends to endpoint "+gone+", which HNS does not have") {
			t.Errorf("probe pod %s, message %q", p.Status.Phase, msg)
		}
		// hnsdiag shows it: a Direct IP ID no endpoint has.
		out := nd.run(t, "hnsdiag list all")
		if !strings.Contains(out.Stdout, lbID) || !strings.Contains(out.Stdout, gone) {
			t.Errorf("hnsdiag list all:\n%s", out.Stdout)
		}
		// kube-dns changes: kube-proxy programs it again.
		setDNSSelector(t, cs, "nothing")
		waitFor(t, "kube-proxy removed kube-dns", func() bool { _, ok := dnsLB(); return !ok }, done, &stderr)
		setDNSSelector(t, cs, "kube-dns")
		waitFor(t, "kube-proxy programmed kube-dns again", func() bool { _, ok := dnsLB(); return ok }, done, &stderr)
		if p := probe(t, "probe-unstale"); p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("reprogrammed: probe pod %s: %+v", p.Status.Phase, p.Status.InitContainerStatuses)
		}
	})
	t.Run("image digest not served", func(t *testing.T) {
		bad := strings.Split(probeImage, "@")[0] + "@sha256:" + strings.Repeat("0", 64)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe-digest", Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName: name, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: bad, Args: []string{"connect", linuxnode.DNSPodIP + ":53"}}},
		}}
		if _, err := cs.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitForProbePod(t, cs, "probe-digest", func(p *corev1.Pod) bool {
			return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
				p.Status.ContainerStatuses[0].State.Waiting.Reason == "ErrImagePull"
		})
		if msg := p.Status.ContainerStatuses[0].State.Waiting.Message; p.Status.Phase != corev1.PodPending ||
			!strings.Contains(msg, `failed to resolve reference "`+bad+`"`) || !strings.Contains(msg, "not found") {
			t.Errorf("pod %s: %q", p.Status.Phase, msg)
		}
	})
	t.Run("kube-proxy stopped", func(t *testing.T) {
		if err := kubeletsim.StopKubeProxy(n.Host); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			if code != 1 || !strings.Contains(stderr.String(), "kube-proxy is stopped on this host") {
				t.Errorf("kube-proxy exited with %d:\n%s", code, stderr.String())
			}
		case <-time.After(time.Minute):
			t.Fatal("kube-proxy did not exit")
		}
		if lbs := kubeletsim.ReadLoadBalancers(n.Host); len(lbs) != 0 {
			t.Errorf("load balancers left: %+v", lbs)
		}
		p := probe(t, "probe-noproxy")
		if msg := lastInitMessage(p); p.Status.Phase != corev1.PodFailed || !strings.HasPrefix(msg, "DNS: ") {
			t.Errorf("probe pod %s, message %q", p.Status.Phase, msg)
		}
		// Started again while stopped, it exits at once.
		var again syncBuffer
		code := n.Host.Run(ctx, &winsim.Process{Path: bootstrap.KubeProxyExe, Args: []string{"--kubeconfig=" + proxyKC,
			"--hostname-override=" + name, "--network-name=flannel.4096", "--source-vip=" + sourceVIP}, Stderr: &again})
		if code != 1 || !strings.Contains(again.String(), "kube-proxy is stopped on this host") {
			t.Errorf("a restart while stopped exited %d:\n%s", code, again.String())
		}
		n.Host.SetFaults(winsim.Faults{})
	})
	t.Run("HNS network gone", func(t *testing.T) {
		if err := n.Host.WriteFile(kubeletsim.HNSStateFile, []byte("[]")); err != nil {
			t.Fatal(err)
		}
		_, err := kubeletsim.PodDial(t.Context(), n.Host, s.Overlay, "udp", netip.MustParseAddrPort(controlplane.DNSServiceIP+":53"))
		if err == nil || !strings.Contains(err.Error(), "no HNS network") {
			t.Errorf("dial without an HNS network: %v", err)
		}
	})
}

// probeImage is the image the provider's probe runs, pinned by digest
// (internal/kube ProbeImage; the simulated world keeps its own copy).
const probeImage = "registry.k8s.io/e2e-test-images/agnhost:2.53@sha256:99c6b4bb4a1e1df3f0b3752168c89358794d02258ebebc26bf21c29399011a85"

func endpointByID(h *winsim.Host, id string) *winsim.HNSEndpoint {
	for _, e := range winsim.HNSEndpoints(h) {
		if strings.EqualFold(e.ID, id) {
			return &e
		}
	}
	return nil
}

func setDNSSelector(t *testing.T, cs kubernetes.Interface, app string) {
	t.Helper()
	if _, err := cs.CoreV1().Services("kube-system").Patch(context.Background(), "kube-dns", types.MergePatchType,
		[]byte(`{"spec":{"selector":{"k8s-app":"`+app+`"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cs.CoreV1().Services("kube-system").Patch(context.Background(), "kube-dns", types.MergePatchType,
			[]byte(`{"spec":{"selector":{"k8s-app":"kube-dns"}}}`), metav1.PatchOptions{})
	})
}

func waitForProbePod(t *testing.T, cs kubernetes.Interface, podName string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + podName})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch of pod %s ended", podName)
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && cond(p) {
				return p
			}
		case <-ctx.Done():
			t.Fatalf("pod %s: %v", podName, ctx.Err())
		}
	}
}

// TestServiceCIDREqual holds the dataplane's copy of the service range
// equal to the control plane's --service-cluster-ip-range.
func TestServiceCIDREqual(t *testing.T) {
	if kubeletsim.ServiceCIDR.String() != controlplane.ServiceCIDR {
		t.Errorf("kubeletsim's service CIDR %s, the control plane's %s", kubeletsim.ServiceCIDR, controlplane.ServiceCIDR)
	}
}
