package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestDNSEndpoints: the probe counts kube-dns's ready endpoints and reaches
// one on another node on the DNS port over TCP (not the metrics port, which
// the cluster DNS need not serve); one on the probed node is no other node.
func TestDNSEndpoints(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	port := func(name string, proto corev1.Protocol, p int32) discoveryv1.EndpointPort {
		return discoveryv1.EndpointPort{Name: &name, Protocol: &proto, Port: &p}
	}
	ep := func(ip, node string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: &node, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
	}
	slices := []discoveryv1.EndpointSlice{{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{port("dns", udp, 53), port("dns-tcp", tcp, 53), port("metrics", tcp, 9153)},
		Endpoints:   []discoveryv1.Endpoint{ep("10.244.0.2", "cp", true), ep("10.244.3.9", "win-1", true), ep("10.244.0.3", "cp", false)},
	}}
	ready, other := dnsEndpoints(slices, "win-1")
	if ready != 2 || other != "10.244.0.2:53" {
		t.Errorf("ready %d, other %q; want 2 and 10.244.0.2:53", ready, other)
	}
	if ready, other := dnsEndpoints(slices, "cp"); ready != 2 || other != "10.244.3.9:53" {
		t.Errorf("from cp: ready %d, other %q", ready, other)
	}
	if ready, other := dnsEndpoints(nil, "win-1"); ready != 0 || other != "" {
		t.Errorf("no slices: ready %d, other %q", ready, other)
	}
	paths := probePaths("cluster.local", "", "192.0.2.10:30053")
	if len(paths) != 1 || paths[0].Target != "kube-dns.kube-system.svc.cluster.local:53" {
		t.Errorf("paths without another node: %+v", paths)
	}
	e := &ProbeError{Node: "win-1", Path: ProbePath{What: "cluster DNS", Output: "DNS: no such host\n"}, Expected: "resolves", Evidence: "no endpoints"}
	if got := e.Error(); !strings.HasPrefix(got, "network probe of node win-1: cluster DNS failed: DNS: no such host\nexpected: resolves\nevidence: no endpoints") {
		t.Errorf("error:\n%s", got)
	}
}

// TestProbeScheduling: the probe pod goes through the scheduler as a user's
// pod does: onto the node by its hostname label, on the RuntimeClass when
// there is one (else by the OS label), tolerating the node's taints and no
// others; the paths include the node's own NodePort when there is a pod on
// another node to put behind it.
func TestProbeScheduling(t *testing.T) {
	req := ProbeRequest{Node: "win-1", NodeLabels: map[string]string{corev1.LabelHostname: "win-1"},
		NodeTaints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoExecute}}}
	var spec corev1.PodSpec
	probeScheduling(&spec, req, "")
	if spec.NodeName != "" || spec.NodeSelector[corev1.LabelHostname] != "win-1" || spec.NodeSelector[corev1.LabelOSStable] != "windows" || spec.RuntimeClassName != nil {
		t.Errorf("without a RuntimeClass: %+v", spec)
	}
	if len(spec.Tolerations) != 2 || spec.Tolerations[0] != (corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}) ||
		spec.Tolerations[1] != (corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}) {
		t.Errorf("tolerations %+v", spec.Tolerations)
	}
	spec = corev1.PodSpec{}
	probeScheduling(&spec, req, "windows-2022")
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName != "windows-2022" || len(spec.NodeSelector) != 1 {
		t.Errorf("with a RuntimeClass: %+v", spec)
	}
	paths := probePaths("cluster.local", "10.244.0.2:53", "192.0.2.10:30053")
	if len(paths) != 3 || paths[2].Name != pathNodePort || paths[2].Target != "192.0.2.10:30053" {
		t.Errorf("paths %+v", paths)
	}
	if p := probePaths("cluster.local", "10.244.0.2:53", ""); len(p) != 2 {
		t.Errorf("without the node's address: %+v", p)
	}
	pulled := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}}}
	if why := imageNotPulled(pulled); !strings.Contains(why, "ErrImagePull: not found") {
		t.Errorf("imageNotPulled: %q", why)
	}
}
