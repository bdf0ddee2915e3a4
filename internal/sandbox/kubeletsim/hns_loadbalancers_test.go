package kubeletsim

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	lbs := proxyRules("win-0", services, slices, "10.244.3.2", false)
	byFrontend := map[string]HNSLoadBalancer{}
	for _, lb := range lbs {
		byFrontend[lb.VIP+"/"+lb.Protocol+"/"+strconv.Itoa(lb.ExternalPort)] = lb
	}
	if len(lbs) != 4 {
		t.Fatalf("%d load balancers, want 4 (kube-dns UDP and TCP, web's ClusterIP and NodePort): %+v", len(lbs), lbs)
	}
	dns := byFrontend["10.96.0.10/UDP/53"]
	if len(dns.Endpoints) != 1 || dns.Endpoints[0] != (HNSEndpoint{IP: "10.244.0.2", Port: 53, Remote: true, Node: "sandbox-control-plane"}) ||
		dns.SourceVIP != "10.244.3.2" || dns.DSR {
		t.Errorf("kube-dns UDP: %+v", dns)
	}
	web := byFrontend["10.96.5.5/TCP/80"]
	if web.InternalPort != 8080 || len(web.Endpoints) != 2 || web.Endpoints[1].Remote || !web.Endpoints[0].Remote {
		t.Errorf("web: %+v (want the two ready endpoints, 10.244.3.4 local)", web)
	}
	if np, ok := byFrontend["/TCP/30080"]; !ok || len(np.Endpoints) != 2 {
		t.Errorf("web's NodePort: %+v", np)
	}
	if _, ok := byFrontend["10.96.7.7/TCP/80"]; ok {
		t.Error("a Service with no ready endpoint has a load balancer")
	}
	if again := proxyRules("win-0", services, slices, "10.244.3.2", false); again[0].ID != lbs[0].ID {
		t.Error("load balancer IDs are not stable across syncs")
	}
}
