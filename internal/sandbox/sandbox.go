// Package sandbox brings up the embedded world that `make demo` and the
// acceptance tests run against, on loopback only: govmomi's vCenter
// simulator with Windows Server base templates, a real Kubernetes control
// plane, and a simulated Windows host (internal/sandbox/vmtools) for every VM
// that powers on, each on its own 127.x.y.z with a simulated kubelet, and
// serving what its template's disk carries (a stock Windows Server: the
// WinRM HTTP listener only); every sandbox endpoint signed by one
// generated CA.
//
// Tests start it in-process (once per package, from TestMain); cmd/sandbox
// runs it as a process and writes Env to a file for shells.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/registry"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/siteproxy"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// VSphereUser is the simulator's administrator (the sandbox's own calls:
// its inventory, the guests' power events).
const VSphereUser = "administrator@vsphere.local"

// VSphereProviderUser is the provider's vCenter account: it holds only the
// least-privilege guide's roles, on the objects the guide names, and the
// simulator checks every call it makes (vcsim's authz.go). VSPHERE_USER
// names it, for the provider and the tests' own vSphere clients alike.
const VSphereProviderUser = "terraform-provider-windows@vsphere.local"

// Options configure a sandbox.
type Options struct {
	// Dir is the working directory. "" creates a temporary one that Stop
	// removes; a given directory is kept (its logs help debugging), but its
	// PKI and cluster state are recreated on every start.
	Dir string
	// AllocateNodeCIDRs controls the controller manager's node pod-CIDR
	// allocation; nil means true. Tests of clusters whose network plugin
	// assigns pod CIDRs itself turn it off.
	AllocateNodeCIDRs *bool
	// HostBootDelay keeps a simulated Windows host's listeners closed this
	// long after its VM powers on (a guest still booting); HostRebootDelay is
	// Restart-Computer's downtime (winsim's default when 0).
	HostBootDelay, HostRebootDelay time.Duration
	// RunnerOutsideSubnet puts the runner (this process: Terraform, the
	// tests) outside the guests' subnet, as a CI runner or a Terraform Cloud
	// agent is: a stock guest's firewall admits WinRM HTTP (5985) on its
	// Public network from the local subnet only, so connections to it are
	// refused, while vCenter's guest operations (transport vmtools) work.
	// By default the runner is in the guests' subnet, as in a lab.
	// cmd/sandbox: --runner-outside-subnet or SANDBOX_RUNNER_OUTSIDE_SUBNET=1.
	RunnerOutsideSubnet bool
	// NoLinuxNode leaves out the Linux control-plane node and with it the
	// cluster DNS (kube-dns then has no endpoints): a cluster with no nodes
	// at all, as a test of a fresh control plane needs.
	NoLinuxNode bool
	// CNI is the cluster's network plugin on the Linux node:
	// linuxnode.CNIFlannel ("", the default), linuxnode.CNICalico
	// (Calico's CRDs and configuration for Windows nodes to join) or
	// linuxnode.CNIAntrea (antrea.yml's ConfigMap, identity and agents).
	// cmd/sandbox: --cni or SANDBOX_CNI.
	CNI string
	// Latency plays real durations (clones, boots, customization, pulls),
	// divided by its time-scale factor, and the hosts' provisioning slots
	// (internal/sandbox/latency). nil, the default, answers at once.
	Latency *latency.Model
	// Logf receives progress; nil discards it.
	Logf func(format string, args ...any)
}

// Sandbox is a running sandbox.
type Sandbox struct {
	// Dir is the working directory (SANDBOX_DIR).
	Dir string
	// CAFile verifies every sandbox endpoint (SANDBOX_CA_FILE, VSPHERE_CA_FILE).
	CAFile string
	// Kubeconfig is the admin kubeconfig, context "sandbox"
	// (SANDBOX_ADMIN_KUBECONFIG): for tests' checks and changes behind
	// Terraform's back.
	Kubeconfig string
	// ProviderKubeconfig is the provider's (KUBECONFIG): a token of the
	// ServiceAccount that examples/rbac/terraform-provider-windows.yaml
	// creates and binds, applied as it is, so everything the provider does
	// in the sandbox proves the documented role suffices.
	ProviderKubeconfig string
	CA                 *pki.CA
	PKI                *pki.Bundle
	// AdminPassword is the Administrator password of the base templates; the
	// simulated Windows hosts accept it.
	AdminPassword string

	VSphere      *vcsim.Server
	ControlPlane *controlplane.ControlPlane
	// Hosts are the simulated Windows hosts of powered-on VMs: find one with
	// Hosts.ByName / ByIP / ByVM / WaitFor, inject faults before it boots
	// with Hosts.SetFaults / SetDefaultFaults.
	Hosts *vmtools.Hosts
	// LinuxNode is the cluster's Linux control-plane node, with the cluster
	// DNS (real CoreDNS) as its pod behind the kube-dns Service.
	LinuxNode *linuxnode.Node
	// Domain is the lab's Active Directory domain (internal/sandbox/addomain):
	// its controller, which the guests' customizations join, and the join
	// account's credentials.
	Domain *Domain
	// WindowsPods are the simulated Windows nodes' pod networks, where the
	// overlay delivers a packet for a Windows pod's address.
	WindowsPods *kubeletsim.Dataplanes
	// Artifacts serves what golden image builds download (kubelet,
	// kube-proxy, containerd, CNI plugins, flanneld), with real checksums.
	Artifacts *artifacts.Server
	// SiteProxy is the site's HTTP forward proxy: guests given
	// ProxyOnlyFaults reach the artifact server and the registries only
	// through it (siteproxy, winsim.Egress).
	SiteProxy *siteproxy.Proxy
	// Registry is the site's private registry mirror (basic auth), holding
	// the pause image and the HostProcess base image under their upstream
	// repositories (RegistryImages).
	Registry *registry.Mirror

	// ReadyIn is how long Start took.
	ReadyIn time.Duration

	removeDir bool
	stopOnce  sync.Once
	stopErr   error
}

// Start brings up vSphere and the control plane concurrently and returns
// once both are ready. It fails, rather than hangs, when a component cannot
// start (the error names it and quotes its log) or ctx ends; everything
// already started is then stopped again.
func Start(ctx context.Context, opts Options) (_ *Sandbox, err error) {
	begin := time.Now()
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Sandbox{Dir: opts.Dir}
	if s.Dir == "" {
		removed, err := removeAbandoned(os.TempDir())
		for _, dir := range removed {
			logf("sandbox: removed %s, left by a run that was killed before it could", dir)
		}
		if err != nil {
			logf("sandbox: removing directories left by killed runs: %v", err)
		}
		if s.Dir, err = os.MkdirTemp("", dirPrefix); err != nil {
			return nil, fmt.Errorf("sandbox: creating working directory: %w", err)
		}
		s.removeDir = true
		if err := writeOwner(s.Dir); err != nil {
			_ = os.RemoveAll(s.Dir)
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	} else if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: creating working directory: %w", err)
	}
	if s.Dir, err = filepath.Abs(s.Dir); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer func() {
		if err != nil {
			if stopErr := s.Stop(); stopErr != nil {
				logf("sandbox: cleaning up after a failed start: %v", stopErr)
			}
		}
	}()

	if s.PKI, err = pki.Generate(filepath.Join(s.Dir, "pki")); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.CA, s.CAFile = s.PKI.CA, s.PKI.CAFile
	s.Kubeconfig = filepath.Join(s.Dir, "kubeconfig")
	s.ProviderKubeconfig = filepath.Join(s.Dir, "provider.kubeconfig")
	if s.AdminPassword, err = pki.RandomPassword(16); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	vspherePassword, err := pki.RandomPassword(20)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	providerPassword, err := pki.RandomPassword(20)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	vcCert, err := s.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		return nil, fmt.Errorf("sandbox: vcsim certificate: %w", err)
	}
	allocate := opts.AllocateNodeCIDRs == nil || *opts.AllocateNodeCIDRs

	// Either part failing cancels the other, so Start returns promptly with
	// the first failure (the other's is only the cancellation).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		firstErr error
	)
	fail := func(err error) {
		failOnce.Do(func() { firstErr = err })
		cancel()
	}
	wg.Go(func() {
		vc, err := vcsim.Start(ctx, vcsim.Options{
			Certificate: vcCert, RootCAs: s.CA.Pool(),
			User: VSphereUser, Password: vspherePassword,
			ProviderUser: VSphereProviderUser, ProviderPassword: providerPassword, Latency: opts.Latency, Logf: logf,
		})
		if err != nil {
			fail(err)
		}
		s.VSphere = vc
	})
	wg.Go(func() {
		cp, err := controlplane.Start(ctx, controlplane.Options{
			Dir: s.Dir, PKI: s.PKI, KubeconfigPath: s.Kubeconfig,
			AllocateNodeCIDRs: allocate, Logf: logf,
		})
		if err != nil {
			fail(err)
		}
		s.ControlPlane = cp
	})
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("sandbox: %w", firstErr)
	}
	if err := s.issueProviderKubeconfig(ctx); err != nil {
		return nil, fmt.Errorf("sandbox: the provider's ServiceAccount: %w", err)
	}
	s.WindowsPods = kubeletsim.NewDataplanes()
	if !opts.NoLinuxNode {
		coredns, err := linuxnode.ResolveCoreDNS(ctx, logf)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		dyn, err := dynamic.NewForConfig(s.ControlPlane.Config)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if s.LinuxNode, err = linuxnode.Start(ctx, linuxnode.Options{
			Client: s.ControlPlane.Client, Dynamic: dyn, CNI: opts.CNI, Kubeconfig: s.Kubeconfig, Context: controlplane.ContextName,
			CoreDNS: coredns, Dir: filepath.Join(s.Dir, "linuxnode"), Domain: controlplane.DNSDomain,
			Version: controlplane.KubernetesVersion, Overlay: s.Overlay, Logf: logf,
		}); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if s.Domain, err = startDomain(s.CA); err != nil {
		return nil, fmt.Errorf("sandbox: the domain controller: %w", err)
	}
	logf("domain: %s's controller at ldap://%s and ldaps://%s", s.Domain.Domain(), s.Domain.Addr(), s.Domain.LDAPSAddr())
	s.Hosts, err = vmtools.Start(ctx, vmtools.Options{
		Domains: addomain.Locators{s.Domain.Domain(): s.Domain.Controller},
		VSphere: s.VSphere, Latency: opts.Latency, CA: s.CA, Dir: filepath.Join(s.Dir, "hosts"), AdminPassword: s.AdminPassword,
		BootDelay: opts.HostBootDelay, RebootDelay: opts.HostRebootDelay, RunnerOutsideSubnet: opts.RunnerOutsideSubnet,
		Programs: kubeletsim.Programs(kubeletsim.HookOptions{Logf: logf, Checker: s.KubeletChecker(), Overlay: s.Overlay, Dataplanes: s.WindowsPods, GMSA: s.GMSADomain()}), Logf: logf,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if s.Artifacts, err = artifacts.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	logf("artifacts: serving image downloads at %s", s.Artifacts.BaseURL)
	if s.SiteProxy, err = siteproxy.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.SiteProxy.Name(s.OutsideArtifacts(), s.ArtifactsAddr())
	logf("site proxy: %s (the artifact server outside: %s)", s.SiteProxy.URL, s.OutsideArtifacts())
	if s.Registry, err = startRegistry(ctx); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	logf("registry: a private mirror at %s", s.Registry.Addr)
	s.ReadyIn = time.Since(begin)
	logf("sandbox: ready in %s", s.ReadyIn.Round(time.Millisecond))
	return s, nil
}

// ProxyOnlyFaults are the faults of a guest at a site that lets only its
// proxy out: the artifact server and the registries answer it only through
// SiteProxy (set them with Hosts.SetFaults before the VM powers on).
// Such a guest knows the artifact server as OutsideArtifacts (its port the
// server's), a name only the proxy resolves.
func (s *Sandbox) ProxyOnlyFaults() winsim.Faults {
	return winsim.Faults{Egress: s.SiteProxy.Egress(s.OutsideArtifacts())}
}

// OutsideArtifactsName is the artifact server's name outside the site.
const OutsideArtifactsName = "artifacts.outside.test"

// OutsideArtifacts is the artifact server's host:port by its outside name,
// which SiteProxy resolves; ArtifactsAddr is its loopback host:port, which a
// test replaces by it in a configuration.
func (s *Sandbox) OutsideArtifacts() string {
	_, port, _ := net.SplitHostPort(s.ArtifactsAddr())
	return net.JoinHostPort(OutsideArtifactsName, port)
}

// ArtifactsAddr is the artifact server's host:port.
func (s *Sandbox) ArtifactsAddr() string {
	u, err := url.Parse(s.Artifacts.BaseURL)
	if err != nil {
		panic(err) // the artifact server's own URL
	}
	return u.Host
}

// KubeletChecker is the kubeletcheck helper the simulated kubelets judge
// their command line and configuration with (kubeletsim.Config.Checker):
// tools/controlplane/build.sh builds it next to the control plane.
func (s *Sandbox) KubeletChecker() string {
	return filepath.Join(s.ControlPlane.BinDir, kubeletsim.CheckerName)
}

// Overlay is the VXLAN overlay between the nodes as the sandbox has it: a
// connection to the Linux node's pod addresses reaches that node's
// dataplane, one to a Windows node's pod network that node's (where only IIS
// containers serve); the sender's own routes were judged before (a Windows
// host's HNS policies, the Linux node's plugin routes).
func (s *Sandbox) Overlay(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	if s.LinuxNode != nil && s.LinuxNode.HasPodAddress(dst.Addr()) {
		return s.LinuxNode.Dial(ctx, network, dst)
	}
	if s.WindowsPods != nil {
		return s.WindowsPods.Dial(ctx, network, dst)
	}
	return nil, fmt.Errorf("overlay: no route to %s: not a pod address of the Linux node", dst.Addr())
}

// Failed is closed when a control-plane component exits on its own; Err
// then says which and why.
func (s *Sandbox) Failed() <-chan struct{} { return s.ControlPlane.Failed() }

// Err reports a component that exited on its own, or nil.
func (s *Sandbox) Err() error { return s.ControlPlane.Err() }

// Stop stops every process, closes the simulator and, for a temporary
// working directory, removes it. It is idempotent.
func (s *Sandbox) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.Hosts != nil {
			// Before the control plane: the simulated kubelets talk to it.
			errs = append(errs, s.Hosts.Close())
		}
		if s.Artifacts != nil {
			errs = append(errs, s.Artifacts.Close())
		}
		if s.SiteProxy != nil {
			errs = append(errs, s.SiteProxy.Close())
		}
		if s.Domain != nil {
			errs = append(errs, s.Domain.Stop())
		}
		if s.Registry != nil {
			errs = append(errs, s.Registry.Close())
		}
		if s.LinuxNode != nil {
			errs = append(errs, s.LinuxNode.Stop())
		}
		if s.ControlPlane != nil {
			errs = append(errs, s.ControlPlane.Stop())
		}
		if s.VSphere != nil {
			s.VSphere.Close()
		}
		if s.removeDir {
			if err := os.RemoveAll(s.Dir); err != nil {
				errs = append(errs, fmt.Errorf("sandbox: removing %s: %w", s.Dir, err))
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}
