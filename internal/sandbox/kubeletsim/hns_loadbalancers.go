package kubeletsim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// HNS load balancers are host state kube-proxy programs (Get-HnsPolicyList
// shows them): kept in hnsPolicyFile on the host's disk, rewritten whole on
// every sync as kube-proxy's syncProxyRules converges them.
const hnsPolicyFile = `C:\ProgramData\winsim\hns-policies.json`

// HNSLoadBalancer is one HNS load balancer policy list, as Get-HnsPolicyList
// shows it (hcn.HostComputeLoadBalancer: FrontendVIPs, PortMappings, the
// HostComputeEndpoints behind it, SourceVIP, and the DSR flag).
type HNSLoadBalancer struct {
	ID string `json:"ID"`
	// VIP is the frontend address: the ClusterIP, or "" for a NodePort
	// (every node address: winkernel passes no VIP, isVipExternalIP false).
	VIP          string        `json:"VIP"`
	Protocol     string        `json:"Protocol"` // TCP, UDP
	ExternalPort int           `json:"ExternalPort"`
	InternalPort int           `json:"InternalPort"`
	SourceVIP    string        `json:"SourceVIP"`
	DSR          bool          `json:"DSR"`
	Endpoints    []HNSEndpoint `json:"Endpoints"`
	// Service is kube-proxy's own bookkeeping (serviceMap key), not HNS's.
	Service string `json:"Service"`
}

// HNSEndpoint is an endpoint of a load balancer: a local one (a pod on this
// host) or a remote one (winkernel creates it on the overlay network with the
// remote node's provider address).
type HNSEndpoint struct {
	IP     string `json:"IPAddress"`
	Port   int    `json:"Port"`
	Remote bool   `json:"IsRemoteEndpoint"`
	Node   string `json:"Node,omitempty"`
}

var hnsPolicyMu sync.Mutex

// ReadLoadBalancers returns the HNS load balancers on a host's disk.
func ReadLoadBalancers(files FileSystem) []HNSLoadBalancer {
	hnsPolicyMu.Lock()
	defer hnsPolicyMu.Unlock()
	var lbs []HNSLoadBalancer
	if b, err := files.ReadFile(hnsPolicyFile); err == nil {
		_ = json.Unmarshal(b, &lbs)
	}
	return lbs
}

func writeLoadBalancers(files FileSystem, lbs []HNSLoadBalancer) error {
	hnsPolicyMu.Lock()
	defer hnsPolicyMu.Unlock()
	b, err := json.MarshalIndent(lbs, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteFile(hnsPolicyFile, b)
}

// proxyRules is winkernel's syncProxyRules (pkg/proxy/winkernel/proxier.go)
// for the cases the sandbox has: for every port of every Service with a
// ClusterIP (no headless ones: kube-proxy's watch excludes them), the ready
// endpoints of its EndpointSlices (kubernetes.io/service-name) for the
// port's name and protocol; endpoints on this node are local, the others
// remote. A port without endpoints gets no load balancer ("Endpoint
// information not available for service, not applying any policy"). Each
// load balancer has the ClusterIP as frontend with the Service port as its
// external port and the endpoint port as internal one, the source VIP on an
// overlay network, and DSR only with --enable-dsr (proxier.isDSR); a
// NodePort adds one with no VIP on the node port.
func proxyRules(node string, services map[string]*corev1.Service, slices map[string]*discoveryv1.EndpointSlice, sourceVIP string, dsr bool) []HNSLoadBalancer {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range slices {
		name := s.Labels[discoveryv1.LabelServiceName]
		if name == "" || s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		bySvc[s.Namespace+"/"+name] = append(bySvc[s.Namespace+"/"+name], s)
	}
	var lbs []HNSLoadBalancer
	for key, svc := range services {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		for _, port := range svc.Spec.Ports {
			var eps []HNSEndpoint
			seen := map[string]bool{}
			for _, s := range bySvc[key] {
				epPort := 0
				for _, p := range s.Ports {
					if p.Name != nil && *p.Name == port.Name && p.Protocol != nil && *p.Protocol == port.Protocol && p.Port != nil {
						epPort = int(*p.Port)
					}
				}
				if epPort == 0 {
					continue
				}
				for _, e := range s.Endpoints {
					// Ready (serving and not terminating): the endpoints
					// cache's IsReady.
					if e.Conditions.Ready != nil && !*e.Conditions.Ready {
						continue
					}
					for _, a := range e.Addresses {
						id := fmt.Sprintf("%s:%d", a, epPort)
						if seen[id] {
							continue
						}
						seen[id] = true
						ep := HNSEndpoint{IP: a, Port: epPort}
						if e.NodeName != nil {
							ep.Node = *e.NodeName
						}
						ep.Remote = ep.Node != node
						eps = append(eps, ep)
					}
				}
			}
			if len(eps) == 0 {
				continue
			}
			sort.Slice(eps, func(i, j int) bool { return eps[i].IP < eps[j].IP })
			name := fmt.Sprintf("%s:%s", key, port.Name)
			lb := HNSLoadBalancer{
				VIP: svc.Spec.ClusterIP, Protocol: string(port.Protocol), ExternalPort: int(port.Port),
				InternalPort: eps[0].Port, SourceVIP: sourceVIP, DSR: dsr, Endpoints: eps, Service: name,
			}
			lb.ID = lbID(lb)
			lbs = append(lbs, lb)
			if port.NodePort != 0 {
				np := lb
				np.VIP, np.ExternalPort = "", int(port.NodePort)
				np.ID = lbID(np)
				lbs = append(lbs, np)
			}
		}
	}
	sort.Slice(lbs, func(i, j int) bool { return lbs[i].ID < lbs[j].ID })
	return lbs
}

// lbID is a stable GUID-shaped identifier of a load balancer's frontend.
func lbID(lb HNSLoadBalancer) string {
	h := fnv64(lb.VIP + "/" + lb.Protocol + "/" + fmt.Sprint(lb.ExternalPort))
	s := fmt.Sprintf("%016x%016x", h, ^h)
	return strings.ToUpper(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
