package kube_test

import (
	"context"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestProbeWaitsForClusterDNS: with no ready endpoint behind kube-dns (its
// selector matching nothing, so the real EndpointSlice controller empties
// its slice), the probe's DNS wait gives up after DNSReadyWait with none,
// and no error: the probe then fails its DNS path with that evidence. When
// an endpoint comes back during the wait, the wait ends with it. The wait
// runs as the everyday identity (the documented role's list and watch on
// kube-system's EndpointSlices); the admin client breaks and mends DNS.
func TestProbeWaitsForClusterDNS(t *testing.T) {
	s, c := cluster(t)
	ctx := t.Context()
	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	setDNSSelector := func(app string) {
		t.Helper()
		if _, err := c.CoreV1().Services("kube-system").Patch(ctx, "kube-dns", types.MergePatchType,
			[]byte(`{"spec":{"selector":{"k8s-app":"`+app+`"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = c.CoreV1().Services("kube-system").Patch(context.Background(), "kube-dns", types.MergePatchType,
			[]byte(`{"spec":{"selector":{"k8s-app":"kube-dns"}}}`), metav1.PatchOptions{})
	})
	setDNSSelector("nothing")
	waitForDNSSlice(t, c, false)

	defer func(d time.Duration) { kube.DNSReadyWait = d }(kube.DNSReadyWait)
	kube.DNSReadyWait = time.Second
	if ready, _, err := kube.WaitForDNSEndpoints(provider, ctx, "win-x"); err != nil || ready != 0 {
		t.Fatalf("with no DNS endpoint: %d ready, %v; want 0 after the wait, and no error", ready, err)
	}

	kube.DNSReadyWait = time.Minute
	restored := make(chan struct{})
	go func() {
		defer close(restored)
		time.Sleep(2 * time.Second) // after the wait's first list
		setDNSSelector("kube-dns")
	}()
	ready, other, err := kube.WaitForDNSEndpoints(provider, ctx, "win-x")
	<-restored
	if err != nil || ready != 1 || other == "" {
		t.Fatalf("with the DNS endpoint back during the wait: %d ready (other %q), %v; want 1, on the Linux node", ready, other, err)
	}
}

// waitForDNSSlice waits on a watch until kube-dns's EndpointSlice has
// endpoints (or none).
func waitForDNSSlice(t *testing.T, c *kube.Client, want bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := c.DiscoveryV1().EndpointSlices("kube-system").Watch(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kube-dns"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if s, ok := ev.Object.(*discoveryv1.EndpointSlice); ok && ev.Type != watch.Error && (len(s.Endpoints) > 0) == want {
			return
		}
	}
	t.Fatalf("kube-dns's EndpointSlice never had endpoints = %v", want)
}
