package kubeletsim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

// ServiceName is the Windows service whose start runs the simulated kubelet.
const ServiceName = "kubelet"

// LogFile is the kubelet's log in the guest (bootstrap.KubeletLogFile); on
// disk it is Host.DiskPath(LogFile).
const LogFile = bootstrap.KubeletLogFile

// HookOptions configure the kubelet of every simulated host.
type HookOptions struct {
	// Logf receives one line per kubelet start and stop; nil discards them.
	Logf func(string, ...any)
}

// ServiceHooks returns functions for winsim.HostConfig.OnServiceStart and
// OnServiceStop: starting the service named "kubelet" starts a simulated
// kubelet for that host, with the service's command line; stopping it (or
// the host going down, which stops every service) stops the kubelet.
func ServiceHooks(opts HookOptions) (onStart func(ctx context.Context, h *winsim.Host, svc winsim.Service) error, onStop func(h *winsim.Host, svc winsim.Service)) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var (
		mu      sync.Mutex
		running = map[*winsim.Host]*hookedKubelet{}
	)
	stop := func(h *winsim.Host) {
		mu.Lock()
		hk := running[h]
		delete(running, h)
		mu.Unlock()
		if hk != nil {
			hk.k.Stop()
			hk.logFile.Close()
			logf("kubeletsim: %s: kubelet stopped", h.ComputerName())
		}
	}
	onStart = func(ctx context.Context, h *winsim.Host, svc winsim.Service) error {
		if !strings.EqualFold(svc.Name, ServiceName) {
			return nil
		}
		stop(h) // a kubelet left over from an earlier start
		exe, args := SplitCommandLine(svc.BinaryPathName)
		// The log lives in the guest's filesystem, where windows_node reads
		// it over the transport when a node never becomes Ready.
		logPath := h.DiskPath(bootstrap.KubeletLogFile)
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return fmt.Errorf("creating the kubelet log directory: %w", err)
		}
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("opening the kubelet log: %w", err)
		}
		cfg := HostConfigFor(h)
		cfg.Executable, cfg.Args, cfg.Log = exe, args, f
		k, err := Start(ctx, cfg)
		if err != nil {
			f.Close()
			logf("kubeletsim: %s: kubelet failed to start: %v", h.ComputerName(), err)
			// What Start-Service reports for a service process that exits at once.
			return fmt.Errorf("Cannot start service %s on computer '.'.", svc.Name)
		}
		mu.Lock()
		running[h] = &hookedKubelet{k: k, logFile: f}
		mu.Unlock()
		logf("kubeletsim: %s: kubelet started for node %s", h.ComputerName(), k.NodeName())
		return nil
	}
	onStop = func(h *winsim.Host, svc winsim.Service) {
		if strings.EqualFold(svc.Name, ServiceName) {
			stop(h)
		}
	}
	return onStart, onStop
}

type hookedKubelet struct {
	k       *Kubelet
	logFile io.Closer
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
			WindowsBuild: fmt.Sprintf("%s.%d", hc.WindowsBuild, hc.UBR),
			BIOSUUID:     hc.BIOSUUID,
			NumCPU:       hc.NumCPU,
			MemoryMB:     hc.MemoryMB,
		},
		NeverReady: h.Faults().KubeletNeverReady,
	}
}
