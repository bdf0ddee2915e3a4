package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Antrea's Windows agent (antrea-io/antrea): the names it gives host state.
const (
	// antreaHNSNetwork and its type: pkg/agent/util/net_windows.go
	// (LocalHNSNetwork, HNSNetworkType).
	antreaHNSNetwork     = "antrea-hnsnetwork"
	antreaHNSNetworkType = "Transparent"
	// antreaDefaultBridge, antreaGateway and antreaTunnel:
	// pkg/config/agent/config.go defaults (ovsBridge br-int, hostGateway
	// antrea-gw0) and pkg/agent/agent.go's defaultTunInterfaceName.
	antreaDefaultBridge = "br-int"
	antreaGateway       = "antrea-gw0"
	antreaTunnel        = "antrea-tun0"
	antreaMACAnnotation = "node.antrea.io/mac-address"
	// antreaTokenDir is where rest.InClusterConfig reads the ServiceAccount
	// token and CA on the host (its /var/run/secrets/kubernetes.io/serviceaccount
	// rooted on the current drive), which the Windows DaemonSet's
	// Install-WindowsCNI.ps1 copies from the container's mount.
	antreaTokenDir = `C:\var\run\secrets\kubernetes.io\serviceaccount`
	// antreaCNIServerFile marks the agent's CNI server as serving: the
	// simulator's stand-in for the agent's CNI socket, which the antrea CNI
	// plugin calls (pkg/cni, pkg/agent/cniserver); removed when the agent
	// exits.
	antreaCNIServerFile = `C:\ProgramData\winsim\antrea-cni-server`
	// ovsRunDir holds the OVS daemons' pidfiles and db.sock
	// (C:\openvswitch\var\run\openvswitch, Run-AntreaOVS.ps1's OVS_RUN_PATH).
	ovsRunDir = `C:\openvswitch\var\run\openvswitch`
)

// antreaUnsupportedGatesOnWindows is pkg/features/antrea_features.go's
// unsupportedFeaturesOnWindows.
var antreaUnsupportedGatesOnWindows = map[string]bool{
	"Egress": true, "AntreaIPAM": true, "BGPPolicy": true, "Multicast": true, "AntreaNodeConfig": true, "SecondaryNetwork": true,
	"ServiceExternalIP": true, "IPsecCertAuth": true, "Multicluster": true, "L7NetworkPolicy": true, "LoadBalancerModeDSR": true,
	"CleanupStaleUDPSvcConntrack": true, "EgressTrafficShaping": true, "EgressSeparateSubnet": true, "NodeNetworkPolicy": true,
	"FlowExporter": true, "NodeLatencyMonitor": true, "PacketCapture": true, "NFTablesHostNetworkMode": true,
}

// antreaAgentConf is what the simulated agent reads of antrea-agent.conf
// (pkg/config/agent/config.go AgentConfig).
type antreaAgentConf struct {
	FeatureGates          map[string]bool `json:"featureGates"`
	OVSBridge             string          `json:"ovsBridge"`
	OVSDatapathType       string          `json:"ovsDatapathType"`
	TrafficEncapMode      string          `json:"trafficEncapMode"`
	TunnelType            string          `json:"tunnelType"`
	TrafficEncryptionMode string          `json:"trafficEncryptionMode"`
	EnableBridgingMode    bool            `json:"enableBridgingMode"`
	SNATFullyRandomPorts  bool            `json:"snatFullyRandomPorts"`
	KubeAPIServerOverride string          `json:"kubeAPIServerOverride"`
	ClientConnection      struct {
		Kubeconfig string `json:"kubeconfig"`
	} `json:"clientConnection"`
	AntreaProxy struct {
		Enable   *bool `json:"enable"`
		ProxyAll bool  `json:"proxyAll"`
	} `json:"antreaProxy"`
}

// checkUnsupportedOnWindows is cmd/antrea-agent/options_windows.go's
// checkUnsupportedFeatures.
func (c *antreaAgentConf) checkUnsupportedOnWindows() error {
	var unsupported []string
	var gates []string
	for f, on := range c.FeatureGates {
		if on && antreaUnsupportedGatesOnWindows[f] {
			gates = append(gates, f)
		}
	}
	sort.Strings(gates)
	unsupported = append(unsupported, gates...)
	if c.OVSDatapathType != "" && c.OVSDatapathType != "system" {
		unsupported = append(unsupported, "OVSDatapathType: "+c.OVSDatapathType)
	}
	if strings.EqualFold(c.TrafficEncapMode, "networkPolicyOnly") {
		unsupported = append(unsupported, "TrafficEncapMode: networkPolicyOnly")
	}
	if c.TunnelType == "gre" {
		unsupported = append(unsupported, "TunnelType: gre")
	}
	if c.TrafficEncryptionMode != "" && !strings.EqualFold(c.TrafficEncryptionMode, "none") {
		unsupported = append(unsupported, "TrafficEncryptionMode: "+strings.ToLower(c.TrafficEncryptionMode))
	}
	if c.EnableBridgingMode {
		unsupported = append(unsupported, "EnableBridgingMode")
	}
	if c.SNATFullyRandomPorts {
		unsupported = append(unsupported, "SNATFullyRandomPorts")
	}
	if unsupported != nil {
		return fmt.Errorf("unsupported features on Windows: {%s}", strings.Join(unsupported, ", "))
	}
	return nil
}

// runAntreaAgent is antrea-agent.exe on a Windows node (cmd/antrea-agent
// main.go, options.go, options_windows.go; pkg/agent/agent.go and
// agent_windows.go for the node's network; pkg/agent/proxy for Services):
// its configuration, its client (in-cluster with kubeAPIServerOverride, as
// the Windows DaemonSet runs it), OVSDB, the Node and its pod CIDR, the
// Transparent HNS network with the OVS extension, the bridge, the routes to
// the other Nodes and AntreaProxy's Service groups. Antrea's controller
// (NetworkPolicies), its own APIs and the agent's API server are not
// modelled: nothing in the sandbox serves them.
func runAntreaAgent(ctx context.Context, p *winsim.Process) int {
	log := newLogger(p.Stderr)
	// klog.Fatalf: the message, then exit code 255.
	fatal := func(file, format string, args ...any) int {
		log.line('F', file, fmt.Sprintf(format, args...))
		return 255
	}
	fs := pflag.NewFlagSet("antrea-agent", pflag.ContinueOnError)
	var errOut strings.Builder
	fs.SetOutput(&errOut)
	configFile := fs.String("config", "", "")
	fs.Int("v", 0, "")
	for _, n := range []string{"logtostderr", "alsologtostderr"} {
		fs.Bool(n, false, "")
	}
	for _, n := range []string{"log_dir", "log_file"} {
		fs.String(n, "", "")
	}
	fs.Uint("log_file_max_size", 0, "")
	fs.Int("log_file_max_num", 0, "")
	if err := fs.Parse(p.Args); err != nil {
		// cobra's wording (cmd/antrea-agent/main.go runs a cobra.Command).
		fmt.Fprintf(p.Stderr, "Error: %v\n", err)
		return 1
	}
	var conf antreaAgentConf
	if *configFile != "" {
		data, err := p.Host.ReadFile(hostPath(*configFile))
		if err != nil {
			return fatal("main.go:61", "Failed to complete: open %s: The system cannot find the path specified.", *configFile)
		}
		if err := yaml.Unmarshal(data, &conf); err != nil {
			return fatal("main.go:61", "Failed to complete: %v", err)
		}
	}
	if conf.OVSBridge == "" {
		conf.OVSBridge = antreaDefaultBridge
	}
	if conf.TrafficEncapMode == "" {
		conf.TrafficEncapMode = "encap"
	}
	if err := conf.checkUnsupportedOnWindows(); err != nil {
		return fatal("main.go:64", "Failed to validate: %v", err)
	}
	noEncap := false
	switch strings.ToLower(conf.TrafficEncapMode) {
	case "encap":
	case "noencap":
		noEncap = true
	default:
		return fatal("main.go:64", "Failed to validate: TrafficEncapMode %s is not modelled by the simulator (encap and noEncap only)", conf.TrafficEncapMode)
	}
	if conf.AntreaProxy.Enable != nil && !*conf.AntreaProxy.Enable {
		return fatal("options_windows.go:75", "AntreaProxy is disabled, Service traffic is unlikely to work as expected (an agent without AntreaProxy is not modelled by the simulator)")
	}
	cfg, err := antreaClientConfig(p, &conf)
	if err != nil {
		return fatal("agent.go:139", "Error running agent: error creating K8s clients: %v", err)
	}
	cfg.UserAgent = "antrea-agent/" + p.Version + " (windows/amd64)"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fatal("agent.go:139", "Error running agent: error creating K8s clients: %v", err)
	}
	// OVSDB: ovsdb-server must serve conf.db, and ovs-vswitchd must run to
	// add the bridge's ports (pkg/ovs/ovsconfig).
	for _, d := range []string{"ovsdb-server", "ovs-vswitchd"} {
		if !p.Host.FileExists(antreaOVSReadyFile(d)) {
			return fatal("agent.go:180", "Error running agent: error connecting OVSDB: %s is not running (no %s)", d, antreaOVSReadyFile(d))
		}
	}
	nodeName := p.Env["NODE_NAME"]
	if nodeName == "" {
		nodeName = p.Host.ComputerName()
	}
	node, err := client.CoreV1().Nodes().Get(ctx, strings.ToLower(nodeName), metav1.GetOptions{})
	if err != nil {
		return fatal("agent.go:280", "Error running agent: error initializing agent: failed to get Node with name %s from K8s: %v", nodeName, err)
	}
	if node.Spec.PodCIDR == "" {
		return fatal("agent.go:280", "Error running agent: error initializing agent: Spec.PodCIDR is empty for Node %s. Please make sure --allocate-node-cidrs "+
			"is enabled for kube-controller-manager and --cluster-cidr specifies a sufficient CIDR range", node.Name)
	}
	nodeIP := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	if nodeIP == "" {
		return fatal("agent.go:280", "Error running agent: error initializing agent: failed to obtain local IP addresses from K8s: no IP with type in [InternalIP ExternalIP] was found")
	}
	// noEncap: the Node's MAC, through nodes/status (agent.go
	// patchNodeAnnotations), for the other Windows Nodes to route by.
	if noEncap {
		mac := "00-50-56-" + strings.ToUpper(stableMACSuffix(nodeIP))
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{antreaMACAnnotation: strings.ReplaceAll(strings.ToLower(mac), "-", ":")}}})
		if _, err := client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fatal("agent.go:280", "Error running agent: error initializing agent: failed to patch Node annotation: %v", err)
		}
	}
	// prepareHNSNetworkAndOVSExtension: an existing antrea-hnsnetwork is
	// kept; else a Transparent one on the uplink with the pod CIDR; then the
	// OVS extension is enabled on it.
	// The extension is enabled through the Hyper-V module's cmdlets
	// (pkg/agent/util/winnet/net_windows.go: Get-VMSwitch ... |
	// Enable-VMSwitchExtension), which a host without the Hyper-V
	// PowerShell module does not know.
	if !p.Host.FeatureInstalled("Hyper-V-PowerShell") {
		return fatal("agent.go:280", "Error running agent: error initializing agent: failed to enable OVS Extension on HNS network %s: "+
			"The term 'Get-VMSwitch' is not recognized as the name of a cmdlet, function, script file, or operable program. "+
			"(the Hyper-V PowerShell module, Windows feature Hyper-V-PowerShell, is not installed)", antreaHNSNetwork)
	}
	ovs := winsim.ReadOVS(p.Host)
	if !ovs.ExtensionInstalled {
		return fatal("agent.go:280", "Error running agent: error initializing agent: failed to enable OVS Extension on HNS network %s: "+
			"the Open vSwitch Extension is not installed on the host (install the OVS driver: Install-OVS.ps1)", antreaHNSNetwork)
	}
	if existing, ok := hnsNetworkByName(p.Host, antreaHNSNetwork); !ok || existing.AddressPrefix != node.Spec.PodCIDR {
		log.Info("net_windows.go:239", "Creating HNSNetwork", "name", antreaHNSNetwork, "subnet", node.Spec.PodCIDR, "nodeIP", nodeIP)
		if err := putHNSNetwork(p.Host, hnsNetwork{Name: antreaHNSNetwork, Type: antreaHNSNetworkType, AddressPrefix: node.Spec.PodCIDR}); err != nil {
			return fatal("agent.go:280", "Error running agent: error initializing agent: error creating HNSNetwork: %v", err)
		}
	}
	ports := []string{conf.OVSBridge, "uplink", antreaGateway}
	if !noEncap {
		ports = append(ports, antreaTunnel)
	}
	if err := winsim.UpdateOVS(p.Host, func(s *winsim.OVSState) error {
		s.ExtensionEnabledOn = antreaHNSNetwork
		if s.Bridges == nil {
			s.Bridges = map[string][]string{}
		}
		s.Bridges[conf.OVSBridge] = ports
		return nil
	}); err != nil {
		return fatal("agent.go:280", "Error running agent: error initializing agent: %v", err)
	}
	log.Info("agent_windows.go:300", "Allocated OpenFlow port for uplink interface", "bridge", conf.OVSBridge)

	// AntreaProxy and the node route controller: Services, EndpointSlices
	// and Nodes, listed and watched.
	pc := &proxyCache{services: map[string]*corev1.Service{}, slices: map[string]*discoveryv1.EndpointSlice{}}
	routes := &antreaRoutes{self: node.Name, noEncap: noEncap, nodes: map[string]*corev1.Node{}}
	watches, err := antreaInformers(ctx, client, pc, routes)
	if err != nil {
		log.Error("reflector.go:205", err, "Failed to watch")
		return 1
	}
	// Services are synced by pc.follow's goroutine, routes by routes.follow's:
	// each writes its own part of the OVS state.
	syncServices := func() {
		rules, refused := proxyRules(node.Name, pc.services, pc.slices, "", false)
		for key, why := range refused {
			log.Info("proxier.go:1000", "Service not installed: "+why, "service", key)
		}
		var groups []winsim.OVSServiceGroup
		for _, specs := range rules {
			for _, lb := range specs {
				if lb.VIP == "" && !conf.AntreaProxy.ProxyAll {
					continue // NodePort: AntreaProxy serves it with proxyAll only
				}
				g := winsim.OVSServiceGroup{VIP: lb.VIP, Protocol: lb.Protocol, Port: lb.ExternalPort}
				for _, b := range lb.Backends {
					g.Endpoints = append(g.Endpoints, fmt.Sprintf("%s:%d", b.IP, b.Port))
				}
				groups = append(groups, g)
			}
		}
		sort.Slice(groups, func(i, j int) bool {
			return fmt.Sprint(groups[i].VIP, groups[i].Port, groups[i].Protocol) < fmt.Sprint(groups[j].VIP, groups[j].Port, groups[j].Protocol)
		})
		_ = winsim.UpdateOVS(p.Host, func(s *winsim.OVSState) error {
			s.ServiceGroups = groups
			return nil
		})
	}
	syncRoutes := func() {
		table := routes.table(log)
		_ = winsim.UpdateOVS(p.Host, func(s *winsim.OVSState) error {
			s.Routes = table
			return nil
		})
	}
	syncServices()
	syncRoutes()
	if err := p.Host.WriteFile(antreaCNIServerFile, []byte(node.Name)); err != nil {
		return fatal("agent.go:400", "Error running agent: starting the CNI server: %v", err)
	}
	defer func() { _ = p.Host.RemoveFile(antreaCNIServerFile) }()
	log.Info("server.go:700", "Started CNI server")
	log.Info("agent.go:420", "Antrea agent started")
	markReady(p)
	go drain(ctx, watches[3:])
	go routes.follow(ctx, watches[2], syncRoutes)
	pc.follow(ctx, watches[0], watches[1], syncServices)
	<-ctx.Done()
	return 0
}

// antreaClientConfig is pkg/util/k8s CreateRestConfig: the kubeconfig of
// clientConnection, else in-cluster configuration (the token and CA under
// /var/run/secrets/kubernetes.io/serviceaccount), the host replaced by
// kubeAPIServerOverride (main.go's OverrideKubeAPIServer sets
// KUBERNETES_SERVICE_HOST/PORT from it first, so InClusterConfig works
// without the kubelet's service environment).
func antreaClientConfig(p *winsim.Process, conf *antreaAgentConf) (*rest.Config, error) {
	var cfg *rest.Config
	if conf.ClientConnection.Kubeconfig != "" {
		c, _, err := loadKubeconfig(p.Host, hostPath(conf.ClientConnection.Kubeconfig))
		if err != nil {
			return nil, err
		}
		cfg = c
	} else {
		if conf.KubeAPIServerOverride == "" && (p.Env["KUBERNETES_SERVICE_HOST"] == "" || p.Env["KUBERNETES_SERVICE_PORT"] == "") {
			return nil, errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")
		}
		token, err := p.Host.ReadFile(antreaTokenDir + `\token`)
		if err != nil {
			return nil, errors.New("open /var/run/secrets/kubernetes.io/serviceaccount/token: The system cannot find the path specified.")
		}
		ca, err := p.Host.ReadFile(antreaTokenDir + `\ca.crt`)
		if err != nil {
			return nil, errors.New("open /var/run/secrets/kubernetes.io/serviceaccount/ca.crt: The system cannot find the path specified.")
		}
		host := "https://" + net.JoinHostPort(p.Env["KUBERNETES_SERVICE_HOST"], p.Env["KUBERNETES_SERVICE_PORT"])
		cfg = &rest.Config{Host: host, BearerToken: strings.TrimSpace(string(token)), TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	}
	if o := conf.KubeAPIServerOverride; o != "" {
		if !strings.Contains(o, "://") {
			o = "https://" + o
		}
		cfg.Host = o
	}
	return cfg, nil
}

// stableMACSuffix is the last three octets of a MAC derived from an address.
func stableMACSuffix(ip string) string {
	parsed := net.ParseIP(ip).To4()
	if parsed == nil {
		return "00-00-01"
	}
	return fmt.Sprintf("%02x-%02x-%02x", parsed[1], parsed[2], parsed[3])
}

// antreaRoutes is the node route controller
// (pkg/agent/controller/noderoute): a route to every other Node's pod CIDR,
// through the tunnel in encap; in noEncap straight to the Node, which on
// Windows needs its node.antrea.io/mac-address annotation (getNodeMAC): a
// Node without it gets no route.
type antreaRoutes struct {
	self    string
	noEncap bool
	mu      sync.Mutex
	nodes   map[string]*corev1.Node
}

func (r *antreaRoutes) table(log *logger) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for name, n := range r.nodes {
		if name == r.self || n.Spec.PodCIDR == "" {
			continue
		}
		switch {
		case !r.noEncap:
			out[n.Spec.PodCIDR] = antreaTunnel
		case n.Annotations[antreaMACAnnotation] != "":
			out[n.Spec.PodCIDR] = n.Annotations[antreaMACAnnotation]
		default:
			log.Info("node_route_controller.go:700", "Skip adding route for Node without MAC annotation in noEncap mode", "node", name)
		}
	}
	return out
}

func (r *antreaRoutes) follow(ctx context.Context, w watch.Interface, sync func()) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			n, isNode := ev.Object.(*corev1.Node)
			if !isNode {
				continue
			}
			r.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(r.nodes, n.Name)
			} else {
				r.nodes[n.Name] = n
			}
			r.mu.Unlock()
			sync()
		}
	}
}

// antreaInformers lists and watches what antrea-agent's informers do for
// the modelled controllers: Services (without service-proxy-name:
// AntreaProxy's default serviceProxyName ""), EndpointSlices, Nodes and
// Pods of this Node (the CNI server's pod informer).
func antreaInformers(ctx context.Context, c kubernetes.Interface, pc *proxyCache, routes *antreaRoutes) ([]watch.Interface, error) {
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
	}, svc.Watch, metav1.ListOptions{LabelSelector: "!service.kubernetes.io/service-proxy-name"}); err != nil {
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
	}, eps.Watch, metav1.ListOptions{}); err != nil {
		return nil, err
	}
	nodes := c.CoreV1().Nodes()
	if err := add("*v1.Node", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := nodes.List(ctx, o)
		if err != nil {
			return "", err
		}
		routes.mu.Lock()
		for i := range l.Items {
			routes.nodes[l.Items[i].Name] = &l.Items[i]
		}
		routes.mu.Unlock()
		return l.ResourceVersion, nil
	}, nodes.Watch, metav1.ListOptions{}); err != nil {
		return nil, err
	}
	pods := c.CoreV1().Pods(metav1.NamespaceAll)
	if err := add("*v1.Pod", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := pods.List(ctx, o)
		if err != nil {
			return "", err
		}
		return l.ResourceVersion, nil
	}, pods.Watch, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", routes.self).String()}); err != nil {
		return nil, err
	}
	return in.ws, nil
}

// antreaOVSReadyFile is what of an OVS daemon the agent needs: ovsdb-server's
// db.sock (the agent's OVSDB connection, pkg/ovs/ovsconfig), ovs-vswitchd's
// pidfile (it runs the datapath the bridge's ports need).
func antreaOVSReadyFile(daemon string) string {
	if daemon == "ovsdb-server" {
		return ovsDBSock
	}
	return ovsRunDir + `\` + daemon + ".pid"
}

// antrea: Antrea's Windows agent and the OVS daemons it needs, run from the
// antrea-windows image by the mode's DaemonSet; its CNI configuration
// names the antrea plugin with host-local IPAM (antrea-cni.conflist).
func init() {
	for name, run := range map[string]func(context.Context, *winsim.Process) int{
		"antrea-agent": runAntreaAgent, "ovsdb-server": runOVSDBServer, "ovs-vswitchd": runOVSVswitchd,
		"ovsdb-tool": runOVSDBTool, "ovs-vsctl": runOVSVsctl,
	} {
		registerAgent(name, run)
	}
	registerMode("antrea", simMode{Agents: []string{"antrea-agent", "ovsdb-server", "ovs-vswitchd", "ovsdb-tool", "ovs-vsctl"}, CNIPlugins: []string{"antrea", "host-local"}})
}
