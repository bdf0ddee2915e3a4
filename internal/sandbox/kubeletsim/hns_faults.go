package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// The network faults tests inject into a host's HNS and kube-proxy, as
// Windows users meet them (kubernetes/kubernetes#110674, #110849, #135802:
// load balancers gone, or kept pointing at endpoints HNS no longer has,
// while the node stays Ready).

var errKubeProxyStopped = errors.New("kube-proxy is stopped on this host (the simulator's KubeProxyStopped fault)")

var (
	proxiesMu sync.Mutex
	proxies   = map[*winsim.Host]*proxyRun{}
)

type proxyRun struct{ cancel context.CancelFunc }

// runningKubeProxy registers a starting kube-proxy of h, so that
// StopKubeProxy can end it; stopped reports whether the fault is set.
func runningKubeProxy(ctx context.Context, h *winsim.Host) (context.Context, func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	run := &proxyRun{cancel: cancel}
	proxiesMu.Lock()
	proxies[h] = run
	proxiesMu.Unlock()
	context.AfterFunc(ctx, func() {
		proxiesMu.Lock()
		defer proxiesMu.Unlock()
		// Only its own entry: a kube-proxy started since keeps its.
		if proxies[h] == run {
			delete(proxies, h)
		}
	})
	return ctx, func() bool { return h.Faults().KubeProxyStopped }
}

// StopKubeProxy stops kube-proxy on h (the KubeProxyStopped fault: the
// running one exits, every restart exits at once) and removes its load
// balancers from HNS, as when HNS dropped them under a kube-proxy that is
// not there to program them again. ClearFaults (or SetFaults without it)
// lets the next restart run.
func StopKubeProxy(h *winsim.Host) error {
	f := h.Faults()
	f.KubeProxyStopped = true
	h.SetFaults(f)
	proxiesMu.Lock()
	run := proxies[h]
	proxiesMu.Unlock()
	if run != nil {
		run.cancel()
	}
	return winsim.DeleteHNSLoadBalancers(h)
}

// MakeLoadBalancerStale points h's load balancer for vip:port/protocol at an
// endpoint ID HNS does not have, as a load balancer left behind when its
// endpoint was deleted and made again under another ID. kube-proxy does not
// notice: the Service did not change ("Policy already applied"). It returns
// the load balancer's ID and the missing endpoint's.
func MakeLoadBalancerStale(h *winsim.Host, vip string, port int, protocol string) (lbID, gone string, err error) {
	for _, lb := range winsim.HNSLoadBalancers(h) {
		if lb.VIP == vip && lb.ExternalPort == port && strings.EqualFold(lb.Protocol, protocol) {
			gone = strings.ToLower(fmt.Sprintf("%08x-dead-4bad-8bad-%012x", len(lb.ID), port))
			return lb.ID, gone, winsim.ReplaceHNSLoadBalancerReferences(h, lb.ID, []string{gone})
		}
	}
	return "", "", fmt.Errorf("no HNS load balancer for %s:%d/%s on %s", vip, port, protocol, h.ComputerName())
}
