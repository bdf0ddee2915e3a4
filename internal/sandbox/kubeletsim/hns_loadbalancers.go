package kubeletsim

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// HNS load balancers and endpoints are host state kube-proxy programs
// (Get-HnsPolicyList, Get-HnsEndpoint and hnsdiag show them): winsim keeps
// them (winsim/hns.go).
type (
	HNSLoadBalancer = winsim.HNSLoadBalancer
	HNSEndpoint     = winsim.HNSEndpoint
)

// ReadLoadBalancers returns the HNS load balancers on a host.
func ReadLoadBalancers(files FileSystem) []HNSLoadBalancer { return winsim.HNSLoadBalancers(files) }

// lbSpec is one load balancer winkernel wants for a Service port: its
// frontend, flags and backends by address (HNS endpoints are made or found
// for them when it is programmed).
type lbSpec struct {
	VIP            string    `json:"vip"` // "" for a NodePort: every address of the host
	Protocol       string    `json:"protocol"`
	ExternalPort   int       `json:"externalPort"`
	InternalPort   int       `json:"internalPort"`
	SourceVIP      string    `json:"sourceVIP"`
	DSR            bool      `json:"dsr"`
	LocalRoutedVIP bool      `json:"localRoutedVIP"`
	Backends       []backend `json:"backends"`
}

type backend struct {
	IP    string `json:"ip"`
	Port  int    `json:"port"`
	Local bool   `json:"local"`
	Node  string `json:"node,omitempty"`
}

// proxyRules is winkernel's syncProxyRules (kubernetes/kubernetes
// pkg/proxy/winkernel/proxier.go; read in its kubernetes-retired/kpng copy,
// backends/windows/kernelspace/proxier.go) for the cases the sandbox has,
// keyed by Service port ("ns/name:port"). For every port of every Service
// with a ClusterIP (no headless ones: kube-proxy's watch excludes them), the
// ready endpoints of its EndpointSlices (kubernetes.io/service-name) for the
// port's name and protocol; endpoints on this node are local, the others
// remote. A port without endpoints gets no load balancer ("Endpoint
// information not available for service, not applying any policy"). The
// ClusterIP's load balancer has the Service port as its external port and
// the first endpoint's port as internal one (hcsshim takes one), the source
// VIP on an overlay network, and DSR only with --enable-dsr (proxier.isDSR);
// a NodePort adds one with no VIP on the node port, localRoutedVIP set and
// DSR off (its localTrafficDSR needs externalTrafficPolicy Local). What the
// simulator does not model is refused per Service (refused: the reason,
// logged; nothing programmed): session affinity, external IPs, load
// balancer ingress IPs, the Local traffic policies, preserve-destination,
// and IPv6.
func proxyRules(node string, services map[string]*corev1.Service, slices map[string]*discoveryv1.EndpointSlice, sourceVIP string, dsr bool) (rules map[string][]lbSpec, refused map[string]string) {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range slices {
		name := s.Labels[discoveryv1.LabelServiceName]
		if name == "" || s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		bySvc[s.Namespace+"/"+name] = append(bySvc[s.Namespace+"/"+name], s)
	}
	rules, refused = map[string][]lbSpec{}, map[string]string{}
	for key, svc := range services {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		if why := unmodelledService(svc); why != "" {
			refused[key] = why
			continue
		}
		for _, port := range svc.Spec.Ports {
			var bes []backend
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
						b := backend{IP: a, Port: epPort}
						if e.NodeName != nil {
							b.Node = *e.NodeName
						}
						b.Local = b.Node == node
						bes = append(bes, b)
					}
				}
			}
			if len(bes) == 0 {
				continue
			}
			sort.Slice(bes, func(i, j int) bool { return bes[i].IP < bes[j].IP })
			key := fmt.Sprintf("%s:%s", key, port.Name)
			lb := lbSpec{VIP: svc.Spec.ClusterIP, Protocol: string(port.Protocol), ExternalPort: int(port.Port),
				InternalPort: bes[0].Port, SourceVIP: sourceVIP, DSR: dsr, Backends: bes}
			rules[key] = []lbSpec{lb}
			if port.NodePort != 0 {
				np := lb
				np.VIP, np.ExternalPort, np.DSR, np.LocalRoutedVIP = "", int(port.NodePort), false, true
				rules[key] = append(rules[key], np)
			}
		}
	}
	return rules, refused
}

// unmodelledService says what of a Service the simulated kube-proxy does not
// model ("" when it models all of it).
func unmodelledService(svc *corev1.Service) string {
	switch {
	case svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP:
		return "sessionAffinity ClientIP"
	case len(svc.Spec.ExternalIPs) > 0:
		return "externalIPs"
	case len(svc.Status.LoadBalancer.Ingress) > 0:
		return "load balancer ingress IPs"
	case svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal:
		return "externalTrafficPolicy Local (winkernel's localTrafficDSR)"
	case svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal:
		return "internalTrafficPolicy Local"
	case svc.Annotations["preserve-destination"] == "true":
		return "the preserve-destination annotation"
	}
	for _, f := range svc.Spec.IPFamilies {
		if f == corev1.IPv6Protocol {
			return "IPv6"
		}
	}
	return ""
}

// hnsProxier is the state winkernel's Proxier keeps between syncs: for each
// Service port whose policy it applied, what it applied and the load
// balancers it made. A port whose rules did not change is not touched again
// ("Policy already applied"): what happens to its load balancers in HNS
// meanwhile (deleted, or pointing at an endpoint HNS no longer has) stays
// until the Service or its endpoints change or kube-proxy restarts
// (kubernetes/kubernetes#110849, #135802).
type hnsProxier struct {
	files     FileSystem
	network   string
	sourceVIP string
	nodeIP    string
	log       *logger
	applied   map[string]appliedPolicy
	refused   map[string]string
	// created are the remote endpoints this proxier made (by upper-case
	// ID): winkernel reference-counts and deletes only the endpoints of its
	// own Services' backends, never another agent's (Calico_ep, made by
	// calico-node, which its kube-proxy takes the source VIP of).
	created map[string]bool
}

type appliedPolicy struct {
	rules string   // the lbSpecs applied, as JSON
	lbIDs []string // the HNS load balancers made for them
}

// sync applies the rules of every changed Service port, removes those of
// ports that went away, and deletes the remote endpoints it made that no
// load balancer references any more (winkernel's endpoint reference counts).
func (px *hnsProxier) sync(rules map[string][]lbSpec, refused map[string]string) {
	for key, why := range refused {
		if px.refused[key] != why {
			px.log.Error("proxier.go:1469", fmt.Errorf("Service %s uses %s, which the simulator's kube-proxy does not model", key, why), "Policy creation failed")
		}
	}
	px.refused = refused
	// The source VIP endpoint, on an overlay network (syncProxyRules
	// creates it when HNS has none for the address: newSourceVIP).
	eps := winsim.HNSEndpoints(px.files)
	if px.sourceVIP != "" && findEndpoint(eps, px.sourceVIP) == nil {
		if _, err := winsim.CreateHNSEndpoint(px.files, HNSEndpoint{Name: "sourceVip", Network: px.network, IP: px.sourceVIP,
			MAC: conjureMAC("00-15", px.sourceVIP), ProviderAddress: px.nodeIP}); err != nil {
			px.log.Error("proxier.go:1050", err, "Source Vip endpoint creation failed")
			return
		}
	}
	for key, a := range px.applied {
		if _, ok := rules[key]; !ok {
			px.cleanup(key, a)
		}
	}
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		b, _ := json.Marshal(rules[key])
		if a, ok := px.applied[key]; ok {
			if a.rules == string(b) {
				continue // "Policy already applied"
			}
			px.cleanup(key, a)
		}
		a := appliedPolicy{rules: string(b)}
		for _, spec := range rules[key] {
			id, err := px.program(spec)
			if err != nil {
				px.log.Error("proxier.go:1469", err, "Policy creation failed", "servicePortName", key)
				continue
			}
			if id != "" {
				a.lbIDs = append(a.lbIDs, id)
			}
		}
		px.applied[key] = a
	}
	px.dropUnreferencedRemoteEndpoints()
}

// program makes one load balancer: an HNS endpoint for each backend (a
// remote one created on the overlay network when HNS has none for the
// address; a local one must exist, made by the CNI plugin: "Local endpoint
// not found" otherwise), then the policy list referencing them.
func (px *hnsProxier) program(spec lbSpec) (string, error) {
	eps := winsim.HNSEndpoints(px.files)
	var ids []string
	for _, b := range spec.Backends {
		if ep := findEndpoint(eps, b.IP); ep != nil {
			ids = append(ids, ep.ID)
			continue
		}
		if b.Local {
			px.log.Error("proxier.go:1187", nil, "Local endpoint not found: on network", "ip", b.IP, "hnsNetworkName", px.network)
			continue
		}
		ep, err := winsim.CreateHNSEndpoint(px.files, HNSEndpoint{Network: px.network, IP: b.IP, MAC: conjureMAC("02-11", b.IP), Remote: true})
		if err != nil {
			return "", fmt.Errorf("remote endpoint creation failed: %w", err)
		}
		if px.created == nil {
			px.created = map[string]bool{}
		}
		px.created[strings.ToUpper(ep.ID)] = true
		eps = append(eps, ep)
		ids = append(ids, ep.ID)
	}
	if len(ids) == 0 {
		return "", nil
	}
	lb, err := winsim.CreateHNSLoadBalancer(px.files, HNSLoadBalancer{VIP: spec.VIP, Protocol: spec.Protocol, ExternalPort: spec.ExternalPort,
		InternalPort: spec.InternalPort, SourceVIP: spec.SourceVIP, DSR: spec.DSR, LocalRoutedVIP: spec.LocalRoutedVIP, Endpoints: ids})
	return lb.ID, err
}

func (px *hnsProxier) cleanup(key string, a appliedPolicy) {
	if len(a.lbIDs) > 0 {
		if err := winsim.DeleteHNSLoadBalancers(px.files, a.lbIDs...); err != nil {
			px.log.Error("proxier.go:1320", err, "Policy deletion failed", "servicePortName", key)
		}
	}
	delete(px.applied, key)
}

func (px *hnsProxier) dropUnreferencedRemoteEndpoints() {
	used := map[string]bool{}
	for _, lb := range winsim.HNSLoadBalancers(px.files) {
		for _, id := range lb.Endpoints {
			used[strings.ToUpper(id)] = true
		}
	}
	var drop []string
	for _, ep := range winsim.HNSEndpoints(px.files) {
		if id := strings.ToUpper(ep.ID); ep.Remote && px.created[id] && !used[id] {
			drop = append(drop, ep.ID)
			delete(px.created, id)
		}
	}
	if len(drop) > 0 {
		_ = winsim.DeleteHNSEndpoints(px.files, drop...)
	}
}

func findEndpoint(eps []HNSEndpoint, ip string) *HNSEndpoint {
	for i := range eps {
		if eps[i].IP == ip {
			return &eps[i]
		}
	}
	return nil
}

// conjureMAC is winkernel's conjureMac: a prefix and the IPv4 address's
// bytes.
func conjureMAC(prefix, ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return "02-11-22-33-44-55"
	}
	b := a.As4()
	return fmt.Sprintf("%s-%02x-%02x-%02x-%02x", prefix, b[0], b[1], b[2], b[3])
}
