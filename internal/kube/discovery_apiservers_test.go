package kube_test

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestDiscoverAPIServerAddresses: with the documented role, the provider's
// ServiceAccount reads the API servers' advertised addresses from the
// EndpointSlices of default/kubernetes on the real API server. The sandbox's
// kube-apiserver runs with --endpoint-reconciler-type=none (it would
// publish 127.0.0.1, which the API refuses as an endpoint), so the test
// writes, as an administrator, the slice a reconciling API server writes
// (pkg/controlplane/reconcilers: the kubernetes Service's endpoints,
// labelled kubernetes.io/service-name=kubernetes).
func TestDiscoverAPIServerAddresses(t *testing.T) {
	s, _ := cluster(t)
	ctx := t.Context()
	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := provider.DiscoverNetwork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.APIServerAddresses) != 0 {
		t.Fatalf("API server addresses %v before any slice names them", n.APIServerAddresses)
	}
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.11"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	admin := s.ControlPlane.Client.DiscoveryV1().EndpointSlices("default")
	if _, err := admin.Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(t.Context(), slice.Name, metav1.DeleteOptions{}) })
	if n, err = provider.DiscoverNetwork(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.APIServerAddresses, []string{"192.0.2.11"}) || n.Sources.APIServerAddresses != "EndpointSlices of Service default/kubernetes" {
		t.Errorf("API server addresses %v (from %q), want [192.0.2.11] from the EndpointSlices of default/kubernetes", n.APIServerAddresses, n.Sources.APIServerAddresses)
	}
}
