package kubeletsim

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// FileSystem reads and writes files of the simulated host by Windows path
// ("C:\k\config"). *winsim.Host implements it.
type FileSystem interface {
	ReadFile(path string) ([]byte, error)
	WriteFile(path string, data []byte) error
}

// ServiceTable looks up the host's Windows services (the container runtime
// must be Running). *winsim.Host implements it.
type ServiceTable interface {
	Service(name string) (winsim.Service, bool)
}

// HostInfo is what the kubelet learns from the machine it runs on.
type HostInfo struct {
	ComputerName string
	IP           string
	WindowsBuild string // full version with the update build revision: 10.0.20348.2340
	BIOSUUID     string
	NumCPU       int // default 2
	MemoryMB     int // default 4096
	// Disk is the host's disk directory: what its containerd holds (the
	// images it pulled) is kept by it.
	Disk string
}

// Config describes one kubelet process.
type Config struct {
	// Executable is the service's executable path on the host (C:\k\kubelet.exe);
	// Args is the command line after it.
	Executable string
	Args       []string
	// Files is the host's filesystem: every path in flags and configuration
	// files is read there, and the kubelet writes its certificates and
	// kubeconfig there.
	Files FileSystem
	// Services is the host's service table; nil means no container runtime.
	Services ServiceTable
	Host     HostInfo
	// Log receives the kubelet's log (klog text format); nil discards it.
	Log io.Writer
	// Checker is the path of the kubeletcheck helper (CheckerName), which
	// the sandbox builds next to its control plane. Without it the kubelet
	// does not start.
	Checker string
	// Overlay carries its pods' connections to other nodes' pods; nil:
	// none (podnet.go).
	Overlay Overlay
	// Dataplanes, when set, is where the node's pod network is found by
	// the overlay's other ends (pods_iis.go).
	Dataplanes *Dataplanes
	// Latency times the kubelet's registration, its status syncs and its
	// image pulls (internal/sandbox/latency); nil takes no time.
	Latency *latency.Model
	// NeverReady is a fault: the Node registers but never reports Ready.
	NeverReady bool
	// NotReady, when set, is asked at each readiness check: while it
	// returns true the Node reports NotReady (a fault held and released at
	// run time).
	NotReady func() bool
	// GMSA is the Active Directory domain the host's containers retrieve
	// gMSA passwords from (pods_gmsa.go); nil: no domain is reachable, and
	// every container with a credential spec fails to start.
	GMSA GMSADomain
	// Egress is the site's network (winsim.Faults.Egress: the registries
	// reachable only through its proxy), asked at each pull; nil or a nil
	// result: the registries are reached directly.
	Egress func() *winsim.Egress
	// RuntimeEnv is containerd's process environment while it runs
	// (winsim.Host.RunningServiceEnv), from which its pulls take a proxy.
	RuntimeEnv func() (map[string]string, bool)
}

// Kubelet is a running simulated kubelet.
type Kubelet struct {
	cfg      Config
	nodeName string
	log      *logger
	flags    *flags
	settings settings
	version  string

	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// ErrStopped is returned by Err after Stop.
var ErrStopped = errors.New("kubelet stopped")

// Start parses the command line and configuration like kubelet.exe does at
// start-up and then runs the kubelet in the background until ctx ends or Stop
// is called. Errors a real kubelet exits with before it starts working
// (unknown flags, a missing executable, a configuration file it cannot
// decode) are returned, after being written to the log. Errors later on
// (TLS bootstrap, registration) are logged and retried with back-off, as the
// service manager restarts a failing kubelet; Err reports the latest.
func Start(ctx context.Context, cfg Config) (*Kubelet, error) {
	return start(ctx, cfg)
}

// Stop stops the kubelet: its Lease is no longer renewed and its pods are
// no longer updated. It waits until every goroutine has ended.
func (k *Kubelet) Stop() {
	k.cancel()
	<-k.done
}

// NodeName is the name the kubelet registers its Node with.
func (k *Kubelet) NodeName() string { return k.nodeName }

// Err reports the latest failure (bootstrap, registration), or nil while the
// kubelet works.
func (k *Kubelet) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *Kubelet) setErr(err error) {
	k.mu.Lock()
	k.err = err
	k.mu.Unlock()
}

// nodeNameFor is the name a kubelet registers: --hostname-override, else the
// computer name, lower-cased.
func nodeNameFor(override, computerName string) string {
	if override != "" {
		return strings.ToLower(strings.TrimSpace(override))
	}
	return strings.ToLower(computerName)
}
