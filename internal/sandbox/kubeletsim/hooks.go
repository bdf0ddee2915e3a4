package kubeletsim

import (
	"context"
	"fmt"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// ServiceName is the Windows service the provider runs the kubelet as.
const ServiceName = "kubelet"

// HookOptions configure the kubelet of every simulated host.
type HookOptions struct {
	// Logf receives one line per kubelet start and stop; nil discards them.
	Logf func(string, ...any)
	// Checker is the path of kubeletcheck (Config.Checker), which every
	// kubelet judges its command line and configuration with.
	Checker string
	// Overlay carries pods' connections to other nodes' pods (Config.Overlay).
	Overlay Overlay
	// Dataplanes holds every kubelet's pod network for the overlay's
	// deliveries to Windows pods (Config.Dataplanes).
	Dataplanes *Dataplanes
	// GMSA is the domain the hosts' containers retrieve gMSA passwords
	// from (Config.GMSA); nil: none reachable.
	GMSA GMSADomain
}

// Programs returns the native programs this package provides, for
// winsim.HostConfig.Programs: "kubelet", what the host runs for an executable
// whose content names the kubelet (the sandbox's kubelet.exe), and the node
// agents of AgentPrograms (kube-proxy, flanneld). The host runs
// it with the command line it was given, however it was started (a service,
// nssm's Application, a script), and learns nothing else from the provider.
//
// As kubelet.exe does, it talks to the service control manager only with
// --windows-service (k8s.io/kubernetes cmd/kubelet/app/options/osflags_windows.go
// registers the flag; cmd/kubelet/app/server.go calls
// service.InitServiceWithShutdown when it is set): a kubelet service
// without it never reports Running and the SCM fails the start with error
// 1053. The kubelet logs to stderr (klog's default): on a service without a
// wrapper that output is lost; nssm's AppStderr puts it in a file. Under
// nssm (not started by the SCM itself) --windows-service makes kubelet.exe
// fail: svc.Run cannot connect to the service controller.
func Programs(opts HookOptions) map[string]winsim.Program {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	progs := AgentPrograms(AgentOptions{Logf: opts.Logf}) //nolint:staticcheck // S1016: the two option types share a field today, not a meaning
	progs["kubelet"] = func(ctx context.Context, p *winsim.Process) int {
		h := p.Host
		if p.Service == "" && hasFlag(p.Args, "windows-service") {
			// svc.Run outside the SCM (under nssm, from a console) fails
			// with ERROR_FAILED_SERVICE_CONTROLLER_CONNECT and the kubelet
			// exits (cmd/kubelet/app/server.go initForOS).
			fmt.Fprintf(p.Stderr, "E0000 00:00:00.000000    1 run.go:72] \"command failed\" err=\"failed OS init: The service process could not connect to the service controller.\"\r\n")
			return 1
		}
		if err := forgetHNSAfterBoot(h); err != nil {
			logf("kubeletsim: %s: HNS state: %v", h.ComputerName(), err)
		}
		cfg := HostConfigFor(h)
		cfg.Executable, cfg.Args, cfg.Log, cfg.Checker, cfg.Overlay, cfg.Dataplanes = p.Path, p.Args, p.Stderr, opts.Checker, opts.Overlay, opts.Dataplanes
		cfg.GMSA = opts.GMSA
		k, err := Start(ctx, cfg)
		if err != nil {
			logf("kubeletsim: %s: kubelet failed to start: %v", h.ComputerName(), err)
			return 1 // kubelet.exe exits 1 on a start-up error (klog.ErrorS + os.Exit(1))
		}
		if p.Service != "" && hasFlag(p.Args, "windows-service") {
			p.ServiceRunning()
		}
		logf("kubeletsim: %s: kubelet started for node %s", h.ComputerName(), k.NodeName())
		<-ctx.Done()
		k.Stop()
		logf("kubeletsim: %s: kubelet stopped", h.ComputerName())
		return 0
	}
	return progs
}

// hasFlag reports whether a boolean flag is set on the command line
// (--name, -name, --name=true as pflag accepts them).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.EqualFold(a, name+"=true") {
			return true
		}
	}
	return false
}

// HostConfigFor returns a Config with the host's filesystem, services,
// identity and injected faults; the caller adds the command line and log.
func HostConfigFor(h *winsim.Host) Config {
	hc := h.Config()
	return Config{
		Files:    h,
		Services: h,
		Host: HostInfo{
			ComputerName: hc.ComputerName,
			IP:           hc.IP,
			WindowsBuild: fmt.Sprintf("%s.%d", hc.WindowsBuild, h.UBR()), // with the installed updates
			BIOSUUID:     hc.BIOSUUID,
			NumCPU:       hc.NumCPU,
			MemoryMB:     hc.MemoryMB,
			Disk:         h.Dir(),
		},
		// The host's model times its kubelet too (winsim.HostConfig.Latency).
		Latency:    hc.Latency,
		NeverReady: h.Faults().KubeletNeverReady,
		NotReady:   func() bool { return h.Faults().KubeletNotReady },
		Egress:     func() *winsim.Egress { return h.Faults().Egress },
		RuntimeEnv: func() (map[string]string, bool) { return h.RunningServiceEnv("containerd") },
	}
}
