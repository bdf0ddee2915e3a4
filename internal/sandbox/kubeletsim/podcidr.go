package kubeletsim

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
)

// watchNode follows the Node for the pod CIDR the controller manager assigns.
func (n *nodeAgent) watchNode(ctx context.Context) {
	lw := cache.NewListWatchFromClient(n.client.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", n.name))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{})
	handle := func(obj any) {
		if node, ok := obj.(*corev1.Node); ok {
			n.notePodCIDR(node.Spec.PodCIDR)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	})
	inf.RunWithContext(ctx)
}

func (n *nodeAgent) notePodCIDR(cidr string) {
	if cidr == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.podCIDR != "" {
		return
	}
	p, err := newIPAM(cidr)
	if err != nil {
		n.k.log.Error("kubelet_network.go:47", err, "Invalid pod CIDR", "podCIDR", cidr)
		return
	}
	n.podCIDR, n.ipam = cidr, p
	pn := &podNet{files: n.k.cfg.Files, overlay: n.k.cfg.Overlay, nodeIP: n.nodeIP(), host: n.k.cfg.Host.Disk}
	pn.podCIDR, _ = netip.ParsePrefix(cidr)
	n.podNetwork = pn
	close(n.podCIDRSet)
	n.k.log.Info("kuberuntime_manager.go:1745", "Updating runtime config through cri with podcidr", "CIDR", cidr)
}

// ipam hands out pod addresses from the node's pod CIDR (host-local style:
// .1 is the gateway, pods get .2 upwards).
type ipam struct {
	mu    sync.Mutex
	net   *net.IPNet
	inUse map[string]string // ip -> pod UID
}

func newIPAM(cidr string) (*ipam, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, err
	}
	return &ipam{net: n, inUse: map[string]string{}}, nil
}

func (p *ipam) allocate(owner string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ip, o := range p.inUse {
		if o == owner {
			return ip, nil
		}
	}
	base := p.net.IP.To4()
	if base == nil {
		return "", fmt.Errorf("only IPv4 pod CIDRs are simulated, got %s", p.net)
	}
	ones, bits := p.net.Mask.Size()
	size := 1 << (bits - ones)
	for i := 2; i < size-1; i++ {
		ip := make(net.IP, 4)
		copy(ip, base)
		v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
		v += uint32(i)
		ip[0], ip[1], ip[2], ip[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
		s := ip.String()
		if _, used := p.inUse[s]; !used {
			p.inUse[s] = owner
			return s, nil
		}
	}
	return "", fmt.Errorf("no IP addresses available in range set: %s", p.net)
}

func (p *ipam) release(owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ip, o := range p.inUse {
		if o == owner {
			delete(p.inUse, ip)
		}
	}
}
