package sandbox

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

// testClusterDNS checks the cluster DNS as a pod sees it: the real
// EndpointSlice controller puts the CoreDNS pod of the Linux node behind
// kube-dns, a query to that endpoint is answered by the real CoreDNS from the
// real API server, and kube-dns selecting nothing takes the endpoint away.
func testClusterDNS(ctx context.Context, t *testing.T, s *Sandbox, cs kubernetes.Interface) {
	node, err := cs.CoreV1().Nodes().Get(ctx, linuxnode.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels["kubernetes.io/os"] != "linux" || node.Spec.PodCIDR != linuxnode.PodCIDR {
		t.Errorf("Linux node: labels %v, podCIDR %q", node.Labels, node.Spec.PodCIDR)
	}
	slicesAPI := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceSystem)
	lw := listWatch(slicesAPI.List, slicesAPI.Watch, "metadata.namespace", metav1.NamespaceSystem)
	dnsEndpoints := func(ev watch.Event) []string {
		sl := ev.Object.(*discoveryv1.EndpointSlice)
		if sl.Labels[discoveryv1.LabelServiceName] != controlplane.KubeDNSServiceName {
			return nil
		}
		var addrs []string
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				addrs = append(addrs, e.Addresses...)
			}
		}
		return addrs
	}
	// The real controller's slice for kube-dns, with the pod's address.
	waitUntil(t, lw, &discoveryv1.EndpointSlice{}, func(ev watch.Event) bool {
		return slices.Contains(dnsEndpoints(ev), linuxnode.DNSPodIP)
	})

	// A real query through the node's dataplane ends at CoreDNS, which
	// answers from the API server: kubernetes.default is the first address
	// of the service CIDR.
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return s.LinuxNode.Dial(ctx, network, netip.MustParseAddrPort(linuxnode.DNSPodIP+":53"))
	}}
	addrs, err := r.LookupHost(ctx, "kubernetes.default.svc."+controlplane.DNSDomain+".")
	if err != nil {
		t.Fatalf("resolving kubernetes.default through CoreDNS: %v", err)
	}
	if !slices.Equal(addrs, []string{"10.96.0.1"}) {
		t.Errorf("kubernetes.default.svc resolves to %v, want [10.96.0.1]", addrs)
	}
	if _, err := r.LookupHost(ctx, "nothing-here.default.svc."+controlplane.DNSDomain+"."); err == nil {
		t.Error("an unknown Service resolved")
	}

	// kube-dns selecting nothing: the controller empties its slice.
	svcs := cs.CoreV1().Services(metav1.NamespaceSystem)
	patch := func(sel string) {
		if _, err := svcs.Patch(ctx, controlplane.KubeDNSServiceName, types.MergePatchType,
			[]byte(`{"spec":{"selector":{"k8s-app":"`+sel+`"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("nothing")
	waitUntil(t, lw, &discoveryv1.EndpointSlice{}, func(ev watch.Event) bool {
		sl := ev.Object.(*discoveryv1.EndpointSlice)
		return sl.Labels[discoveryv1.LabelServiceName] == controlplane.KubeDNSServiceName && len(dnsEndpoints(ev)) == 0
	})
	patch("kube-dns")
	waitUntil(t, lw, &discoveryv1.EndpointSlice{}, func(ev watch.Event) bool {
		return slices.Contains(dnsEndpoints(ev), linuxnode.DNSPodIP)
	})
}
