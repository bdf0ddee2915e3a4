package kubeletsim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestProxyRules holds the simulated kube-proxy to winkernel's rules: one
// load balancer per Service port with ready endpoints (none without), the
// endpoint port inside, local and remote endpoints told apart by node, the
// source VIP and DSR as configured, and a NodePort's own load balancer.
func TestProxyRules(t *testing.T) {
	svc := func(ns, name, ip string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Type: typ, Ports: ports}}
	}
	port := func(name string, proto corev1.Protocol, p, nodePort int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Protocol: proto, Port: p, NodePort: nodePort}
	}
	type ep struct {
		ip, node string
		ready    bool
	}
	slice := func(ns, svcName string, ports map[string]int32, eps ...ep) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svcName + "-x",
			Labels: map[string]string{discoveryv1.LabelServiceName: svcName}}, AddressType: discoveryv1.AddressTypeIPv4}
		for name, p := range ports {
			proto := corev1.ProtocolTCP
			if name == "dns" {
				proto = corev1.ProtocolUDP
			}
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: new(name), Protocol: &proto, Port: new(p)})
		}
		for _, e := range eps {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.ip}, NodeName: new(e.node),
				Conditions: discoveryv1.EndpointConditions{Ready: new(e.ready)}})
		}
		return s
	}
	services := map[string]*corev1.Service{
		"kube-system/kube-dns": svc("kube-system", "kube-dns", "10.96.0.10", corev1.ServiceTypeClusterIP,
			port("dns", corev1.ProtocolUDP, 53, 0), port("dns-tcp", corev1.ProtocolTCP, 53, 0)),
		"default/web":     svc("default", "web", "10.96.5.5", corev1.ServiceTypeNodePort, port("http", corev1.ProtocolTCP, 80, 30080)),
		"default/nothing": svc("default", "nothing", "10.96.7.7", corev1.ServiceTypeClusterIP, port("http", corev1.ProtocolTCP, 80, 0)),
	}
	slices := map[string]*discoveryv1.EndpointSlice{
		"kube-system/kube-dns-x": slice("kube-system", "kube-dns", map[string]int32{"dns": 53, "dns-tcp": 53},
			ep{"10.244.0.2", "sandbox-control-plane", true}),
		"default/web-x": slice("default", "web", map[string]int32{"http": 8080},
			ep{"10.244.3.4", "win-0", true}, ep{"10.244.0.9", "sandbox-control-plane", true}, ep{"10.244.3.5", "win-0", false}),
		"default/nothing-x": slice("default", "nothing", map[string]int32{"http": 8080}, ep{"10.244.3.6", "win-0", false}),
	}
	rules, refused := proxyRules("win-0", services, slices, "10.244.3.2", false)
	if len(refused) != 0 {
		t.Errorf("refused %v", refused)
	}
	byFrontend := map[string]lbSpec{}
	for _, specs := range rules {
		for _, lb := range specs {
			byFrontend[lb.VIP+"/"+lb.Protocol+"/"+strconv.Itoa(lb.ExternalPort)] = lb
		}
	}
	if len(byFrontend) != 4 || len(rules) != 3 {
		t.Fatalf("%d load balancers for %d ports, want 4 for 3 (kube-dns UDP and TCP, web's ClusterIP and NodePort): %+v", len(byFrontend), len(rules), rules)
	}
	dns := byFrontend["10.96.0.10/UDP/53"]
	if len(dns.Backends) != 1 || dns.Backends[0] != (backend{IP: "10.244.0.2", Port: 53, Node: "sandbox-control-plane"}) ||
		dns.SourceVIP != "10.244.3.2" || dns.DSR || dns.LocalRoutedVIP {
		t.Errorf("kube-dns UDP: %+v", dns)
	}
	web := byFrontend["10.96.5.5/TCP/80"]
	if web.InternalPort != 8080 || len(web.Backends) != 2 || !web.Backends[1].Local || web.Backends[0].Local {
		t.Errorf("web: %+v (want the two ready endpoints, 10.244.3.4 local)", web)
	}
	if np, ok := byFrontend["/TCP/30080"]; !ok || len(np.Backends) != 2 || !np.LocalRoutedVIP || np.DSR || np.InternalPort != 8080 {
		t.Errorf("web's NodePort: %+v", np)
	}
	if _, ok := byFrontend["10.96.7.7/TCP/80"]; ok {
		t.Error("a Service with no ready endpoint has a load balancer")
	}

	// What the simulator does not model is refused per Service.
	affinity := svc("default", "sticky", "10.96.8.8", corev1.ServiceTypeClusterIP, port("http", corev1.ProtocolTCP, 80, 0))
	affinity.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	local := svc("default", "local", "10.96.9.9", corev1.ServiceTypeNodePort, port("http", corev1.ProtocolTCP, 80, 30090))
	local.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	services["default/sticky"], services["default/local"] = affinity, local
	_, refused = proxyRules("win-0", services, slices, "10.244.3.2", false)
	if !strings.Contains(refused["default/sticky"], "sessionAffinity") || !strings.Contains(refused["default/local"], "externalTrafficPolicy Local") {
		t.Errorf("refused %v", refused)
	}
}

// memFiles is a host's disk for the proxier's unit test.
type memFiles map[string][]byte

func (m memFiles) ReadFile(p string) ([]byte, error) {
	b, ok := m[p]
	if !ok {
		return nil, fmt.Errorf("open %s: The system cannot find the file specified.", p)
	}
	return b, nil
}

func (m memFiles) WriteFile(p string, b []byte) error { m[p] = b; return nil }

// TestHNSProxier holds the simulated kube-proxy to winkernel's syncs: a
// remote HNS endpoint per backend address, shared by the load balancers
// that send to it and deleted with the last of them; the source VIP's
// endpoint; and a Service port whose rules did not change is not programmed
// again ("Policy already applied"), so a load balancer made stale in HNS
// stays stale until its Service changes.
func TestHNSProxier(t *testing.T) {
	files := memFiles{}
	if err := winsim.PutHNSNetwork(files, winsim.HNSNetwork{Name: "flannel.4096", Type: "Overlay", AddressPrefix: "10.244.3.0/24", VNI: 4096}); err != nil {
		t.Fatal(err)
	}
	var logBuf strings.Builder
	px := &hnsProxier{files: files, network: "flannel.4096", sourceVIP: "10.244.3.2", nodeIP: "192.0.2.10", log: newLogger(&logBuf), applied: map[string]appliedPolicy{}}
	dns := []lbSpec{{VIP: "10.96.0.10", Protocol: "UDP", ExternalPort: 53, InternalPort: 53, Backends: []backend{{IP: "10.244.0.2", Port: 53}}}}
	dnsTCP := []lbSpec{{VIP: "10.96.0.10", Protocol: "TCP", ExternalPort: 53, InternalPort: 53, Backends: []backend{{IP: "10.244.0.2", Port: 53}}}}
	px.sync(map[string][]lbSpec{"kube-system/kube-dns:dns": dns, "kube-system/kube-dns:dns-tcp": dnsTCP}, nil)
	eps, lbs := winsim.HNSEndpoints(files), winsim.HNSLoadBalancers(files)
	if len(eps) != 2 || len(lbs) != 2 {
		t.Fatalf("endpoints %+v, load balancers %+v: want the source VIP's and one remote endpoint, two load balancers", eps, lbs)
	}
	remote := findEndpoint(eps, "10.244.0.2")
	if remote == nil || !remote.Remote || lbs[0].Endpoints[0] != remote.ID || lbs[1].Endpoints[0] != remote.ID {
		t.Fatalf("remote endpoint %+v shared by %+v", remote, lbs)
	}
	if sv := findEndpoint(eps, "10.244.3.2"); sv == nil || sv.Remote || sv.ProviderAddress != "192.0.2.10" {
		t.Errorf("source VIP endpoint %+v", sv)
	}

	// Stale in HNS: the next sync, for another Service, leaves it.
	stale := lbs[1].ID
	if err := winsim.ReplaceHNSLoadBalancerReferences(files, stale, []string{"0bad0bad-0000-4000-8000-000000000000"}); err != nil {
		t.Fatal(err)
	}
	web := []lbSpec{{VIP: "10.96.5.5", Protocol: "TCP", ExternalPort: 80, InternalPort: 8080, Backends: []backend{{IP: "10.244.0.9", Port: 8080}}}}
	px.sync(map[string][]lbSpec{"kube-system/kube-dns:dns": dns, "kube-system/kube-dns:dns-tcp": dnsTCP, "default/web:http": web}, nil)
	staleNow := false
	for _, lb := range winsim.HNSLoadBalancers(files) {
		staleNow = staleNow || lb.ID == stale && lb.Endpoints[0] == "0bad0bad-0000-4000-8000-000000000000"
	}
	if !staleNow {
		t.Error("an unchanged Service's load balancer was programmed again")
	}
	// Its endpoints change: programmed again, and the stale one is gone.
	dnsTCP[0].Backends = []backend{{IP: "10.244.0.3", Port: 53}}
	px.sync(map[string][]lbSpec{"kube-system/kube-dns:dns": dns, "kube-system/kube-dns:dns-tcp": dnsTCP}, nil)
	lbs = winsim.HNSLoadBalancers(files)
	for _, lb := range lbs {
		if lb.ID == stale {
			t.Error("the stale load balancer is still there after its Service changed")
		}
	}
	eps = winsim.HNSEndpoints(files)
	if findEndpoint(eps, "10.244.0.9") != nil || findEndpoint(eps, "10.244.0.3") == nil || len(lbs) != 2 {
		t.Errorf("after web went: endpoints %+v, load balancers %+v (web's remote endpoint must go with it)", eps, lbs)
	}
	// Another agent's remote endpoint (calico-node's Calico_ep, whose
	// address kube-proxy takes as its source VIP) is not kube-proxy's to
	// delete: it survives every sync.
	if _, err := winsim.CreateHNSEndpoint(files, HNSEndpoint{Name: "Calico_ep", Network: "flannel.4096", IP: "10.244.3.250", Remote: true}); err != nil {
		t.Fatal(err)
	}
	px.sync(map[string][]lbSpec{"kube-system/kube-dns:dns": dns}, nil)
	if findEndpoint(winsim.HNSEndpoints(files), "10.244.3.250") == nil {
		t.Error("kube-proxy's sync deleted another agent's remote endpoint (Calico_ep)")
	}
}
