// Package clients hands the provider's API clients to resources. Clients are
// made on first use, not in Configure, so a configuration that only manages
// Kubernetes objects needs no vSphere settings, and the reverse.
package clients

import (
	"context"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// Clients is the provider data every resource receives.
type Clients struct {
	KubeConfig    kube.Config
	VSphereConfig vsphere.Config

	kubeOnce sync.Once
	kube     *kube.Client
	kubeErr  error

	vsphereMu sync.Mutex
	vsphere   *vsphere.Client

	discoveryMu sync.Mutex
	network     *kube.ClusterNetwork
	cluster     *kube.Cluster

	// Planned carries plan-time facts between resources (planned.go).
	Planned Planned
}

// ClusterNetwork discovers the cluster's network settings once per provider
// process (one terraform command): every node of an apply joins with the same
// facts, and a 20-node apply asks the API server once instead of 20 times.
// A failed discovery is not remembered.
func (c *Clients) ClusterNetwork(ctx context.Context) (*kube.ClusterNetwork, error) {
	c.discoveryMu.Lock()
	defer c.discoveryMu.Unlock()
	if c.network != nil {
		return c.network, nil
	}
	k, err := c.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	if c.network, err = k.DiscoverNetwork(ctx); err != nil {
		c.network = nil
		return nil, err
	}
	return c.network, nil
}

// Cluster is the snapshot the readiness checks evaluate, taken once per
// provider process, so every node planned in one run is checked against the
// same cluster at the cost of one discovery.
func (c *Clients) Cluster(ctx context.Context) (*kube.Cluster, error) {
	c.discoveryMu.Lock()
	defer c.discoveryMu.Unlock()
	if c.cluster != nil {
		return c.cluster, nil
	}
	k, err := c.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	if c.cluster, err = k.DiscoverCluster(ctx); err != nil {
		c.cluster = nil
		return nil, err
	}
	return c.cluster, nil
}

// Kubernetes returns the shared Kubernetes client, connecting on first use.
// A failure is remembered: every resource then reports the same one clear
// error instead of each retrying a dead endpoint.
func (c *Clients) Kubernetes(ctx context.Context) (*kube.Client, error) {
	c.kubeOnce.Do(func() {
		c.kube, c.kubeErr = kube.NewClient(ctx, c.KubeConfig)
	})
	return c.kube, c.kubeErr
}

// VSphere returns the shared vCenter session, logging in on first use. Unlike
// the Kubernetes client a failed login is not remembered: a transient failure
// of one resource must not fail every other one for the rest of the run.
func (c *Clients) VSphere(ctx context.Context) (*vsphere.Client, error) {
	c.vsphereMu.Lock()
	defer c.vsphereMu.Unlock()
	if c.vsphere != nil {
		return c.vsphere, nil
	}
	vc, err := vsphere.NewClient(ctx, c.VSphereConfig)
	if err != nil {
		return nil, err
	}
	c.vsphere = vc
	return vc, nil
}
