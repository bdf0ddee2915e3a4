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
