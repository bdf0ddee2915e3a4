package networking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
)

// flannel: flannel's VXLAN overlay (VNI 4096, port 4789), joining the
// cluster's own flannel. kube-proxy (winkernel, overlay) and flanneld run
// as HostProcess DaemonSets with ServiceAccounts of their own; the join
// writes the node's CNI configuration.
type flannel struct{}

func init() { Register(flannel{}) }

// Paths of the flannel mode on the Windows host.
const (
	// FlanneldExe is flanneld, installed by the golden image (flanneld_url).
	FlanneldExe = `C:\k\flanneld.exe`
	// FlannelCNIPluginExe is flannel's CNI plugin, installed by the golden
	// image (flannel_cni_plugin_url) under the name the CNI configuration's
	// "type": "flannel" runs.
	FlannelCNIPluginExe = CNIBinDir + `\flannel.exe`
	// flannelCNIConf is the node's CNI configuration list, written by the join.
	flannelCNIConf = CNIConfDir + `\10-flannel.conflist`
	// FlannelNetworkName is the HNS network flannel's VXLAN backend creates
	// on Windows ("flannel.<VNI>"), which kube-proxy's winkernel proxier and
	// the CNI configuration name.
	FlannelNetworkName = "flannel.4096"
)

// Names of the flannel mode's objects.
const (
	KubeProxyWindows = "kube-proxy-windows"
	FlannelWindows   = "kube-flannel-windows"
	FlannelWindowsDS = "kube-flannel-ds-windows"
	// Cluster-wide names carry the namespace: one networking per cluster is
	// the design, but two (a test, a migration) must not take over each
	// other's bindings.
	kubeProxyBinding       = "windows-node-networking:%s:kube-proxy-windows"
	flannelClusterRoleName = "windows-node-networking:%s:flannel-windows"
	// nodeProxierRole is the role kubeadm binds its Linux kube-proxy to
	// (ClusterRoleBinding kubeadm:node-proxier): list/watch endpointslices,
	// services and nodes, create events.
	nodeProxierRole = "system:node-proxier"
)

// KubeProxyBindingName is the ClusterRoleBinding of kube-proxy-windows in a
// namespace.
func KubeProxyBindingName(namespace string) string { return fmt.Sprintf(kubeProxyBinding, namespace) }

func (flannel) Name() string { return "flannel" }

func (flannel) Agents() []Agent {
	return []Agent{
		{Name: "kube-proxy", DaemonSet: KubeProxyWindows, Selector: agentSelector(KubeProxyWindows)},
		{Name: "flannel", DaemonSet: FlannelWindowsDS, Selector: agentSelector(FlannelWindowsDS)},
	}
}

func (flannel) NeedsClusterCIDR() bool { return true }

func (flannel) Plugin() string { return PluginFlannel }

// HostDirs: the agents' kubeconfigs (their start scripts copy them out of
// the container's mount), flanneld's net-conf.json and subnet.env, and
// kube-proxy's source VIP file (internal/networking/templates).
func (flannel) HostDirs() []string {
	return []string{`C:\var\lib\kube-proxy-windows`, `C:\var\lib\kube-flannel-windows`, `C:\etc\kube-flannel`, `C:\run\flannel`, `C:\sourcevip`}
}

// Detect reads flannel's ConfigMap (FlannelConfigMap in FlannelNamespaces).
func (flannel) Detect(ctx context.Context, r ClusterReader) (*Plugin, error) {
	for _, ns := range FlannelNamespaces {
		data, found, err := r.ConfigMap(ctx, ns, FlannelConfigMap)
		if err != nil {
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ns, FlannelConfigMap, err)
		}
		if !found {
			continue
		}
		cfg, err := ParseFlannelNetConf(data[FlannelNetConf])
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", ns, FlannelConfigMap, FlannelNetConf, err)
		}
		cfg.ConfigMap = ns + "/" + FlannelConfigMap
		return &Plugin{Name: PluginFlannel, Source: "ConfigMap " + cfg.ConfigMap, Config: cfg,
			PodNetworks: cfg.Networks(), PodNetworksSource: cfg.ConfigMap + " net-conf.json Network"}, nil
	}
	return nil, nil
}

// CheckPlugin: flannel's VXLAN settings must be Windows' (checkFlannelPlugin).
func (flannel) CheckPlugin(p Plugin, daemonSets func(namespace string) []string) Verdict {
	f := p.Flannel()
	if f == nil {
		return Verdict{Status: VerdictWarn, Message: fmt.Sprintf("flannel detected (%s) without its configuration: its Windows support cannot be checked.", p.Source)}
	}
	return checkFlannelPlugin(f, daemonSets)
}

// Artifacts: flanneld (flannel-io/flannel's Windows release asset) and
// flannel's CNI plugin (flannel-io/cni-plugin's Windows archive), as
// sig-windows-tools' flannel HostProcess images carry them.
func (flannel) Artifacts() []Artifact {
	return []Artifact{
		{Name: "flanneld", InstallAs: FlanneldExe, Required: true,
			Description: "`flanneld.exe` (flannel-io/flannel release asset, for example " +
				"`https://github.com/flannel-io/flannel/releases/download/v0.28.9/flanneld.exe`), installed as `C:\\k\\flanneld.exe`."},
		{Name: "cni_plugin", InstallAs: FlannelCNIPluginExe, Member: "flannel-amd64.exe", Required: true,
			Description: "flannel's CNI plugin for Windows (flannel-io/cni-plugin release archive " +
				"`cni-plugin-flannel-windows-amd64-<tag>.tgz`, for example " +
				"`https://github.com/flannel-io/cni-plugin/releases/download/v1.9.1-flannel1/cni-plugin-flannel-windows-amd64-v1.9.1-flannel1.tgz`): " +
				"its `flannel-amd64.exe` is installed as `C:\\opt\\cni\\bin\\flannel.exe`, the plugin the flannel CNI configuration runs " +
				"(containernetworking/plugins builds only host-local, win-bridge and win-overlay for Windows)."},
	}
}

// Attributes: the overlay's VNI and port, which Windows fixes (flannel
// pkg/backend/vxlan/vxlan_windows.go).
func (flannel) Attributes(*Plugin) []Attribute {
	return []Attribute{
		{Name: "vni", Kind: AttributeInt64, Int64: WindowsVXLANVNI,
			Description: "VXLAN VNI of the flannel overlay: 4096, the only one Windows accepts (flannel `vxlan_windows.go`)."},
		{Name: "port", Kind: AttributeInt64, Int64: WindowsVXLANPort,
			Description: "VXLAN UDP port of the flannel overlay: 4789, the only one Windows accepts."},
	}
}

func (flannel) Probe() Probe {
	return Probe{PodNetwork: "flannel's overlay"}
}

func (flannel) HostPrograms() []string {
	return []string{KubeProxyExe, FlanneldExe, FlannelCNIPluginExe, CNIBinDir + `\win-overlay.exe`, CNIBinDir + `\host-local.exe`}
}

// CNIConfig is the flannel CNI plugin (flannel-io/cni-plugin, Windows
// release) delegating to win-overlay (containernetworking/plugins) on the
// flannel.4096 network, with the capabilities containerd fills in at
// runtime (portMappings for hostPort, dns for the pod's search domains) and
// the policies flannel's Windows guide uses: no NAT towards the pod and
// service networks, and the service CIDR routed through the overlay (ROUTE
// with NeedEncap), so that service traffic reaches kube-proxy's load
// balancers.
// https://github.com/flannel-io/flannel/blob/master/Documentation/kubernetes.md (Windows),
// https://github.com/kubernetes-sigs/sig-windows-tools/blob/master/hostprocess/flannel/flanneld/flannel-overlay.yml
func (flannel) CNIConfig(n Node) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "0.3.0",
		"name":       FlannelNetworkName,
		"plugins": []any{map[string]any{
			"type":         "flannel",
			"capabilities": map[string]any{"portMappings": true, "dns": true},
			"delegate": map[string]any{
				"type": "win-overlay",
				// win-overlay needs flannel's VXLAN MAC prefix
				// (flannel-io/cni-plugin README, Windows support; flannel
				// pkg/backend/vxlan/vxlan_windows.go default MacPrefix).
				"endpointMacPrefix": "0E-2A",
				"dns":               map[string]any{"Nameservers": n.ClusterDNS, "Search": []string{"svc." + n.ClusterDomain, n.ClusterDomain}},
				"policies": []any{
					map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{
						"Type": "OutBoundNAT", "ExceptionList": []string{n.ClusterCIDR, n.ServiceCIDR}}},
					map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{
						"Type": "ROUTE", "DestinationPrefix": n.ServiceCIDR, "NeedEncap": true}},
				},
			},
		}},
	}
	return json.MarshalIndent(conf, "", "  ")
}

func (flannel) CNIConfPath() string { return flannelCNIConf }

// Objects are kube-proxy (winkernel, overlay) and flanneld.
func (m flannel) Objects(s Spec) ([]AgentObjects, error) {
	kubeconfig, err := agentKubeconfig(s.APIServer)
	if err != nil {
		return nil, err
	}
	proxyScript, err := renderScript("kube-proxy-start", map[string]any{
		"Exe": KubeProxyExe, "Network": FlannelNetworkName, "ClusterCIDR": s.ClusterCIDR,
		"Placeholder": mountPlaceholder, "Mount": "/etc/" + KubeProxyWindows, "CNIBin": CNIBinDir,
	})
	if err != nil {
		return nil, err
	}
	netConf := fmt.Sprintf(`{"Network": %q, "Backend": {"Type": "vxlan", "VNI": %d, "Port": %d}}`, s.ClusterCIDR, WindowsVXLANVNI, WindowsVXLANPort)
	flannelScript, err := renderScript("flanneld-start", map[string]any{
		"Exe": FlanneldExe, "Placeholder": mountPlaceholder, "Mount": "/etc/" + FlannelWindows,
	})
	if err != nil {
		return nil, err
	}

	agents := m.Agents()
	proxy, flanneld := agents[0], agents[1]
	sa := func(name, component string) *corev1ac.ServiceAccountApplyConfiguration {
		return corev1ac.ServiceAccount(name, s.Namespace).WithLabels(s.ownedLabels(component))
	}
	binding := func(name, role, subject, component string) *rbacv1ac.ClusterRoleBindingApplyConfiguration {
		return rbacv1ac.ClusterRoleBinding(name).WithLabels(s.ownedLabels(component)).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(role)).
			WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(subject).WithNamespace(s.Namespace))
	}
	return []AgentObjects{
		{
			Agent:              proxy,
			ServiceAccount:     sa(KubeProxyWindows, proxy.Name),
			ClusterRoleBinding: binding(KubeProxyBindingName(s.Namespace), nodeProxierRole, KubeProxyWindows, proxy.Name),
			ConfigMap: corev1ac.ConfigMap(KubeProxyWindows, s.Namespace).WithLabels(s.ownedLabels(proxy.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "start.ps1": proxyScript}),
			DaemonSet: hostProcessDaemonSet(s, proxy, KubeProxyWindows, KubeProxyWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				fieldEnv("NODE_NAME", "spec.nodeName"),
				// winkernel reads the network's name from KUBE_NETWORK when
				// --network-name is empty (pkg/proxy/winkernel/proxier.go);
				// the script passes both.
				corev1ac.EnvVar().WithName("KUBE_NETWORK").WithValue(FlannelNetworkName),
			}),
		},
		{
			Agent:          flanneld,
			ServiceAccount: sa(FlannelWindows, flanneld.Name),
			// flannel's own ClusterRole (kube-flannel.yml of
			// flannel-io/flannel): its pod, and nodes to list and watch
			// (the kube subnet manager reads every node's subnet lease) and
			// patch the status of (its own lease annotations).
			ClusterRole: rbacv1ac.ClusterRole(fmt.Sprintf(flannelClusterRoleName, s.Namespace)).WithLabels(s.ownedLabels(flanneld.Name)).WithRules(
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("pods").WithVerbs("get"),
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes").WithVerbs("get", "list", "watch"),
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes/status").WithVerbs("patch"),
			),
			ClusterRoleBinding: binding(fmt.Sprintf(flannelClusterRoleName, s.Namespace), fmt.Sprintf(flannelClusterRoleName, s.Namespace), FlannelWindows, flanneld.Name),
			ConfigMap: corev1ac.ConfigMap(FlannelWindows, s.Namespace).WithLabels(s.ownedLabels(flanneld.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "net-conf.json": netConf, "start.ps1": flannelScript}),
			DaemonSet: hostProcessDaemonSet(s, flanneld, FlannelWindows, FlannelWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				// The kube subnet manager finds its Node through its pod
				// (POD_NAME/POD_NAMESPACE) or NODE_NAME (flannel
				// pkg/subnet/kube/kube.go): the downward API gives all three
				// to the process, which a service's environment never had.
				fieldEnv("POD_NAME", "metadata.name"),
				fieldEnv("POD_NAMESPACE", "metadata.namespace"),
				fieldEnv("NODE_NAME", "spec.nodeName"),
				fieldEnv("HOST_IP", "status.hostIP"),
			}),
		},
	}, nil
}

// The cluster's own flannel, which the mode's Windows nodes join.

// Where flannel keeps its configuration: the kube-flannel manifest uses the
// kube-flannel namespace, older manifests (and the Windows guides of that
// era) kube-system.
const (
	FlannelConfigMap = "kube-flannel-cfg"
	FlannelNetConf   = "net-conf.json"
)

// FlannelNamespaces are where FlannelConfigMap is looked for, in order.
var FlannelNamespaces = []string{"kube-flannel", "kube-system"}

// Flannel's defaults when net-conf.json leaves them out (flannel
// pkg/subnet/config.go and pkg/backend/vxlan): no Backend means udp, a vxlan
// backend without VNI or Port uses VNI 1 on the Linux kernel's port 8472.
const (
	flannelDefaultBackend   = "udp"
	flannelDefaultVXLANVNI  = 1
	flannelDefaultVXLANPort = 8472
)

// FlannelConfig is flannel's net-conf.json with flannel's defaults applied.
type FlannelConfig struct {
	// ConfigMap is "<namespace>/kube-flannel-cfg".
	ConfigMap   string
	Network     string
	IPv6Network string
	// Backend is the backend type: vxlan, host-gw, udp, wireguard, ...
	Backend string
	// VNI and Port are the VXLAN settings; 0 for other backends.
	VNI  int
	Port int
}

// Networks lists the pod networks flannel hands out subnets from.
func (f *FlannelConfig) Networks() []string {
	var out []string
	for _, n := range []string{f.Network, f.IPv6Network} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ParseFlannelNetConf parses flannel's net-conf.json and fills in the
// defaults flannel itself would use.
func ParseFlannelNetConf(raw string) (*FlannelConfig, error) {
	var conf struct {
		Network     string
		IPv6Network string
		Backend     *struct {
			Type string
			VNI  *int
			Port *int
		}
	}
	if raw == "" {
		return nil, fmt.Errorf("%s is empty", FlannelNetConf)
	}
	if err := json.Unmarshal([]byte(raw), &conf); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", FlannelNetConf, err)
	}
	cfg := &FlannelConfig{Network: conf.Network, IPv6Network: conf.IPv6Network, Backend: flannelDefaultBackend}
	if conf.Backend != nil && conf.Backend.Type != "" {
		cfg.Backend = conf.Backend.Type
	}
	if cfg.Backend == "vxlan" {
		cfg.VNI, cfg.Port = flannelDefaultVXLANVNI, flannelDefaultVXLANPort
		if conf.Backend.VNI != nil {
			cfg.VNI = *conf.Backend.VNI
		}
		if conf.Backend.Port != nil {
			cfg.Port = *conf.Backend.Port
		}
	}
	return cfg, nil
}

// checkFlannelPlugin: Windows joins a flannel overlay only through HNS,
// which accepts VXLAN with VNI 4096 on UDP port 4789; flannel's defaults
// (VNI 1, port 8472) leave Windows pods unreachable (seed 004).
func checkFlannelPlugin(f *FlannelConfig, daemonSets func(namespace string) []string) Verdict {
	namespace, _, _ := strings.Cut(f.ConfigMap, "/")
	restart := fmt.Sprintf("kubectl -n %s rollout restart daemonset %s", namespace, flannelDaemonSet(daemonSets(namespace)))
	wantBackend := fmt.Sprintf(`"Backend": {"Type": "vxlan", "VNI": %d, "Port": %d}`, WindowsVXLANVNI, WindowsVXLANPort)
	switch {
	case f.Backend == "vxlan" && f.VNI == WindowsVXLANVNI && f.Port == WindowsVXLANPort:
		return Verdict{Status: VerdictPass,
			Message: fmt.Sprintf("flannel (ConfigMap %s) uses the vxlan backend with VNI %d and port %d, as Windows requires.", f.ConfigMap, f.VNI, f.Port)}
	case f.Backend == "vxlan":
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("flannel (ConfigMap %s, key %s) uses the vxlan backend with VNI %d and port %d; "+
				"Windows overlay networking only works with VNI %d and port %d, so Windows pods would be unreachable.",
				f.ConfigMap, FlannelNetConf, f.VNI, f.Port, WindowsVXLANVNI, WindowsVXLANPort),
			Remedy: fmt.Sprintf("In ConfigMap %s, key %s, set %s, then restart flannel on every node: %s.", f.ConfigMap, FlannelNetConf, wantBackend, restart)}
	case f.Backend == "host-gw":
		return Verdict{Status: VerdictPass,
			Message: fmt.Sprintf("flannel (ConfigMap %s) uses the host-gw backend: Windows nodes join with l2bridge networking "+
				"and must share a layer-2 network with the Linux nodes.", f.ConfigMap)}
	}
	return Verdict{Status: VerdictFail,
		Message: fmt.Sprintf("flannel (ConfigMap %s, key %s) uses the %s backend, which flannel does not implement on Windows (vxlan and host-gw only).",
			f.ConfigMap, FlannelNetConf, f.Backend),
		Remedy: fmt.Sprintf("In ConfigMap %s, key %s, set %s, then restart flannel on every node: %s.", f.ConfigMap, FlannelNetConf, wantBackend, restart)}
}

// flannelDaemonSet names flannel's DaemonSet among a namespace's for the
// restart command: kube-flannel-ds in current manifests,
// kube-flannel-ds-<arch> in older ones.
func flannelDaemonSet(names []string) string {
	for _, n := range names {
		if strings.Contains(n, "flannel") {
			return n
		}
	}
	return "kube-flannel-ds"
}
