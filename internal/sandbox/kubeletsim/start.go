package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

var (
	// kubeletVersionRE finds the version in a simulated kubelet.exe.
	kubeletVersionRE = regexp.MustCompile(`(?m)\bkubelet\s+(v\d+\.\d+\.\d+\S*)`)
	// containerdVersionRE finds the version in a simulated containerd.exe.
	containerdVersionRE = regexp.MustCompile(`(?m)\bcontainerd\s+v?(\d+\.\d+\.\d+\S*)`)
)

// ContainerdService is the Windows service of the container runtime.
const ContainerdService = "containerd"

// restartBackoff is how the service manager restarts a kubelet that exited
// (the bootstrap's `sc.exe failure kubelet ... actions= restart/...`): the
// delay doubles from the first value up to the second.
var restartBackoff = [2]time.Duration{time.Second, 10 * time.Second}

func start(ctx context.Context, cfg Config) (*Kubelet, error) {
	log := newLogger(cfg.Log)
	if cfg.Files == nil {
		return nil, errors.New("kubeletsim: Config.Files is required")
	}
	if cfg.Host.NumCPU == 0 {
		cfg.Host.NumCPU = 2
	}
	if cfg.Host.MemoryMB == 0 {
		cfg.Host.MemoryMB = 4096
	}
	if cfg.Host.WindowsBuild == "" {
		cfg.Host.WindowsBuild = "10.0.20348.0"
	}
	fail := func(err error) (*Kubelet, error) {
		// Before logging is initialised the kubelet prints to stderr,
		// which the service wrapper appends to the log.
		log.raw("Error: " + err.Error())
		return nil, err
	}
	exe, err := cfg.Files.ReadFile(cfg.Executable)
	if err != nil {
		return fail(fmt.Errorf("CreateProcess %s: The system cannot find the file specified.", cfg.Executable))
	}
	m := kubeletVersionRE.FindSubmatch(exe)
	if m == nil {
		return fail(fmt.Errorf("%s is not a kubelet binary (no \"kubelet vX.Y.Z\" line)", cfg.Executable))
	}
	version := string(m[1])
	helper, err := checkerPath(cfg.Checker)
	if err != nil {
		return fail(err)
	}
	verdict, err := checkKubelet(ctx, helper, cfg.Files, cfg.Args)
	if err != nil {
		return fail(err)
	}
	for _, line := range verdict.Output {
		log.raw(line)
	}
	if verdict.Error != "" {
		return fail(errors.New(verdict.Error))
	}
	if verdict.Help || verdict.Version {
		// kubelet.exe prints its usage or version and exits 0; as a service
		// that is a process that ended at once.
		return fail(errors.New("the kubelet printed its help or version and exited"))
	}
	f := flagsFrom(verdict.Flags, verdict.Changed)
	k := &Kubelet{
		cfg: cfg, log: log, flags: f, version: version,
		nodeName: nodeNameFor(f.HostnameOverride, cfg.Host.ComputerName),
		done:     make(chan struct{}),
	}
	k.settings = settingsFrom(verdict.Config)
	log.Info("server.go:528", "Kubelet version", "kubeletVersion", version)
	f.visit(func(name, value string) { log.Infof("flags.go:64", "FLAG: --%s=%q", name, value) })
	log.Info("server.go:540", "Kubelet configuration", "clusterDNS", k.settings.ClusterDNS, "clusterDomain", k.settings.ClusterDomain,
		"maxPods", k.settings.MaxPods, "containerRuntimeEndpoint", k.settings.ContainerRuntimeEndpoint)
	if f.WindowsService {
		log.Info("service_windows.go:64", "Running as a Windows service")
	}
	runCtx, cancel := context.WithCancel(ctx)
	k.cancel = cancel
	go k.supervise(runCtx)
	return k, nil
}

// supervise runs the kubelet and, when it exits with an error, restarts it
// after a back-off, as the service recovery actions do.
func (k *Kubelet) supervise(ctx context.Context) {
	defer close(k.done)
	delay := restartBackoff[0]
	for {
		err := k.run(ctx)
		if ctx.Err() != nil {
			k.setErr(ErrStopped)
			k.log.Info("server.go:1290", "Shutting down kubelet")
			return
		}
		k.setErr(err)
		k.log.Error("run.go:72", err, "command failed")
		k.log.Info("service.go:80", fmt.Sprintf("The kubelet service terminated unexpectedly; restarting in %s", delay))
		select {
		case <-ctx.Done():
			k.setErr(ErrStopped)
			return
		case <-time.After(delay):
		}
		if delay *= 2; delay > restartBackoff[1] {
			delay = restartBackoff[1]
		}
		k.log.Info("server.go:528", "Kubelet version", "kubeletVersion", k.version)
	}
}

// run is one kubelet process: TLS bootstrap, container runtime, node
// registration, then the sync loops until ctx ends or something fatal happens.
func (k *Kubelet) run(ctx context.Context) error {
	if err := k.loadClientCert(ctx); err != nil {
		return fmt.Errorf("failed to run Kubelet: %w", err)
	}
	cfg, _, err := loadKubeconfig(k.cfg.Files, k.flags.Kubeconfig)
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: invalid kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(userAgent(cfg, k.version))
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: %w", err)
	}
	if err := k.flags.validateNodeIP(); err != nil {
		return err
	}
	if ca := k.settings.ClientCAFile; ca != "" {
		if _, err := k.cfg.Files.ReadFile(ca); err != nil {
			return fmt.Errorf("failed to run Kubelet: unable to load client CA file %s: open %s: The system cannot find the file specified.", ca, ca)
		}
	}
	runtimeVersion, err := k.containerRuntime()
	if err != nil {
		return fmt.Errorf("failed to run Kubelet: %w", err)
	}
	k.log.Info("kuberuntime_manager.go:280", "Container runtime initialized", "containerRuntime", "containerd", "version", strings.TrimPrefix(runtimeVersion, "containerd://"), "apiVersion", "v1")
	for _, d := range k.settings.ClusterDNS {
		k.log.Info("kubelet.go:420", "Cluster DNS", "clusterDNS", d, "clusterDomain", k.settings.ClusterDomain)
	}
	if len(k.settings.ClusterDNS) == 0 {
		k.log.Warn("kubelet.go:423", "ClusterDNS is empty; pods will fall back to the host's DNS")
	}
	n := newNodeAgent(k, client, runtimeVersion)
	return n.run(ctx)
}

// containerRuntime checks the containerd service like the kubelet's CRI
// connection check: the endpoint must be containerd's named pipe and the
// service must be running. It returns containerd://<version>.
func (k *Kubelet) containerRuntime() (string, error) {
	ep := k.settings.ContainerRuntimeEndpoint
	pipeDown := func() error {
		return fmt.Errorf("validate service connection: validate CRI v1 runtime API for endpoint %q: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: open %s: The system cannot find the file specified.\"", ep, pipePath(ep))
	}
	if !isContainerdEndpoint(ep) {
		return "", pipeDown()
	}
	if k.cfg.Services == nil {
		return "", pipeDown()
	}
	svc, ok := k.cfg.Services.Service(ContainerdService)
	if !ok || svc.Status != winsim.StatusRunning {
		return "", pipeDown()
	}
	exe, _ := SplitCommandLine(svc.BinaryPathName)
	data, err := k.cfg.Files.ReadFile(exe)
	if err != nil {
		return "", pipeDown()
	}
	m := containerdVersionRE.FindSubmatch(data)
	if m == nil {
		return "", pipeDown()
	}
	return "containerd://" + string(m[1]), nil
}

// cniSettings reads containerd's CNI directories from its service's command
// line and config file.
func (k *Kubelet) cniSettings() (cniSettings, error) {
	var args []string
	if k.cfg.Services != nil {
		if svc, ok := k.cfg.Services.Service(ContainerdService); ok {
			_, args = SplitCommandLine(svc.BinaryPathName)
		}
	}
	return containerdCNISettings(k.cfg.Files, args)
}

// networkError is containerd's NetworkReady condition: nil when the CNI
// network is loaded and its plugins are installed.
func (k *Kubelet) networkError() error {
	s, err := k.cniSettings()
	if err != nil {
		return errCNINotInitialized
	}
	_, err = networkStatus(k.cfg.Files, s)
	return err
}

// sandboxNetworkError is the error setting up a pod sandbox's network would
// end with (a delegate or IPAM plugin missing), nil when it would work.
func (k *Kubelet) sandboxNetworkError() error {
	s, err := k.cniSettings()
	if err != nil {
		return err
	}
	net, err := networkStatus(k.cfg.Files, s)
	if err != nil {
		return err
	}
	return sandboxNetworkError(k.cfg.Files, s, net)
}

// calicoConf is the calico plugin's configuration when the loaded CNI
// network is Calico's (isCalico), as a sandbox's ADD reads it.
func (k *Kubelet) calicoConf() (conf calicoNetConf, isCalico bool, err error) {
	s, err := k.cniSettings()
	if err != nil {
		return conf, false, nil
	}
	net, err := loadCNINetwork(k.cfg.Files, s.ConfDir)
	if err != nil {
		return conf, false, nil
	}
	return readCalicoNetConf(k.cfg.Files, net)
}

// runtimeUp reports whether containerd is still running.
func (k *Kubelet) runtimeUp() bool {
	if k.cfg.Services == nil {
		return false
	}
	svc, ok := k.cfg.Services.Service(ContainerdService)
	return ok && svc.Status == winsim.StatusRunning
}

func isContainerdEndpoint(ep string) bool {
	p := strings.ToLower(pipePath(ep))
	return strings.HasPrefix(strings.ToLower(ep), "npipe:") && p == "//./pipe/containerd-containerd"
}

// pipePath is the named pipe of an npipe:// endpoint, as //./pipe/name.
func pipePath(ep string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(ep, "npipe:"), "//")
	p = strings.ReplaceAll(p, `\`, "/")
	return "//" + strings.TrimLeft(p, "/")
}
