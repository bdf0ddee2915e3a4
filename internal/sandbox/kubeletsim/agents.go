package kubeletsim

import (
	"context"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// AgentOptions configure the node agents' programs.
type AgentOptions struct {
	// Logf receives one line per agent start and exit; nil discards them.
	Logf func(string, ...any)
}

// AgentPrograms are the node agents a simulated host can run, by the program
// identity of their executables ("kube-proxy vX", "flanneld vX"): pass them
// in winsim.HostConfig.Programs. Each parses its command line as the real
// agent does, builds its client from exactly the kubeconfig and files the
// host holds, and makes the real agent's start-up API calls against the
// real API server; a refusal ends the process with exit code 1 and the
// error on its stderr.
func AgentPrograms(opts AgentOptions) map[string]winsim.Program {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	wrap := func(name string, run func(ctx context.Context, p *winsim.Process) int) winsim.Program {
		return func(ctx context.Context, p *winsim.Process) int {
			logf("kubeletsim: %s: %s %s started", p.Host.ComputerName(), name, p.Version)
			code := run(ctx, p)
			logf("kubeletsim: %s: %s exited with code %d", p.Host.ComputerName(), name, code)
			return code
		}
	}
	progs := map[string]winsim.Program{}
	for name, run := range agentRuns { // registered by each mode's file (modes.go)
		progs[name] = wrap(name, run)
	}
	return progs
}

// Readiness of agent containers: the kubelet registers each HostProcess
// container here by its sandbox mount point; an agent calls markReady once
// its start is complete (informers synced, subnet lease acquired). The
// agent is often not the container's own process but a child of its start
// script (powershell.exe runs kube-proxy.exe): every process of the
// container inherits CONTAINER_SANDBOX_MOUNT_POINT, which names the
// container, as the container's job object does on Windows. Processes
// outside containers (services) have none and are not registered.
var (
	readyMu    sync.Mutex
	readyHooks = map[string]func(){}
)

const sandboxMountEnv = "CONTAINER_SANDBOX_MOUNT_POINT"

func containerOf(p *winsim.Process) string {
	for k, v := range p.Env {
		if strings.EqualFold(k, sandboxMountEnv) {
			return strings.ToLower(v)
		}
	}
	return ""
}

func onReady(p *winsim.Process, fn func()) func() {
	key := containerOf(p)
	if key == "" {
		return func() {}
	}
	readyMu.Lock()
	readyHooks[key] = fn
	readyMu.Unlock()
	return func() {
		readyMu.Lock()
		delete(readyHooks, key)
		readyMu.Unlock()
	}
}

func markReady(p *winsim.Process) {
	key := containerOf(p)
	if key == "" {
		return
	}
	readyMu.Lock()
	fn := readyHooks[key]
	readyMu.Unlock()
	if fn != nil {
		fn()
	}
}

// agentClient builds an agent's client from a kubeconfig on the host: the
// credentials are exactly what the files say (token, tokenFile, client
// certificate, CA).
func agentClient(p *winsim.Process, kubeconfig, userAgent string) (kubernetes.Interface, error) {
	cfg, _, err := loadKubeconfig(p.Host, hostPath(kubeconfig))
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = userAgent
	return kubernetes.NewForConfig(cfg)
}

// hostPath turns a path as a Windows program receives it (forward slashes,
// rooted without a drive) into the host's C:\ form.
func hostPath(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	if strings.HasPrefix(p, `\`) && !strings.HasPrefix(p, `\\`) {
		p = "C:" + p
	}
	return p
}

// listAndWatch is one reflector's start: a real list, then a real watch
// from its resourceVersion. The list error is returned as the reflector
// words it ("failed to list *v1.Node: ...").
func listAndWatch(ctx context.Context, typ string, list func(context.Context, metav1.ListOptions) (string, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), opts metav1.ListOptions) (watch.Interface, error) {
	rv, err := list(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("failed to list %s: %w", typ, err)
	}
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	w, err := watchFn(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("failed to watch %s: %w", typ, err)
	}
	return w, nil
}

// informers are an agent's reflectors started one by one: add lists and
// watches one type, and on a failure stops those already started, as an
// agent whose informers cannot sync exits with none left behind.
type informers struct{ ws []watch.Interface }

func (in *informers) add(ctx context.Context, typ string, list func(context.Context, metav1.ListOptions) (string, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), opts metav1.ListOptions) error {
	w, err := listAndWatch(ctx, typ, list, watchFn, opts)
	if err != nil {
		for _, started := range in.ws {
			started.Stop()
		}
		in.ws = nil
		return err
	}
	in.ws = append(in.ws, w)
	return nil
}

// drain keeps watches open until ctx ends, as informers do.
func drain(ctx context.Context, ws []watch.Interface) {
	for _, w := range ws {
		go func(w watch.Interface) {
			for {
				select {
				case <-ctx.Done():
					w.Stop()
					return
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
				}
			}
		}(w)
	}
	<-ctx.Done()
}

// HNS networks are host state that the flannel agent creates and kube-proxy
// looks up (Get-HnsNetwork): winsim keeps HNS's state (winsim/hns.go).
type hnsNetwork = winsim.HNSNetwork

func readHNS(files FileSystem) []hnsNetwork { return winsim.HNSNetworks(files) }

func hnsNetworkByName(files FileSystem, name string) (hnsNetwork, bool) {
	for _, n := range readHNS(files) {
		if strings.EqualFold(n.Name, name) {
			return n, true
		}
	}
	return hnsNetwork{}, false
}

func putHNSNetwork(files FileSystem, n hnsNetwork) error { return winsim.PutHNSNetwork(files, n) }

// hnsBootFile records which boot of the host the HNS state on its disk
// belongs to (winsim.Host.BootID).
const hnsBootFile = `C:\ProgramData\winsim\hns-boot`

// forgetHNSAfterBoot is HNS at a boot: the networks flannel creates are
// non-persistent (hcn.EnableNonPersistent, flannel's
// pkg/backend/vxlan/device_windows.go), kept by HNS in memory, so a new boot
// starts without them or their load balancers. Only with the host's
// Faults.HNSLostOnReboot does the simulator model that loss (the state stays
// on its disk otherwise). The kubelet calls it as it starts, before any
// agent it runs can read or create HNS state; a start within the same boot
// (a service restart) keeps it.
func forgetHNSAfterBoot(h *winsim.Host) error {
	boot := h.BootID()
	prev, _ := h.ReadFile(hnsBootFile)
	if string(prev) == boot {
		return nil
	}
	if h.Faults().HNSLostOnReboot {
		if err := winsim.ForgetHNS(h); err != nil {
			return err
		}
	}
	return h.WriteFile(hnsBootFile, []byte(boot))
}
