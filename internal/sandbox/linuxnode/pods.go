package linuxnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/agnhost"
)

// Overlay carries a connection from one of this node's pods to another
// node's pod address (the sandbox's: the Windows nodes' dataplanes).
type Overlay func(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error)

// agnhostRepository is the one image this node's kubelet runs in a user's
// pod: Kubernetes' e2e test image agnhost (test/images/agnhost), and of it
// only the connect subcommand, in pods with restartPolicy Never, as the
// Windows nodes' runtime runs it (kubeletsim pods_agnhost.go). Any other pod
// bound to this node stays Pending, as on a node whose runtime cannot pull
// its image: the sandbox does not model it.
const agnhostRepository = "registry.k8s.io/e2e-test-images/agnhost"

// firstUserPodOrdinal is the first pod address this node hands to a user's
// pod (below it: the gateway or VXLAN tunnel at .0/.1 and CoreDNS at .2).
const firstUserPodOrdinal = 10

func isAgnhostPod(pod *corev1.Pod) bool {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.HostNetwork || len(pod.Spec.InitContainers) > 0 || len(pod.Spec.Containers) == 0 {
		return false
	}
	for _, c := range pod.Spec.Containers {
		if !strings.HasPrefix(c.Image, agnhostRepository+":") && !strings.HasPrefix(c.Image, agnhostRepository+"@") {
			return false
		}
	}
	return true
}

// podRunner is this node's kubelet for users' agnhost pods: it watches the
// pods bound to the node (spec.nodeName, as the kubelet's API source does),
// runs each agnhost pod's containers once in the node's pod network and
// reports it Succeeded or Failed, and deletes a pod it ran once it is marked
// for deletion (grace 0, UID precondition, as the status manager does).
type podRunner struct {
	n     *Node
	mu    sync.Mutex
	ips   map[types.UID]netip.Addr
	next  int
	queue workqueue.TypedRateLimitingInterface[string]
	store cache.Store
}

func (n *Node) runUserPods(ctx context.Context) {
	r := &podRunner{n: n, ips: map[types.UID]netip.Addr{}, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	defer r.queue.ShutDown()
	lw := cache.NewListWatchFromClient(n.client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, fields.OneTermEqualSelector("spec.nodeName", NodeName))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	r.store = inf.GetStore()
	enqueue := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && isAgnhostPod(p) {
			if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
				r.queue.Add(key)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	go inf.RunWithContext(ctx)
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		if err := r.sync(ctx, key); err != nil && ctx.Err() == nil {
			n.logf("linuxnode: pod %s: %v", key, err)
			r.queue.AddRateLimited(key)
		} else {
			r.queue.Forget(key)
		}
		r.queue.Done(key)
	}
}

func (r *podRunner) sync(ctx context.Context, key string) error {
	obj, exists, err := r.store.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		zero := int64(0)
		err := r.n.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil
		}
		if err == nil {
			r.mu.Lock()
			delete(r.ips, pod.UID)
			r.mu.Unlock()
		}
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	ip := r.allocate(pod.UID)
	if !ip.IsValid() {
		return fmt.Errorf("no free address in %s", r.n.PodPrefix())
	}
	now := metav1.Now()
	st := corev1.PodStatus{
		Phase: corev1.PodSucceeded, PodIP: ip.String(), PodIPs: []corev1.PodIP{{IP: ip.String()}},
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
		},
	}
	failed := false
	for _, c := range pod.Spec.Containers {
		if failed {
			st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}})
			continue
		}
		var out bytes.Buffer
		code := agnhost.Connect(ctx, podNet{n: r.n, namespace: pod.Namespace}, append(append([]string{}, c.Command...), c.Args...), &out, "agnhost")
		term := &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Completed", StartedAt: now, FinishedAt: metav1.Now()}
		if code != 0 {
			failed = true
			term.Reason = "Error"
			if c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
				term.Message = strings.TrimSpace(out.String())
			}
			st.Phase = corev1.PodFailed
		}
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Terminated: term}})
	}
	updated := pod.DeepCopy()
	updated.Status = st
	_, err = r.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// allocate gives the pod an address of the node's pod prefix (flannel's
// host-local range, or Calico's affine block), from firstUserPodOrdinal up.
func (r *podRunner) allocate(uid types.UID) netip.Addr {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ip, ok := r.ips[uid]; ok {
		return ip
	}
	prefix := r.n.PodPrefix()
	size := 1 << (32 - prefix.Bits())
	used := map[netip.Addr]bool{}
	for _, ip := range r.ips {
		used[ip] = true
	}
	for i := range size - firstUserPodOrdinal - 1 {
		ip := nthAddr(prefix, firstUserPodOrdinal+(r.next+i)%(size-firstUserPodOrdinal-1))
		if !used[ip] {
			r.ips[uid] = ip
			r.next++
			return ip
		}
	}
	return netip.Addr{}
}

func nthAddr(p netip.Prefix, n int) netip.Addr {
	b := p.Masked().Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// podNet is the network of one of this node's pods, where agnhost's
// connect runs: names resolve through the cluster DNS (the kube-dns
// Service's ClusterIP, which the kubelet's clusterDNS is, with the pod's
// search list and ndots:5), packets go through podDial, and a packet no
// route takes (EHOSTUNREACH) is one the real node drops.
type podNet struct {
	n         *Node
	namespace string
}

func (p podNet) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	return p.n.lookup(ctx, p.namespace, host)
}

func (p podNet) Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	return p.n.podDial(ctx, network, dst)
}

func (podNet) Dropped(err error) bool { return errors.Is(err, syscall.EHOSTUNREACH) }

// lookup resolves a name as the pod's resolver does (ndots:5, the search
// list the kubelet writes), every query a real one over the pod's network
// to the cluster DNS's ClusterIP.
func (n *Node) lookup(ctx context.Context, namespace, host string) (netip.Addr, error) {
	svc, err := n.client.CoreV1().Services(metav1.NamespaceSystem).Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		return netip.Addr{}, fmt.Errorf("lookup %s: the cluster DNS Service: %w", host, err)
	}
	dnsIP, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("lookup %s: kube-dns has no ClusterIP", host)
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return n.podDial(ctx, network, netip.AddrPortFrom(dnsIP, 53))
	}}
	return agnhost.Resolve(ctx, r, dnsIP.String(), []string{namespace + ".svc." + n.domain, "svc." + n.domain, n.domain}, host)
}

// podDial is a packet from one of this node's pods: kube-proxy's iptables
// rules first (a Service's ClusterIP and port DNATed to one of its ready
// endpoints from the real EndpointSlices; a Service port without one is
// REJECTed, pkg/proxy/iptables/proxier.go "has no endpoints"), then the
// node's routes: its own pods, or another node's pod address through the
// VXLAN route the network plugin's Linux agent keeps (routed).
func (n *Node) podDial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	target, err := n.serviceDNAT(ctx, network, dst)
	if err != nil {
		return nil, err
	}
	if n.HasPodAddress(target.Addr()) {
		return n.Dial(ctx, network, target)
	}
	if err := n.routed(ctx, target.Addr()); err != nil {
		return nil, fmt.Errorf("%s %s (endpoint %s): %w", network, dst, target, err)
	}
	if n.overlay == nil {
		return nil, fmt.Errorf("%s %s (endpoint %s): the sandbox gave the node no overlay: %w", network, dst, target, syscall.EHOSTUNREACH)
	}
	c, err := n.overlay(ctx, network, target)
	if err != nil {
		return nil, fmt.Errorf("%s %s (endpoint %s): %w", network, dst, target, err)
	}
	return c, nil
}

func (n *Node) serviceDNAT(ctx context.Context, network string, dst netip.AddrPort) (netip.AddrPort, error) {
	proto := corev1.Protocol(strings.ToUpper(network))
	svcs, err := n.client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return dst, fmt.Errorf("kube-proxy: listing Services: %w", err)
	}
	for _, svc := range svcs.Items {
		if svc.Spec.ClusterIP != dst.Addr().String() {
			continue
		}
		for _, port := range svc.Spec.Ports {
			if port.Port != int32(dst.Port()) || port.Protocol != proto {
				continue
			}
			slices, err := n.client.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
			if err != nil {
				return dst, fmt.Errorf("kube-proxy: listing EndpointSlices: %w", err)
			}
			var eps []netip.AddrPort
			for _, s := range slices.Items {
				if s.AddressType != discoveryv1.AddressTypeIPv4 {
					continue
				}
				var epPort int32
				for _, p := range s.Ports {
					if p.Port != nil && p.Protocol != nil && *p.Protocol == proto && (p.Name == nil && port.Name == "" || p.Name != nil && *p.Name == port.Name) {
						epPort = *p.Port
					}
				}
				for _, e := range s.Endpoints {
					if epPort == 0 || e.Conditions.Ready != nil && !*e.Conditions.Ready {
						continue
					}
					for _, a := range e.Addresses {
						if ip, err := netip.ParseAddr(a); err == nil {
							eps = append(eps, netip.AddrPortFrom(ip, uint16(epPort)))
						}
					}
				}
			}
			if len(eps) == 0 {
				return dst, fmt.Errorf("kube-proxy: Service %s/%s port %s/%d has no endpoints (REJECT): %w", svc.Namespace, svc.Name, proto, dst.Port(), syscall.ECONNREFUSED)
			}
			n.mu.Lock()
			n.rr++
			i := n.rr
			n.mu.Unlock()
			return eps[i%len(eps)], nil
		}
	}
	return dst, nil
}

// routed: the node has a route to another node's pod address. Calico:
// Felix's VXLAN route to each remote node's confirmed affine block whose
// node has a VXLAN tunnel address and MAC (felix/calc/vxlan_resolver.go).
// flannel: flanneld's route to each Node's pod CIDR that carries its
// VXLAN lease annotations (pkg/subnet/kube/kube.go; backend/vxlan).
// Antrea: a route to each Node's pod CIDR with a transport address.
func (n *Node) routed(ctx context.Context, addr netip.Addr) error {
	nodes, err := n.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	if n.cni == CNICalico {
		affs, err := n.dyn.Resource(CalicoGVR("blockaffinities")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, a := range affs.Items {
			node, _, _ := unstructured.NestedString(a.Object, "spec", "node")
			cidr, _, _ := unstructured.NestedString(a.Object, "spec", "cidr")
			state, _, _ := unstructured.NestedString(a.Object, "spec", "state")
			p, err := netip.ParsePrefix(cidr)
			if err != nil || state != "confirmed" || node == NodeName || !p.Contains(addr) {
				continue
			}
			if nd := byName[node]; nd != nil && nd.Annotations[CalicoVXLANTunnelAddrAnnotation] != "" && nd.Annotations[CalicoVXLANTunnelMACAnnotation] != "" {
				return nil
			}
			return fmt.Errorf("no route: Felix has no VXLAN route to block %s: node %s has no VXLAN tunnel: %w", cidr, node, syscall.EHOSTUNREACH)
		}
		return fmt.Errorf("no route: no confirmed Calico block affinity holds %s: %w", addr, syscall.EHOSTUNREACH)
	}
	for _, nd := range byName {
		p, err := netip.ParsePrefix(nd.Spec.PodCIDR)
		if err != nil || nd.Name == NodeName || !p.Contains(addr) {
			continue
		}
		if n.cni == CNIAntrea {
			// Antrea's node route controller (pkg/agent/controller/noderoute):
			// a route to every other Node's pod CIDR through the tunnel to
			// its transport address (encap), or to that address directly
			// (noEncap): its InternalIP.
			for _, a := range nd.Status.Addresses {
				if a.Type == corev1.NodeInternalIP && a.Address != "" {
					return nil
				}
			}
			return fmt.Errorf("no route: Antrea has no transport address for node %s (no InternalIP): %w", nd.Name, syscall.EHOSTUNREACH)
		}
		if nd.Annotations["flannel.alpha.coreos.com/backend-data"] != "" && nd.Annotations["flannel.alpha.coreos.com/public-ip"] != "" {
			return nil
		}
		return fmt.Errorf("no route: node %s has no flannel lease annotations (flanneld has not run there): %w", nd.Name, syscall.EHOSTUNREACH)
	}
	return fmt.Errorf("no route: no Node's pod CIDR holds %s: %w", addr, syscall.EHOSTUNREACH)
}
