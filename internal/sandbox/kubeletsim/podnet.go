package kubeletsim

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Overlay carries a pod's connection to another node's pod address: the
// flannel VXLAN overlay and that node's dataplane. The sandbox gives the
// Linux node's (internal/sandbox/linuxnode Node.Dial).
type Overlay func(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error)

// podNet is what a packet from a pod on this host goes through: the HNS
// network (gone after a reboot until flanneld makes it again, and then no
// pod has a network), the load balancers kube-proxy programmed (a ClusterIP
// or this node's NodePort is rewritten to one of their endpoints: winkernel's
// ILB policies), then the route to the endpoint: the overlay for another
// node's pod CIDR, this host's own pods delivered on it (of which only IIS
// containers serve: pods_iis.go).
type podNet struct {
	files   FileSystem
	overlay Overlay
	nodeIP  string
	podCIDR netip.Prefix
	host    string        // the host's disk directory (Config.Host.Disk): its containers
	next    atomic.Uint32 // round robin over a load balancer's endpoints
}

// dial connects from the pod to dst; an error says which hop failed, with
// the host state it judged by.
func (pn *podNet) dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	if nets := readHNS(pn.files); len(nets) == 0 {
		return nil, fmt.Errorf("dial %s %s: the pod has no network: no HNS network on the host (Get-HnsNetwork is empty)", network, dst)
	}
	proto := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(network, "4"), "6"))
	target := dst
	lbs := ReadLoadBalancers(pn.files)
	for _, lb := range lbs {
		vip := lb.VIP
		if vip == "" {
			vip = pn.nodeIP // a NodePort: every node address
		}
		if lb.Protocol != proto || lb.ExternalPort != int(dst.Port()) || vip != dst.Addr().String() || len(lb.Endpoints) == 0 {
			continue
		}
		// The policy names its endpoints by ID; one HNS no longer has
		// drops the packet (a stale load balancer).
		id := lb.Endpoints[int(pn.next.Add(1))%len(lb.Endpoints)]
		ep := findEndpointByID(winsim.HNSEndpoints(pn.files), id)
		if ep == nil {
			return nil, fmt.Errorf("dial %s %s: HNS load balancer %s sends to endpoint %s, which HNS does not have: the packet is dropped", network, dst, lb.ID, id)
		}
		addr, err := netip.ParseAddr(ep.IP)
		if err != nil {
			return nil, fmt.Errorf("dial %s %s: load balancer %s has endpoint %q: %w", network, dst, lb.ID, ep.IP, err)
		}
		target = netip.AddrPortFrom(addr, uint16(lb.InternalPort))
		break
	}
	// AntreaProxy's groups on the OVS bridge (a host where antrea-agent made
	// one): a ClusterIP or, with proxyAll, the node's NodePort to one of the
	// Service's endpoints.
	ovs := winsim.ReadOVS(pn.files)
	antrea := len(ovs.Bridges) > 0
	if antrea && target == dst {
		for _, g := range ovs.ServiceGroups {
			vip := g.VIP
			if vip == "" {
				vip = pn.nodeIP
			}
			if g.Protocol != proto || g.Port != int(dst.Port()) || vip != dst.Addr().String() || len(g.Endpoints) == 0 {
				continue
			}
			ep, err := netip.ParseAddrPort(g.Endpoints[int(pn.next.Add(1))%len(g.Endpoints)])
			if err != nil {
				return nil, fmt.Errorf("dial %s %s: AntreaProxy group has endpoint %q: %w", network, dst, g.Endpoints, err)
			}
			target = ep
			break
		}
	}
	switch {
	case target == dst && isServiceVIP(dst.Addr()) && antrea:
		return nil, fmt.Errorf("dial %s %s: no AntreaProxy group for %s/%d on the OVS bridge (%d groups): the Service has no ready endpoints, or antrea-agent has not installed it", network, dst, proto, dst.Port(), len(ovs.ServiceGroups))
	case target == dst && isServiceVIP(dst.Addr()):
		return nil, fmt.Errorf("dial %s %s: no HNS load balancer for %s/%d on the host (%d load balancers): the Service has no ready endpoints, or kube-proxy has not programmed it", network, dst, proto, dst.Port(), len(lbs))
	case pn.podCIDR.IsValid() && pn.podCIDR.Contains(target.Addr()):
		c, err := pn.deliver(ctx, network, target)
		if err != nil {
			return nil, fmt.Errorf("dial %s %s (endpoint %s, a pod on this node): %w", network, dst, target, err)
		}
		return c, nil
	case antrea && !antreaRouted(ovs.Routes, target.Addr()):
		return nil, fmt.Errorf("dial %s %s (endpoint %s): no route: antrea-agent installed no route to the pod CIDR of %s's Node (routes %v)", network, dst, target, target.Addr(), ovs.Routes)
	case pn.overlay == nil:
		return nil, fmt.Errorf("dial %s %s (endpoint %s): no route: the host has no overlay to other nodes", network, dst, target)
	}
	if err := calicoRoute(pn.files, target.Addr()); err != nil {
		return nil, fmt.Errorf("dial %s %s (endpoint %s): %w", network, dst, target, err)
	}
	c, err := pn.overlay(ctx, network, target)
	if err != nil {
		return nil, fmt.Errorf("dial %s %s (endpoint %s): %w", network, dst, target, err)
	}
	return c, nil
}

func findEndpointByID(eps []HNSEndpoint, id string) *HNSEndpoint {
	for i := range eps {
		if strings.EqualFold(eps[i].ID, id) {
			return &eps[i]
		}
	}
	return nil
}

// isServiceVIP: the sandbox's service CIDR (10.96.0.0/12), held equal to
// internal/sandbox/controlplane's by a test.
func isServiceVIP(a netip.Addr) bool { return serviceCIDR.Contains(a) }

var serviceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// resolver is the pod's DNS client with dnsPolicy ClusterFirst: the
// kubelet's clusterDNS as its one server (pkg/kubelet/network/dns
// GetPodDNS), every query a real one over the pod's network.
func (pn *podNet) resolver(clusterDNS string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		dst, err := netip.ParseAddrPort(net.JoinHostPort(clusterDNS, "53"))
		if err != nil {
			return nil, fmt.Errorf("clusterDNS %q: %w", clusterDNS, err)
		}
		return pn.dial(ctx, network, dst)
	}}
}

// antreaRouted: one of antrea-agent's routes (another Node's pod CIDR)
// covers addr.
func antreaRouted(routes map[string]string, addr netip.Addr) bool {
	for cidr := range routes {
		if p, err := netip.ParsePrefix(cidr); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// calicoRoute: on Calico's network a packet for another node's block leaves
// through VXLAN only where Felix programmed a RemoteSubnetRoute for that
// block (felix/dataplane/windows/vxlan_mgr.go); flannel's network routes by
// flanneld's subnet leases, which the sandbox's overlay stands for.
func calicoRoute(files FileSystem, dst netip.Addr) error {
	n, ok := hnsNetworkByName(files, CalicoNetworkName)
	if !ok {
		return nil
	}
	for _, p := range n.Policies {
		if pfx, err := netip.ParsePrefix(p.DestinationPrefix); err == nil && p.Type == "RemoteSubnetRoute" && pfx.Contains(dst) {
			return nil
		}
	}
	return fmt.Errorf("no route: HNS network %s has no RemoteSubnetRoute policy for %s (%d policies): Felix has not programmed the remote node's block", CalicoNetworkName, dst, len(n.Policies))
}
