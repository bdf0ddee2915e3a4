package kube

import (
	"context"
	"fmt"
	"net"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiServerService is the Service every API server of the cluster
// publishes its own address behind: each kube-apiserver reconciles its
// --advertise-address into the EndpointSlices of default/kubernetes
// (pkg/controlplane/reconcilers, "the endpoint reconciler"; kubeadm's
// advertiseAddress is that flag). That address is where an API server's
// connections to a kubelet (logs, exec, port-forward, metrics through the
// proxy) come from on a routed network.
const apiServerService = "kubernetes"

// apiServerAddresses reads the API servers' advertised addresses: the
// addresses of the ready endpoints of default/kubernetes. nil when the
// EndpointSlices are absent or not readable (the identity's role lacks
// them): a missing source, as every discovery source.
func (c *Client) apiServerAddresses(ctx context.Context) ([]string, error) {
	list, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + apiServerService,
	})
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the EndpointSlices of Service default/%s: %w", apiServerService, err)
	}
	return endpointAddresses(list.Items), nil
}

// endpointAddresses are the IP addresses of the slices' ready endpoints,
// sorted, without duplicates; what is not an IP address is passed over
// (the slices are written by the API servers, but read as untrusted).
func endpointAddresses(items []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				if ip := net.ParseIP(a); ip != nil && !slices.Contains(out, ip.String()) {
					out = append(out, ip.String())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
