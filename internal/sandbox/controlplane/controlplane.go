// Package controlplane runs a real Kubernetes control plane for the sandbox:
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler, built
// from Go modules (tools/controlplane), listening on 127.0.0.1 only, with
// certificates from the sandbox CA and the objects `kubeadm init` creates.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/localport"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// Options configure a control plane.
type Options struct {
	// Dir is the working directory; etcd/, logs/ and conf/ are (re)created
	// under it, so every start begins with an empty cluster.
	Dir string
	// PKI holds the certificates; its CA is the cluster CA.
	PKI *pki.Bundle
	// BinDir holds the binaries; "" resolves them with ResolveBinaries.
	BinDir string
	// KubeconfigPath is where the admin kubeconfig is written ("" = Dir/kubeconfig).
	KubeconfigPath string
	// AllocateNodeCIDRs makes the controller manager assign each Node a
	// spec.podCIDR from ClusterCIDR.
	AllocateNodeCIDRs bool
	Logf              func(format string, args ...any)
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Server is the API server URL, https://127.0.0.1:<port>.
	Server string
	// Kubeconfig is the admin kubeconfig (context "sandbox", system:masters).
	Kubeconfig string
	// Config and Client are admin clients.
	Config *rest.Config
	Client kubernetes.Interface
	// Version is the API server's reported gitVersion.
	Version string
	// LogDir holds <component>.log for each component.
	LogDir string
	// BinDir holds the binaries it runs; tools/controlplane/build.sh puts
	// the simulated kubelet's kubeletcheck there too.
	BinDir string

	layout   *layout
	procsMu  sync.Mutex
	procs    []*process // in start order; an API server restarted by StartAPIServer replaces its predecessor
	exited   chan *process
	failed   chan struct{}
	failMu   sync.Mutex
	failErr  error
	stopped  chan struct{} // closed when Stop begins
	stopping atomic.Bool
	stopOnce sync.Once
	stopErr  error

	restartMu sync.Mutex // StopAPIServer and StartAPIServer, one at a time

	logf func(format string, args ...any)
	// running is set once Start has returned the control plane: from then
	// on the controller manager and scheduler are restarted when they exit
	// (during Start, an exit fails the start with its log instead).
	running atomic.Bool
	// backoff spaces the restarts of one component as the kubelet's
	// CrashLoopBackOff does.
	backoff  *flowcontrol.Backoff
	restarts atomic.Int64
}

// The kubelet's restart backoff for a container that keeps exiting
// (kubernetes/kubernetes pkg/kubelet/kubelet.go: backOffPeriod and
// MaxContainerBackOff): the first restart at once, then 10 s doubling up to
// 5 minutes, reset once the container has run for twice the maximum.
const (
	restartBackoffInitial = 10 * time.Second
	restartBackoffMax     = 300 * time.Second
)

// Component names, which are also their log file names and, for the
// controller manager and scheduler, their leader-election Lease names.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
)

// Start starts every component and returns once the cluster is usable: the
// API server is ready, the controller manager and scheduler hold their
// leases, the bootstrap objects exist and the default ServiceAccount has been
// created. If a component exits meanwhile, the error names it and quotes its
// log. On error everything started is stopped again.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	binDir := opts.BinDir
	if binDir == "" {
		if binDir, err = ResolveBinaries(ctx, logf); err != nil {
			return nil, err
		}
	}
	l, err := prepare(opts, binDir)
	if err != nil {
		return nil, err
	}
	kubeconfigPath := opts.KubeconfigPath
	if kubeconfigPath == "" {
		kubeconfigPath = filepath.Join(opts.Dir, "kubeconfig")
	}
	caPEM := opts.PKI.CA.CertPEM
	server := l.apiserverURL()
	if err := writeKubeconfig(kubeconfigPath, kubeconfig(server, caPEM, pki.AdminUser, opts.PKI.Admin)); err != nil {
		return nil, err
	}
	cfg := restConfig(server, caPEM, opts.PKI.Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("controlplane: admin client: %w", err)
	}

	cp := &ControlPlane{
		Server: server, Kubeconfig: kubeconfigPath, Config: cfg, Client: cs,
		LogDir:  filepath.Join(opts.Dir, "logs"),
		BinDir:  binDir,
		layout:  l,
		exited:  make(chan *process, len(Binaries)),
		failed:  make(chan struct{}),
		stopped: make(chan struct{}),
		logf:    logf,
		backoff: flowcontrol.NewBackOff(restartBackoffInitial, restartBackoffMax),
	}
	go cp.monitor()
	defer func() {
		if err != nil {
			if stopErr := cp.Stop(); stopErr != nil {
				logf("controlplane: stopping after a failed start: %v", stopErr)
			}
		}
	}()

	// Waits end early, with the component's log, if any component exits.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-cp.failed:
			cancel(cp.failErr)
		case <-ctx.Done():
		}
	}()

	// The API server retries its etcd connection, so both start at once.
	if err := cp.start(l, Etcd, l.etcdArgs()); err != nil {
		return nil, err
	}
	if err := cp.start(l, APIServer, l.apiserverArgs()); err != nil {
		return nil, err
	}
	if err := waitForAPIServer(ctx, cs); err != nil {
		return nil, cp.explain(err)
	}
	if cp.Version, err = serverVersion(ctx, cs); err != nil {
		return nil, cp.explain(err)
	}
	logf("controlplane: %s %s ready at %s", APIServer, cp.Version, server)

	// The controller manager and scheduler give up if the API server is not
	// healthy soon after they start, so they start only now.
	if err := cp.start(l, ControllerManager, l.controllerManagerArgs()); err != nil {
		return nil, err
	}
	if err := cp.start(l, Scheduler, l.schedulerArgs()); err != nil {
		return nil, err
	}
	if err := bootstrapCluster(ctx, cs, server, caPEM); err != nil {
		return nil, cp.explain(err)
	}
	if err := WaitForLeaders(ctx, cs, ControllerManager, Scheduler); err != nil {
		return nil, cp.explain(err)
	}
	if err := WaitForServiceAccount(ctx, cs, "default", "default"); err != nil {
		return nil, cp.explain(err)
	}
	logf("controlplane: %s and %s are leading; cluster ready", ControllerManager, Scheduler)
	cp.running.Store(true)
	return cp, nil
}

// prepare creates the working directories, chooses ports and writes the
// controller manager's and scheduler's kubeconfigs.
func prepare(opts Options, binDir string) (*layout, error) {
	for _, d := range []string{"etcd", "logs", "conf"} {
		p := filepath.Join(opts.Dir, d)
		// A previous run's etcd data was written with other certificates
		// and service-account keys; it is useless now.
		if err := os.RemoveAll(p); err != nil {
			return nil, fmt.Errorf("controlplane: clearing %s: %w", p, err)
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("controlplane: creating %s: %w", p, err)
		}
	}
	ports, err := localport.Reserve(3, false)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	l := &layout{
		dir: opts.Dir, binDir: binDir, pki: opts.PKI,
		etcdClientPort: ports[0], etcdPeerPort: ports[1], apiserverPort: ports[2],
		controllerManagerKubeconfig: filepath.Join(opts.Dir, "conf", "controller-manager.conf"),
		schedulerKubeconfig:         filepath.Join(opts.Dir, "conf", "scheduler.conf"),
		allocateNodeCIDRs:           opts.AllocateNodeCIDRs,
	}
	caPEM := opts.PKI.CA.CertPEM
	if err := writeKubeconfig(l.controllerManagerKubeconfig,
		kubeconfig(l.apiserverURL(), caPEM, pki.ControllerManagerUser, opts.PKI.ControllerManager)); err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	if err := writeKubeconfig(l.schedulerKubeconfig,
		kubeconfig(l.apiserverURL(), caPEM, pki.SchedulerUser, opts.PKI.Scheduler)); err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	return l, nil
}

func (cp *ControlPlane) start(l *layout, name string, args []string) error {
	p, err := startProcess(name, l.bin(name), args, cp.LogDir, cp.exited)
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	cp.procsMu.Lock()
	defer cp.procsMu.Unlock()
	for i, old := range cp.procs {
		if old.name == name {
			cp.procs[i] = p // a restart: the exited predecessor is forgotten
			return nil
		}
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// monitor records the first component exit that neither Stop nor
// StopAPIServer caused, and that no kubelet would repair: etcd's or the API
// server's. The controller manager and the scheduler are restarted instead,
// as the kubelet restarts the static pods kubeadm runs them in (their
// restartPolicy is Always): each exits by design when it cannot renew its
// leader lease ("leaderelection lost"), which an API server outage longer
// than the renew deadline causes on a real single-member control plane too.
func (cp *ControlPlane) monitor() {
	for {
		var p *process
		select {
		case p = <-cp.exited:
		case <-cp.stopped:
			return
		}
		if cp.stopping.Load() {
			return
		}
		if p.expected.Load() {
			continue // StopAPIServer's outage
		}
		if args, ok := cp.layout.restartArgs(p.name); ok && cp.running.Load() {
			go cp.restart(p, args)
			continue
		}
		cp.failOnce(fmt.Errorf("controlplane: %w", p.exitError()))
		return
	}
}

// restart starts the exited component p again after the kubelet's backoff.
// A component that cannot even be started again fails the control plane.
func (cp *ControlPlane) restart(p *process, args []string) {
	now := time.Now()
	var wait time.Duration
	if cp.backoff.IsInBackOffSinceUpdate(p.name, now) {
		wait = cp.backoff.Get(p.name)
	}
	cp.backoff.Next(p.name, now)
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error()
	}
	cp.logf("controlplane: %s exited (%s); restarting it in %s as the kubelet would; last lines of %s:\n%s",
		p.name, status, wait, p.logPath, p.tail())
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-cp.stopped:
		return
	}
	// Under procsMu, so that Stop, which takes it after setting stopping,
	// either sees the new process or this sees stopping.
	cp.procsMu.Lock()
	defer cp.procsMu.Unlock()
	if cp.stopping.Load() {
		return
	}
	np, err := startProcess(p.name, cp.layout.bin(p.name), args, cp.LogDir, cp.exited)
	if err != nil {
		cp.failOnce(fmt.Errorf("controlplane: restarting %s: %w", p.name, err))
		return
	}
	for i, old := range cp.procs {
		if old.name == p.name {
			cp.procs[i] = np
		}
	}
	cp.restarts.Add(1)
}

// failOnce records err as the control plane's failure unless one is
// recorded already.
func (cp *ControlPlane) failOnce(err error) {
	cp.failMu.Lock()
	defer cp.failMu.Unlock()
	select {
	case <-cp.failed:
	default:
		cp.failErr = err
		close(cp.failed)
	}
}

// Restarts counts the restarts of the controller manager and the scheduler
// since Start.
func (cp *ControlPlane) Restarts() int64 { return cp.restarts.Load() }

func (cp *ControlPlane) proc(name string) *process {
	cp.procsMu.Lock()
	defer cp.procsMu.Unlock()
	for _, p := range cp.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// StopAPIServer stops kube-apiserver (SIGTERM, as a kubelet stopping its
// static pod does) and returns once it has exited: clients then get
// connection refused, and open watches end. etcd, the controller manager
// and the scheduler keep running. The exit is expected, so Failed does not
// report it; StartAPIServer ends the outage.
func (cp *ControlPlane) StopAPIServer() error {
	cp.restartMu.Lock()
	defer cp.restartMu.Unlock()
	p := cp.proc(APIServer)
	if p == nil {
		return fmt.Errorf("controlplane: %s is not running", APIServer)
	}
	p.expected.Store(true)
	if err := p.stop(); err != nil {
		select {
		case <-p.done:
			// Killed after its grace period (a loaded machine): stopped
			// all the same, which is what an outage needs.
		default:
			return fmt.Errorf("controlplane: %w", err)
		}
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the
// same port with the same certificates and etcd (so every client, kubelet
// and watch of the cluster reconnects to the same server with the same
// data), and returns once it is ready. Its log is appended to. An API
// server already running (started again by another caller: a test and its
// cleanup may both) is waited for, not started twice.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.restartMu.Lock()
	defer cp.restartMu.Unlock()
	if p := cp.proc(APIServer); p != nil {
		select {
		case <-p.done:
		default:
			return waitForAPIServer(ctx, cp.Client)
		}
	}
	if cp.stopping.Load() {
		return fmt.Errorf("controlplane: stopped")
	}
	if err := cp.start(cp.layout, APIServer, cp.layout.apiserverArgs()); err != nil {
		return err
	}
	if err := waitForAPIServer(ctx, cp.Client); err != nil {
		return cp.explain(err)
	}
	// /readyz can pass before the RBAC authorizer's caches have the roles
	// again: until then it refuses every identity but system:masters (seen
	// in CI: an eviction by the provider's ServiceAccount Forbidden just
	// after the restart). Ready means authorizing as before the outage.
	if err := waitForRBAC(ctx, cp.Client); err != nil {
		return cp.explain(err)
	}
	return nil
}

// exitReportWait is how long a failed step waits for news of a component
// exit: a refused connection usually means the API server has just died, and
// its log says why, which the refused connection does not.
const exitReportWait = 200 * time.Millisecond

// explain returns the reason a step failed: a component's exit when one
// exited (the step's own error is then only its consequence), else err.
func (cp *ControlPlane) explain(err error) error {
	timer := time.NewTimer(exitReportWait)
	defer timer.Stop()
	select {
	case <-cp.failed:
		return cp.failErr
	case <-timer.C:
		return fmt.Errorf("controlplane: %w", err)
	}
}

// Failed is closed when a component exits on its own; Err then says which
// and why.
func (cp *ControlPlane) Failed() <-chan struct{} { return cp.failed }

// Err returns the first unexpected exit, or nil.
func (cp *ControlPlane) Err() error {
	select {
	case <-cp.failed:
		return cp.failErr
	default:
		return nil
	}
}

// Stop stops the components in reverse dependency order: the controller
// manager and scheduler, then the API server, then etcd. It is idempotent.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		cp.stopping.Store(true)
		close(cp.stopped)
		cp.procsMu.Lock()
		byName := make(map[string]*process, len(cp.procs))
		for _, p := range cp.procs {
			byName[p.name] = p
		}
		cp.procsMu.Unlock()
		var errs []error
		for _, tier := range [][]string{{ControllerManager, Scheduler}, {APIServer}, {Etcd}} {
			var wg sync.WaitGroup
			tierErrs := make([]error, len(tier))
			for i, name := range tier {
				if p := byName[name]; p != nil {
					wg.Go(func() { tierErrs[i] = p.stop() })
				}
			}
			wg.Wait()
			errs = append(errs, tierErrs...)
		}
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}

// PIDs returns the process id of each running component.
func (cp *ControlPlane) PIDs() map[string]int {
	cp.procsMu.Lock()
	defer cp.procsMu.Unlock()
	out := make(map[string]int, len(cp.procs))
	for _, p := range cp.procs {
		out[p.name] = p.cmd.Process.Pid
	}
	return out
}
