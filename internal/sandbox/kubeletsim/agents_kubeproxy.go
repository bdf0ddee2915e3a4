package kubeletsim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// kubeProxyFlags are kube-proxy v1.36's flags on Windows: cmd/kube-proxy/app
// options.go (Options.AddFlags, with logsapi.AddFlags' -v/--vmodule/
// --logging-format) and init_windows.go (addOSFlags: --windows-service,
// --source-vip, --network-name, --enable-dsr, --root-hnsendpoint-name,
// --forward-healthcheck-vip). Hand-kept names and kinds (bool or valued);
// the simulator reads the ones marked in runKubeProxy.
var kubeProxyBoolFlags = []string{"cleanup", "bind-address-hard-fail", "profiling", "init-only", "masquerade-all",
	"ipvs-strict-arp", "conntrack-tcp-be-liberal", "windows-service", "enable-dsr", "forward-healthcheck-vip",
	"iptables-localhost-nodeports"}

var kubeProxyValueFlags = []string{"config", "write-config-to", "feature-gates", "kubeconfig", "master", "kube-api-content-type",
	"kube-api-qps", "kube-api-burst", "hostname-override", "bind-address", "healthz-bind-address", "metrics-bind-address",
	"show-hidden-metrics-for-version", "proxy-mode", "iptables-masquerade-bit", "iptables-sync-period", "iptables-min-sync-period",
	"ipvs-sync-period", "ipvs-min-sync-period", "ipvs-scheduler", "ipvs-exclude-cidrs", "ipvs-tcp-timeout",
	"ipvs-tcpfin-timeout", "ipvs-udp-timeout", "detect-local-mode", "pod-bridge-interface", "pod-interface-name-prefix",
	"cluster-cidr", "nodeport-addresses", "oom-score-adj", "conntrack-max-per-core", "conntrack-min",
	"conntrack-tcp-timeout-established", "conntrack-tcp-timeout-close-wait", "conntrack-udp-timeout",
	"conntrack-udp-timeout-stream", "config-sync-period", "healthz-port", "metrics-port", "source-vip", "network-name",
	"root-hnsendpoint-name", "vmodule", "logging-format", "log-flush-frequency", "log-text-info-buffer-size",
	"log-text-split-stream", "log-json-info-buffer-size", "log-json-split-stream"}

// kubeProxyConfig is the part of a KubeProxyConfiguration
// (kubeproxy.config.k8s.io/v1alpha1) the simulator acts on.
type kubeProxyConfig struct {
	ClientConnection struct {
		Kubeconfig string `json:"kubeconfig"`
	} `json:"clientConnection"`
	HostnameOverride string          `json:"hostnameOverride"`
	ClusterCIDR      string          `json:"clusterCIDR"`
	Mode             string          `json:"mode"`
	FeatureGates     map[string]bool `json:"featureGates"`
	Winkernel        struct {
		NetworkName string `json:"networkName"`
		SourceVip   string `json:"sourceVip"`
	} `json:"winkernel"`
}

// runKubeProxy is kube-proxy.exe: cmd/kube-proxy/app/server.go
// (NewProxyServer, ProxyServer.Run) with the winkernel proxier
// (pkg/proxy/winkernel/proxier.go NewProxier).
func runKubeProxy(ctx context.Context, p *winsim.Process) int {
	log := newLogger(p.Stderr)
	ctx, stopped := runningKubeProxy(ctx, p.Host)
	defer func() {
		if stopped() {
			log.Error("server.go:529", errKubeProxyStopped, "Error running ProxyServer")
		}
	}()
	if stopped() {
		return 1
	}
	fs := pflag.NewFlagSet("kube-proxy", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	vals := map[string]*string{}
	bools := map[string]*bool{}
	for _, n := range kubeProxyValueFlags {
		vals[n] = fs.String(n, "", "")
	}
	for _, n := range kubeProxyBoolFlags {
		bools[n] = fs.Bool(n, false, "")
	}
	fs.StringP("v", "v", "0", "")
	if err := fs.Parse(p.Args); err != nil {
		// cobra: "Error: <err>" and the usage, exit 1.
		fmt.Fprintf(p.Stderr, "Error: %v\n", err)
		return 1
	}
	var cfg kubeProxyConfig
	if path := *vals["config"]; path != "" {
		data, err := p.Host.ReadFile(hostPath(path))
		if err != nil {
			log.Error("server.go:529", fmt.Errorf("failed to read config file %q: open %s: The system cannot find the file specified.", path, path), "Error running ProxyServer")
			return 1
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			log.Error("server.go:529", fmt.Errorf("failed to decode config file %q: %w", path, err), "Error running ProxyServer")
			return 1
		}
	}
	// Flags given on the command line win (Options.processV1Alpha1Flags /
	// the flag-over-config merge in options.go).
	pick := func(flag, fromFile string) string {
		if fs.Changed(flag) {
			return *vals[flag]
		}
		return fromFile
	}
	kubeconfig := pick("kubeconfig", cfg.ClientConnection.Kubeconfig)
	hostname := strings.ToLower(strings.TrimSpace(pick("hostname-override", cfg.HostnameOverride)))
	if hostname == "" {
		hostname = strings.ToLower(p.Host.ComputerName())
	}
	mode := pick("proxy-mode", cfg.Mode)
	networkName := pick("network-name", cfg.Winkernel.NetworkName)
	sourceVip := pick("source-vip", cfg.Winkernel.SourceVip)
	if mode != "" && mode != "kernelspace" {
		log.Error("server.go:529", fmt.Errorf("invalid configuration: mode: Invalid value: %q: must be kernelspace on Windows", mode), "Error running ProxyServer")
		return 1
	}
	if kubeconfig == "" && *vals["master"] == "" {
		log.Error("server.go:529", fmt.Errorf("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"), "Error running ProxyServer")
		return 1
	}
	client, err := agentClient(p, kubeconfig, "kube-proxy/"+p.Version+" (windows/amd64) kubernetes/simulated")
	if err != nil {
		log.Error("server.go:529", err, "Error running ProxyServer")
		return 1
	}
	log.Info("server_windows.go:81", "Using kernelspace Proxier.")
	// NewProxyServer: the node's IPs and pod CIDR come from its Node.
	node, err := client.CoreV1().Nodes().Get(ctx, hostname, metav1.GetOptions{})
	if err != nil {
		log.Error("server.go:529", fmt.Errorf("failed to retrieve node info: %w", err), "Error running ProxyServer")
		return 1
	}
	// winkernel NewProxier: the HNS network (--network-name or
	// KUBE_NETWORK); getNetworkInfo retries every second until it exists.
	if networkName == "" {
		networkName = p.Env["KUBE_NETWORK"]
	}
	if networkName == "" {
		log.Error("server.go:529", fmt.Errorf("Environment variable KUBE_NETWORK and network-flag not initialized"), "Error running ProxyServer")
		return 1
	}
	var hns hnsNetwork
	for {
		var ok bool
		if hns, ok = hnsNetworkByName(p.Host, networkName); ok {
			break
		}
		log.Error("proxier.go:231", fmt.Errorf("Network %s not found", networkName), "Unable to find HNS Network specified, please check network name and CNI deployment", "hnsNetworkName", networkName)
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(time.Second):
		}
	}
	if strings.EqualFold(hns.Type, "Overlay") && sourceVip == "" {
		log.Error("server.go:529", fmt.Errorf("source-vip flag not set"), "Error running ProxyServer")
		return 1
	}
	log.Info("proxier.go:730", "Hns Network loaded", "hnsNetworkInfo", hns.Name, "type", hns.Type)

	// ProxyServer.Run: Services (no proxy-name label, not headless),
	// EndpointSlices (not headless), ServiceCIDRs (MultiCIDRServiceAllocator,
	// GA), and its own Node; a refusal is the end of it here.
	pc := &proxyCache{services: map[string]*corev1.Service{}, slices: map[string]*discoveryv1.EndpointSlice{}}
	watches, err := kubeProxyInformers(ctx, client, hostname, pc)
	if err != nil {
		log.Error("reflector.go:205", err, "Failed to watch")
		return 1
	}
	// birthCry: the "Starting" event on the node.
	_, _ = client.EventsV1().Events(metav1.NamespaceDefault).Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{GenerateName: hostname + "."},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "kube-proxy", ReportingInstance: "kube-proxy-" + hostname,
		Action: "StartKubeProxy", Reason: "Starting", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Node", Name: hostname, UID: node.UID},
	}, metav1.CreateOptions{})
	log.Info("shared_informer.go:350", "Caches are synced", "controller", "service config")
	log.Info("shared_informer.go:350", "Caches are synced", "controller", "endpoint slice config")
	nodeIP := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	// NewProxier: "Cleaning up old HNS policy lists" (deleteAllHnsLoadBalancerPolicy):
	// a restarted kube-proxy programs every Service again.
	if err := winsim.DeleteHNSLoadBalancers(p.Host); err != nil {
		log.Error("proxier.go:700", err, "Cleaning up old HNS policy lists failed")
	}
	px := &hnsProxier{files: p.Host, network: hns.Name, sourceVIP: sourceVip, nodeIP: nodeIP, log: log, applied: map[string]appliedPolicy{}}
	sync := func() {
		px.sync(proxyRules(hostname, pc.services, pc.slices, sourceVip, *bools["enable-dsr"]))
	}
	sync()
	log.Info("proxier.go:1128", "syncProxyRules complete", "loadBalancers", len(ReadLoadBalancers(p.Host)))
	markReady(p)
	if *bools["windows-service"] {
		p.ServiceRunning()
	}
	go drain(ctx, watches[2:])
	pc.follow(ctx, watches[0], watches[1], sync)
	<-ctx.Done()
	if stopped() {
		return 1
	}
	return 0
}

// proxyCache is kube-proxy's service and endpoint-slice caches
// (pkg/proxy/config ServiceConfig, EndpointSliceConfig): seeded by the list,
// kept by the watch; every change runs a sync.
type proxyCache struct {
	services map[string]*corev1.Service
	slices   map[string]*discoveryv1.EndpointSlice
}

func (pc *proxyCache) follow(ctx context.Context, svcs, slices watch.Interface, sync func()) {
	defer svcs.Stop()
	defer slices.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-svcs.ResultChan():
		case ev, ok = <-slices.ResultChan():
		}
		if !ok {
			return
		}
		switch o := ev.Object.(type) {
		case *corev1.Service:
			if ev.Type == watch.Deleted {
				delete(pc.services, o.Namespace+"/"+o.Name)
			} else if ev.Type != watch.Bookmark {
				pc.services[o.Namespace+"/"+o.Name] = o
			}
		case *discoveryv1.EndpointSlice:
			if ev.Type == watch.Deleted {
				delete(pc.slices, o.Namespace+"/"+o.Name)
			} else if ev.Type != watch.Bookmark {
				pc.slices[o.Namespace+"/"+o.Name] = o
			}
		default:
			continue
		}
		sync()
	}
}

func kubeProxyInformers(ctx context.Context, c kubernetes.Interface, hostname string, pc *proxyCache) ([]watch.Interface, error) {
	var in informers
	add := func(typ string, list func(context.Context, metav1.ListOptions) (string, error), w func(context.Context, metav1.ListOptions) (watch.Interface, error), o metav1.ListOptions) error {
		return in.add(ctx, typ, list, w, o)
	}
	svc := c.CoreV1().Services(metav1.NamespaceAll)
	if err := add("*v1.Service", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := svc.List(ctx, o)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			pc.services[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
		}
		return l.ResourceVersion, nil
	}, svc.Watch, metav1.ListOptions{LabelSelector: "!service.kubernetes.io/service-proxy-name",
		FieldSelector: fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone).String()}); err != nil {
		return nil, err
	}
	eps := c.DiscoveryV1().EndpointSlices(metav1.NamespaceAll)
	if err := add("*v1.EndpointSlice", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := eps.List(ctx, o)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			pc.slices[l.Items[i].Namespace+"/"+l.Items[i].Name] = &l.Items[i]
		}
		return l.ResourceVersion, nil
	}, eps.Watch, metav1.ListOptions{LabelSelector: "!service.kubernetes.io/headless"}); err != nil {
		return nil, err
	}
	cidrs := c.NetworkingV1().ServiceCIDRs()
	if err := add("*v1.ServiceCIDR", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := cidrs.List(ctx, o)
		if err != nil {
			return "", err
		}
		return l.ResourceVersion, nil
	}, cidrs.Watch, metav1.ListOptions{}); err != nil {
		return nil, err
	}
	nodes := c.CoreV1().Nodes()
	if err := add("*v1.Node", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := nodes.List(ctx, o)
		if err != nil {
			return "", err
		}
		return l.ResourceVersion, nil
	}, nodes.Watch, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", hostname).String()}); err != nil {
		return nil, err
	}
	return in.ws, nil
}
