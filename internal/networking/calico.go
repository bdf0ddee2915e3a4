package networking

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
)

// calico: Calico's VXLAN overlay with Calico IPAM, joining the cluster's
// own Calico as Calico for Windows does (projectcalico/calico v3.32;
// tigera/operator pkg/render/windows.go renders its calico-node-windows
// DaemonSet and CNI configuration): calico-node's startup (an affine IPAM
// block, the "Calico" Overlay HNS network over it, the VXLAN tunnel) and
// Felix (the routes to the other nodes' blocks) in a HostProcess DaemonSet,
// kube-proxy (winkernel on the Calico network, its source VIP the host
// endpoint Calico_ep) in another, and the calico/calico-ipam CNI plugins.
// Its plan checks read the cluster's Calico (calico_config.go).
type calico struct{}

func init() { Register(calico{}) }

// Paths of the calico mode on the Windows host.
const (
	// CalicoNodeExe is calico-node.exe of Calico's Windows release archive
	// (calico-windows-<tag>.zip: CalicoWindows/calico-node.exe), where the
	// archive's install puts it (C:\CalicoWindows).
	CalicoNodeExe = `C:\CalicoWindows\calico-node.exe`
	// calicoCNIDist holds Calico's CNI plugins as the archive unpacks
	// (CalicoWindows\cni\calico.exe, calico-ipam.exe); calico-node-windows
	// copies them into CNIBinDir, where containerd runs CNI plugins from
	// under the types the configuration names.
	calicoCNIDist = `C:\CalicoWindows\cni`
	// calicoCNIConf is the node's CNI configuration list, written by the
	// join (the operator's CNI_CONF_NAME "10-calico.conflist").
	calicoCNIConf = CNIConfDir + `\10-calico.conflist`
	// CalicoCNIKubeconfig is the kubeconfig the CNI plugin reads, which
	// calico-node-windows writes (the operator's cni kubeconfig in
	// CNI_NET_DIR: "calico-kubeconfig").
	CalicoCNIKubeconfig = `C:\etc\cni\net.d\calico-kubeconfig`
	// CalicoNetworkName is the HNS network calico-node's startup creates
	// for the vxlan backend (node/pkg/lifecycle/startup/startup_windows.go).
	CalicoNetworkName = "Calico"
	// calicoNodenameFile is where calico-node's startup records the node's
	// name (CALICO_NODENAME_FILE): kube-proxy waits for it, as Calico's
	// kube-proxy-service.ps1 waits for Calico's initialisation.
	calicoNodenameFile = `C:\var\lib\calico\nodename`
	// calicoNodeKubeconfig is calico-node-windows' kubeconfig on the host.
	calicoNodeKubeconfig = `C:\var\lib\calico-node-windows\kubeconfig.conf`
)

// Names of the calico mode's objects.
const (
	// CalicoNodeWindows is the agent's DaemonSet, ServiceAccount and
	// ConfigMap: the operator's DaemonSet name (render.WindowsNodeObjectName).
	CalicoNodeWindows       = "calico-node-windows"
	calicoNodeClusterRoleFm = "windows-node-networking:%s:calico-node-windows"
	// CalicoKubeProxyWindows is the mode's kube-proxy: its own DaemonSet,
	// so that a namespace's DaemonSets tell the modes apart (import).
	CalicoKubeProxyWindows = "kube-proxy-windows-calico"
	calicoKubeProxyBinding = "windows-node-networking:%s:kube-proxy-windows-calico"
)

func (calico) Name() string { return "calico" }

func (calico) Agents() []Agent {
	return []Agent{
		{Name: "kube-proxy", DaemonSet: CalicoKubeProxyWindows, Selector: agentSelector(CalicoKubeProxyWindows)},
		{Name: "calico-node", DaemonSet: CalicoNodeWindows, Selector: agentSelector(CalicoNodeWindows)},
	}
}

// NeedsClusterCIDR: kube-proxy's --cluster-cidr is the pod network
// (Calico's pools).
func (calico) NeedsClusterCIDR() bool { return true }

func (calico) Plugin() string { return PluginCalico }

// HostDirs: the agents' kubeconfigs (their start scripts copy them out of
// the container's mount), calico-node's node name file, which kube-proxy
// waits for, and Calico's own folder, where the image unpacks its archive
// (internal/networking/templates).
func (calico) HostDirs() []string {
	return []string{`C:\var\lib\kube-proxy-windows-calico`, `C:\var\lib\calico-node-windows`, `C:\var\lib\calico`, `C:\CalicoWindows`}
}

// calicoDaemonSets are where Calico's Linux agent runs: an operator
// install (calico-system) or the manifests (kube-system).
var calicoDaemonSets = []struct{ namespace, name string }{{"calico-system", "calico-node"}, {"kube-system", "calico-node"}}

// Detect finds calico-node's DaemonSet, then reads Calico's configuration
// from the Kubernetes datastore (crd.projectcalico.org/v1, else
// projectcalico.org/v3): IPPools, the IPAM configuration, Felix's.
func (calico) Detect(ctx context.Context, r ClusterReader) (*Plugin, error) {
	for _, ds := range calicoDaemonSets {
		found, err := r.DaemonSet(ctx, ds.namespace, ds.name)
		if err != nil {
			return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", ds.namespace, ds.name, err)
		}
		if !found {
			continue
		}
		p := &Plugin{Name: PluginCalico, Source: "DaemonSet " + ds.namespace + "/" + ds.name}
		cfg, err := readCalicoConfig(ctx, r)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			p.Config = cfg
			for _, pool := range cfg.ipv4Pools() {
				p.PodNetworks = append(p.PodNetworks, pool.CIDR)
			}
			p.PodNetworksSource = "Calico's IPPools (spec.cidr)"
		}
		return p, nil
	}
	return nil, nil
}

// readCalicoConfig reads Calico's resources; nil when neither API group is
// served (an etcd datastore): only Calico's presence is known then.
func readCalicoConfig(ctx context.Context, r ClusterReader) (*CalicoConfig, error) {
	for _, api := range []struct{ group, version, ipam string }{
		{CalicoCRDGroup, CalicoCRDVersion, CalicoIPAMConfigsV1},
		{CalicoV3Group, CalicoV3Version, CalicoIPAMConfigurationsV3},
	} {
		gvr := func(resource string) schema.GroupVersionResource {
			return schema.GroupVersionResource{Group: api.group, Version: api.version, Resource: resource}
		}
		pools, served, err := r.Objects(ctx, gvr(CalicoIPPools))
		if err != nil {
			return nil, fmt.Errorf("listing Calico IPPools (%s): %w", api.group, err)
		}
		if !served {
			continue
		}
		cfg := &CalicoConfig{Group: api.group}
		for _, obj := range pools {
			spec, _ := obj["spec"].(map[string]any)
			meta, _ := obj["metadata"].(map[string]any)
			pool := CalicoPool{}
			pool.Name, _ = meta["name"].(string)
			pool.CIDR, _ = spec["cidr"].(string)
			pool.VXLANMode, _ = spec["vxlanMode"].(string)
			pool.IPIPMode, _ = spec["ipipMode"].(string)
			pool.Disabled, _ = spec["disabled"].(bool)
			pool.BlockSize = intField(spec["blockSize"])
			cfg.Pools = append(cfg.Pools, pool)
		}
		ipam, found, err := r.Object(ctx, gvr(api.ipam), "", CalicoDefault)
		if err != nil {
			return nil, fmt.Errorf("reading Calico's IPAM configuration %s/%s: %w", api.ipam, CalicoDefault, err)
		}
		if found {
			spec, _ := ipam["spec"].(map[string]any)
			cfg.IPAMConfigFound = true
			cfg.StrictAffinity, _ = spec["strictAffinity"].(bool)
		}
		felix, found, err := r.Object(ctx, gvr(CalicoFelixConfigurations), "", CalicoDefault)
		if err != nil {
			return nil, fmt.Errorf("reading Calico's FelixConfiguration %s: %w", CalicoDefault, err)
		}
		if found {
			spec, _ := felix["spec"].(map[string]any)
			cfg.VXLANVNI, cfg.VXLANPort = intField(spec["vxlanVNI"]), intField(spec["vxlanPort"])
		}
		cfg.WithFelixDefaults()
		return cfg, nil
	}
	return nil, nil
}

// intField is a JSON number of unstructured content (int64, or float64
// from a decoder that does not keep integers).
func intField(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}

// Calico is Calico's configuration; nil for other plugins, or when its
// resources could not be read.
func (p Plugin) Calico() *CalicoConfig {
	c, _ := p.Config.(*CalicoConfig)
	return c
}

// CheckPlugin: strict affinity, a VXLAN pool, Windows' VNI and port
// (checkCalicoPlugin).
func (calico) CheckPlugin(p Plugin, _ func(namespace string) []string) Verdict {
	c := p.Calico()
	if c == nil {
		return Verdict{Status: VerdictWarn,
			Message: fmt.Sprintf("Calico detected (%s), but neither crd.projectcalico.org nor projectcalico.org serves its IPPools: "+
				"its Windows support (strictAffinity, vxlanMode) cannot be checked.", p.Source),
			Remedy: "Calico for Windows needs Calico's Kubernetes datastore; check that IPAM strictAffinity is true and the IP pool's vxlanMode is Always."}
	}
	return checkCalicoPlugin(c)
}

// Artifacts: Calico's Windows release archive (calico-windows-<tag>.zip,
// node/Makefile WINDOWS_ARCHIVE), unpacked at C:\ as Calico's
// install-calico-windows.ps1 unpacks it (`Expand-Archive -Force $CalicoZip
// c:\`, $RootDir c:\CalicoWindows): calico-node.exe, and the CNI plugins in
// CalicoWindows\cni, which calico-node-windows copies into the CNI bin dir
// as Calico's install-cni does (cni-plugin/pkg/install).
func (calico) Artifacts() []Artifact {
	return []Artifact{
		{Name: "windows_archive", InstallAs: CalicoNodeExe, ExtractTo: `C:\`, Required: true,
			Description: "Calico's Windows release archive (projectcalico/calico release asset `calico-windows-<tag>.zip`, for example " +
				"`https://github.com/projectcalico/calico/releases/download/v3.32.1/calico-windows-v3.32.1.zip`), unpacked at `C:\\` " +
				"as Calico's installer does: `C:\\CalicoWindows\\calico-node.exe` and the CNI plugins `calico.exe` and `calico-ipam.exe` " +
				"in `C:\\CalicoWindows\\cni`, which `calico-node-windows` installs into `C:\\opt\\cni\\bin`."},
	}
}

// Attributes: the overlay's VNI and port as Felix's configuration has them.
func (calico) Attributes(p *Plugin) []Attribute {
	vni, port := int64(WindowsVXLANVNI), int64(WindowsVXLANPort)
	if p != nil {
		if c := p.Calico(); c != nil {
			vni, port = int64(c.VXLANVNI), int64(c.VXLANPort)
		}
	}
	return []Attribute{
		{Name: "vni", Kind: AttributeInt64, Int64: vni,
			Description: "VXLAN VNI of Calico's overlay, FelixConfiguration `default`'s `vxlanVNI` (Felix's default 4096); Windows refuses one below 4096."},
		{Name: "port", Kind: AttributeInt64, Int64: port,
			Description: "VXLAN UDP port of Calico's overlay, FelixConfiguration `default`'s `vxlanPort` (Felix's default 4789, the only one Windows carries)."},
	}
}

func (calico) Probe() Probe {
	return Probe{PodNetwork: "Calico's VXLAN overlay (HNS network Calico)"}
}

// HostPrograms: the CNI plugins are not among them: calico-node-windows
// installs them (the node is not network-ready until it has).
func (calico) HostPrograms() []string {
	return []string{KubeProxyExe, CalicoNodeExe}
}

func (calico) CNIConfPath() string { return calicoCNIConf }

// CNIConfig is the operator's Windows CNI configuration
// (tigera/operator pkg/render/windows.go createCalicoPluginConfig) for
// Calico networking with Calico IPAM: one calico plugin on the single
// "Calico" network in vxlan mode (VNI 4096, flannel's MAC prefix 0E-2A),
// the Kubernetes datastore through the kubeconfig calico-node-windows
// writes, the cluster DNS, no NAT towards the service network and the
// service CIDR routed through the overlay (SDNROUTE with NeedEncap).
func (calico) CNIConfig(n Node) ([]byte, error) {
	conf := map[string]any{
		"name":       CalicoNetworkName,
		"cniVersion": "0.3.1",
		"plugins": []any{map[string]any{
			"type":                       "calico",
			"name":                       CalicoNetworkName,
			"windows_use_single_network": true,
			"mode":                       "vxlan",
			"vxlan_mac_prefix":           "0E-2A",
			"vxlan_vni":                  WindowsVXLANVNI,
			"mtu":                        0,
			"policy":                     map[string]any{"type": "k8s"},
			"log_file_path":              "c:/var/log/calico/cni/cni.log",
			"capabilities":               map[string]any{"dns": true},
			"nodename_file":              "c:/var/lib/calico/nodename",
			"nodename_file_optional":     true,
			"datastore_type":             "kubernetes",
			"ipam":                       map[string]any{"type": "calico-ipam", "subnet": "usePodCidr"},
			"kubernetes":                 map[string]any{"kubeconfig": "c:/etc/cni/net.d/calico-kubeconfig"},
			"DNS":                        map[string]any{"Nameservers": n.ClusterDNS, "Search": []string{"svc." + n.ClusterDomain}},
			"policies": []any{
				map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "OutBoundNAT", "ExceptionList": []string{n.ServiceCIDR}}},
				map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "SDNROUTE", "DestinationPrefix": n.ServiceCIDR, "NeedEncap": true}},
			},
		}},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// calicoNodeRules are calico-node's ClusterRole as the operator renders it
// (tigera/operator pkg/render/node.go nodeRole), narrowed to what Calico
// for Windows' startup, Felix's VXLAN routes and the CNI plugin's IPAM
// read and write in the Kubernetes datastore.
func calicoNodeRules() []*rbacv1ac.PolicyRuleApplyConfiguration {
	return []*rbacv1ac.PolicyRuleApplyConfiguration{
		rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes").WithVerbs("get", "list", "watch", "patch"),
		rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes/status").WithVerbs("patch", "update"),
		rbacv1ac.PolicyRule().WithAPIGroups(CalicoCRDGroup).WithResources("ipamconfigs").WithVerbs("get", "create"),
		rbacv1ac.PolicyRule().WithAPIGroups(CalicoCRDGroup).WithResources("blockaffinities", "ipamblocks").WithVerbs("get", "list", "watch", "create", "update"),
		rbacv1ac.PolicyRule().WithAPIGroups(CalicoCRDGroup).WithResources("ippools", "felixconfigurations").WithVerbs("get", "list"),
	}
}

// Objects are kube-proxy (winkernel on the Calico network) and
// calico-node-windows.
func (m calico) Objects(s Spec) ([]AgentObjects, error) {
	kubeconfig, err := agentKubeconfig(s.APIServer)
	if err != nil {
		return nil, err
	}
	proxyScript, err := renderScript("calico-kube-proxy-start", map[string]any{
		"Exe": KubeProxyExe, "Network": CalicoNetworkName, "ClusterCIDR": s.ClusterCIDR, "NodenameFile": calicoNodenameFile,
		"Placeholder": mountPlaceholder, "Mount": "/etc/" + CalicoKubeProxyWindows,
	})
	if err != nil {
		return nil, err
	}
	nodeScript, err := renderScript("calico-node-start", map[string]any{
		"Exe": CalicoNodeExe, "Placeholder": mountPlaceholder, "Mount": "/etc/" + CalicoNodeWindows,
		"CNIKubeconfig": CalicoCNIKubeconfig, "NodenameFile": calicoNodenameFile, "Kubeconfig": calicoNodeKubeconfig,
		"CNIDist": calicoCNIDist, "CNIBin": CNIBinDir,
	})
	if err != nil {
		return nil, err
	}
	agents := m.Agents()
	proxy, node := agents[0], agents[1]
	sa := func(name, component string) *corev1ac.ServiceAccountApplyConfiguration {
		return corev1ac.ServiceAccount(name, s.Namespace).WithLabels(s.ownedLabels(component))
	}
	binding := func(name, role, subject, component string) *rbacv1ac.ClusterRoleBindingApplyConfiguration {
		return rbacv1ac.ClusterRoleBinding(name).WithLabels(s.ownedLabels(component)).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(role)).
			WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(subject).WithNamespace(s.Namespace))
	}
	role := fmt.Sprintf(calicoNodeClusterRoleFm, s.Namespace)
	literal := func(name, value string) *corev1ac.EnvVarApplyConfiguration {
		return corev1ac.EnvVar().WithName(name).WithValue(value)
	}
	return []AgentObjects{
		{
			Agent:              proxy,
			ServiceAccount:     sa(CalicoKubeProxyWindows, proxy.Name),
			ClusterRoleBinding: binding(fmt.Sprintf(calicoKubeProxyBinding, s.Namespace), nodeProxierRole, CalicoKubeProxyWindows, proxy.Name),
			ConfigMap: corev1ac.ConfigMap(CalicoKubeProxyWindows, s.Namespace).WithLabels(s.ownedLabels(proxy.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "start.ps1": proxyScript}),
			DaemonSet: hostProcessDaemonSet(s, proxy, CalicoKubeProxyWindows, CalicoKubeProxyWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				fieldEnv("NODE_NAME", "spec.nodeName"),
				literal("KUBE_NETWORK", CalicoNetworkName),
			}),
		},
		{
			Agent:              node,
			ServiceAccount:     sa(CalicoNodeWindows, node.Name),
			ClusterRole:        rbacv1ac.ClusterRole(role).WithLabels(s.ownedLabels(node.Name)).WithRules(calicoNodeRules()...),
			ClusterRoleBinding: binding(role, role, CalicoNodeWindows, node.Name),
			ConfigMap: corev1ac.ConfigMap(CalicoNodeWindows, s.Namespace).WithLabels(s.ownedLabels(node.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "start.ps1": nodeScript}),
			// The operator's calico-node-windows environment
			// (render/windows.go windowsEnvVars) for Calico networking
			// with the vxlan backend and the Kubernetes datastore.
			DaemonSet: hostProcessDaemonSet(s, node, CalicoNodeWindows, CalicoNodeWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				fieldEnv("NODENAME", "spec.nodeName"),
				fieldEnv("NAMESPACE", "metadata.namespace"),
				literal("CALICO_NETWORKING_BACKEND", "vxlan"),
				literal("CNI_PLUGIN_TYPE", "Calico"),
				literal("DATASTORE_TYPE", "kubernetes"),
				literal("VXLAN_VNI", fmt.Sprint(WindowsVXLANVNI)),
				literal("KUBE_NETWORK", "Calico.*"),
				literal("FELIX_HEALTHENABLED", "true"),
				literal("CALICO_NODENAME_FILE", calicoNodenameFile),
				// The start script writes the agent's kubeconfig there
				// (its token and CA under the container's mount point).
				literal("KUBECONFIG", calicoNodeKubeconfig),
			}),
		},
	}, nil
}
