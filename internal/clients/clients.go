// Package clients hands the provider's API clients to resources. Clients are
// made on first use, not in Configure, so a configuration that only manages
// Kubernetes objects needs no vSphere settings, and the reverse.
package clients

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// Clients is the provider data every resource receives.
type Clients struct {
	KubeConfig    kube.Config
	VSphereConfig vsphere.Config
	// ADConfig is the provider's active_directory block: the join account
	// and where to remove computer accounts.
	ADConfig addirectory.Config

	// KubeConfigUnknown and VSphereConfigUnknown name the attributes of each
	// block that are unknown at plan (for example "kubernetes.host" set from a
	// cluster created in the same run). Such a client is refused until
	// Terraform configures the provider again at apply with known values; it
	// is never made from the environment instead.
	KubeConfigUnknown    []string
	VSphereConfigUnknown []string

	kubeOnce sync.Once
	kube     *kube.Client
	kubeErr  error

	vsphereMu  sync.Mutex
	vsphere    *vsphere.Client
	vsphereErr error // a lasting login failure (VSphere)

	discoveryMu sync.Mutex
	network     *kube.ClusterNetwork
	cluster     *kube.Cluster
	server      string
	health      map[string]*kube.HealthSnapshot // by networking namespace ("" none)

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

// ServerVersion reads the API server's version (discovery, /version) once
// per provider process: every node's and pool's plan judges its Windows
// release against it (windows_node's support warning), one request answers.
func (c *Clients) ServerVersion(ctx context.Context) (string, error) {
	c.discoveryMu.Lock()
	defer c.discoveryMu.Unlock()
	if c.server != "" {
		return c.server, nil
	}
	k, err := c.Kubernetes(ctx)
	if err != nil {
		return "", err
	}
	v, err := k.ServerVersion(ctx)
	if err != nil {
		return "", err
	}
	c.server = v
	return v, nil
}

// HealthSnapshot reads what nodes' health is judged with (the cluster DNS's
// endpoints and the agents' pods in namespace) once per provider process and
// namespace: every node a refresh reads is judged against one EndpointSlice
// list and one pod list, however many nodes there are. A failed read is not
// remembered.
func (c *Clients) HealthSnapshot(ctx context.Context, namespace string, agents []kube.Agent) (*kube.HealthSnapshot, error) {
	c.discoveryMu.Lock()
	defer c.discoveryMu.Unlock()
	if got, ok := c.health[namespace]; ok {
		return got, nil
	}
	k, err := c.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	got, err := k.ReadHealthSnapshot(ctx, namespace, agents)
	if err != nil {
		return nil, err
	}
	if c.health == nil {
		c.health = map[string]*kube.HealthSnapshot{}
	}
	c.health[namespace] = got
	return got, nil
}

// Kubernetes returns the shared Kubernetes client, connecting on first use.
// A failure is remembered: every resource then reports the same one clear
// error instead of each retrying a dead endpoint.
func (c *Clients) Kubernetes(ctx context.Context) (*kube.Client, error) {
	if len(c.KubeConfigUnknown) > 0 {
		return nil, &UnknownConfigError{Client: "Kubernetes", Attributes: c.KubeConfigUnknown, Environment: "KUBECONFIG, KUBE_*"}
	}
	c.kubeOnce.Do(func() {
		c.kube, c.kubeErr = kube.NewClient(ctx, c.KubeConfig)
	})
	return c.kube, c.kubeErr
}

// VSphere returns the shared vCenter session, logging in on first use: one
// login for every resource of the run, at plan as at apply. A refused login
// or an unverified certificate is remembered (no retry would succeed, and
// every refused password counts towards vCenter's account lockout); any
// other failure is not: a transient failure of one resource must not fail
// every other one for the rest of the run.
func (c *Clients) VSphere(ctx context.Context) (*vsphere.Client, error) {
	if len(c.VSphereConfigUnknown) > 0 {
		return nil, &UnknownConfigError{Client: "vSphere", Attributes: c.VSphereConfigUnknown, Environment: "VSPHERE_*"}
	}
	c.vsphereMu.Lock()
	defer c.vsphereMu.Unlock()
	if c.vsphere != nil || c.vsphereErr != nil {
		return c.vsphere, c.vsphereErr
	}
	vc, err := vsphere.NewClient(ctx, c.VSphereConfig)
	if errors.Is(err, vsphere.ErrLoginRefused) || errors.Is(err, vsphere.ErrCertificateUnverified) {
		c.vsphereErr = err
	}
	if err != nil {
		return nil, err
	}
	c.vsphere = vc
	sessions.add(vc)
	return vc, nil
}

// sessions are the vCenter sessions this process made, to log out of when
// it ends (LogoutAll). The framework has no hook for a provider's end; a
// provider instance is configured again for each operation, and its clients
// live as long as the process.
var sessions openSessions

type openSessions struct {
	mu      sync.Mutex
	clients []*vsphere.Client
}

func (s *openSessions) add(c *vsphere.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients = append(s.clients, c)
}

// LogoutAll logs out of every vCenter session the process made; main calls
// it once the plugin server has stopped (Terraform is done with it). The
// errors are returned together: the process is ending, there is nothing
// else to do with them than to say so.
func LogoutAll(ctx context.Context) error {
	sessions.mu.Lock()
	clients := sessions.clients
	sessions.clients = nil
	sessions.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Go(func() { errs[i] = c.Logout(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// UnknownConfigError is the answer of a client whose provider settings are
// unknown at plan: they come from a resource created or changed in the same
// run. Terraform passes them as unknown until apply; taking the environment's
// settings instead would plan against whatever cluster or vCenter the
// environment points at.
type UnknownConfigError struct {
	Client      string   // "Kubernetes" or "vSphere"
	Attributes  []string // the unknown settings, for example "kubernetes.host"
	Environment string   // the variables that are not used instead
}

func (e *UnknownConfigError) Error() string {
	names := make([]string, len(e.Attributes))
	for i, a := range e.Attributes {
		names[i] = a
		if !strings.Contains(a, ".") {
			names[i] = a + " block" // a dynamic block over a list known only at apply
		}
	}
	what := names[0] + " is"
	if len(names) > 1 {
		what = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are"
	}
	return fmt.Sprintf("The provider's %s unknown until apply: such a value usually comes from a resource that this run creates or changes. "+
		"The provider cannot reach %s during plan, and it does not use the environment (%s) in place of a value that is not known yet.\n\n"+
		"Apply that resource first (terraform apply -target=<its address>), then plan the rest; for a data source, depends_on = [<that resource>] "+
		"makes Terraform read it at apply instead; or compose the configuration so that "+
		"the value is known at plan (for example the cluster in its own configuration, read here from its outputs or a data source); "+
		"or use a Terraform CLI with deferred actions enabled (experimental: alpha builds, terraform plan -allow-deferral), "+
		"which plans these resources in a later round.",
		what, e.Client, e.Environment)
}

// IsUnknownConfig tells whether err comes from provider settings that are
// unknown until apply: not a failure, the client is simply not available
// during this plan.
func IsUnknownConfig(err error) bool {
	var u *UnknownConfigError
	return errors.As(err, &u)
}
