package agnhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ndots is the resolv.conf option the kubelet writes for a ClusterFirst pod
// (kubernetes/kubernetes pkg/kubelet/network/dns/dns.go, ndotsDNSOption).
const ndots = 5

// Resolve resolves host as agnhost, a Go binary, does in a pod: Go's
// resolver reading the resolv.conf the kubelet wrote (nameserver server,
// the pod's search list, ndots:5): a name ending in a dot as it is, one
// with fewer than ndots dots under each search domain first, then as it is.
// r carries the queries over the pod's network to server. Errors name the
// pod's server, not the one of the machine the sandbox runs on (which Go's
// own errors would).
func Resolve(ctx context.Context, r *net.Resolver, server string, search []string, host string) (netip.Addr, error) {
	names := []string{host}
	if !strings.HasSuffix(host, ".") {
		names = nil
		if strings.Count(host, ".") < ndots {
			for _, s := range search {
				names = append(names, host+"."+s+".")
			}
		}
		names = append(names, host+".")
	}
	var lastErr error
	for _, n := range names {
		ips, err := r.LookupNetIP(ctx, "ip4", n)
		if err == nil && len(ips) > 0 {
			return ips[0].Unmap(), nil
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			lastErr = fmt.Errorf("lookup %s on %s:53: no such host", host, server)
			continue
		}
		if errors.As(err, &dnsErr) {
			return netip.Addr{}, fmt.Errorf("lookup %s on %s:53: %s", strings.TrimSuffix(n, "."), server, dnsErr.Err)
		}
		if err == nil {
			err = fmt.Errorf("lookup %s on %s:53: no addresses", host, server)
		}
		return netip.Addr{}, err
	}
	return netip.Addr{}, lastErr
}
