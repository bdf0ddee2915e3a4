package bootstrap

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// Files the join writes on the node.
const (
	BootstrapKubeconfig = `C:\k\bootstrap-kubeconfig`
	NodeKubeconfig      = `C:\k\kubeconfig`
	KubeletConfigFile   = `C:\k\kubelet-config.yaml`
	ClusterCAFile       = `C:\k\ca.crt`
	KubeletCertDir      = `C:\k\pki`
	FlannelDir          = `C:\etc\kube-flannel`
	FlannelNetConf      = `C:\etc\kube-flannel\net-conf.json`
	FlannelExe          = `C:\k\flanneld.exe`
	FlannelCNIConf      = `C:\etc\cni\net.d\10-flannel.conflist`
)

// Flannel on Windows: VXLAN needs VNI 4096 and UDP port 4789 (the Windows
// overlay network's fixed values), so the cluster's flannel must use them too.
const (
	FlannelWindowsVNI  = 4096
	FlannelWindowsPort = 4789
)

// CNI modes of a node.
const (
	CNIFlannel = "flannel" // flanneld and kube-proxy as Windows services
	CNINone    = "none"    // the cluster runs CNI and kube-proxy as HostProcess DaemonSets
)

// JoinConfig is everything a node needs to join, discovered from the cluster
// (never typed in by hand) except what the user chose.
type JoinConfig struct {
	NodeName string // lower-case; the Kubernetes Node name
	NodeIP   string

	APIServer      string // https://host:port
	ClusterCA      []byte // PEM
	BootstrapToken string // <id>.<secret>, short-lived

	ClusterDNS    []string
	ClusterDomain string
	ClusterCIDR   string // for flannel and kube-proxy
	ServiceCIDR   string

	Labels map[string]string
	Taints []string // key=value:Effect

	CNI            string // CNIFlannel or CNINone
	FlannelBackend string // "vxlan" (overlay) or "host-gw"

	// MaxPods and reservations shape the kubelet's allocatable.
	MaxPods int32
}

var nodeNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (c JoinConfig) withDefaults() JoinConfig {
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if c.FlannelBackend == "" {
		c.FlannelBackend = "vxlan"
	}
	return c
}

func (c JoinConfig) validate() error {
	switch {
	case !nodeNamePattern.MatchString(c.NodeName):
		return fmt.Errorf("node name %q is not a lower-case DNS label", c.NodeName)
	case net.ParseIP(c.NodeIP) == nil:
		return fmt.Errorf("node IP %q is not an IP address", c.NodeIP)
	case !strings.HasPrefix(c.APIServer, "https://"):
		return fmt.Errorf("API server %q is not an https URL", c.APIServer)
	case len(c.ClusterCA) == 0:
		return fmt.Errorf("the cluster CA certificate is empty")
	case !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(c.BootstrapToken):
		return fmt.Errorf("the bootstrap token is not in the <6>.<16> format")
	case len(c.ClusterDNS) == 0:
		return fmt.Errorf("no cluster DNS service IP")
	case c.CNI != CNIFlannel && c.CNI != CNINone:
		return fmt.Errorf("unknown CNI %q", c.CNI)
	case c.CNI == CNIFlannel && c.ClusterCIDR == "":
		return fmt.Errorf("flannel needs the cluster CIDR")
	}
	return nil
}

// JoinSteps renders the ordered steps that join a node prepared from a golden
// image. Re-running them converges: files are rewritten with the same
// content, services are re-created with the same command lines.
func JoinSteps(cfg JoinConfig) ([]Step, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bootstrapKubeconfig, err := cfg.bootstrapKubeconfig()
	if err != nil {
		return nil, err
	}
	kubeletConfig, err := cfg.kubeletConfiguration()
	if err != nil {
		return nil, err
	}
	var steps []Step
	add := func(name, tmpl string, data any, sensitive bool) error {
		script, err := render(name, tmpl, data)
		if err != nil {
			return err
		}
		steps = append(steps, Step{Name: name, Script: script, Sensitive: sensitive})
		return nil
	}
	files := []fileData{
		{Path: ClusterCAFile, Base64: base64.StdEncoding.EncodeToString(cfg.ClusterCA)},
		{Path: BootstrapKubeconfig, Base64: base64.StdEncoding.EncodeToString(bootstrapKubeconfig)},
		{Path: KubeletConfigFile, Base64: base64.StdEncoding.EncodeToString(kubeletConfig)},
	}
	if err := add("join-files", "join-files", map[string]any{
		"Dirs": []string{KubernetesDir, KubeletCertDir, CNIConfDir}, "Files": files,
	}, true); err != nil {
		return nil, err
	}
	if cfg.CNI == CNIFlannel {
		netConf, cniConf, err := cfg.flannelConfig()
		if err != nil {
			return nil, err
		}
		if err := add("flannel", "flannel", map[string]any{
			"Dir": FlannelDir, "NetConf": FlannelNetConf, "NetConfData": base64.StdEncoding.EncodeToString(netConf),
			"CNIConf": FlannelCNIConf, "CNIConfData": base64.StdEncoding.EncodeToString(cniConf),
			"Service": Service{Name: "flanneld", Display: "flannel", Command: cfg.flanneldCommand()}, "NodeName": cfg.NodeName,
		}, false); err != nil {
			return nil, err
		}
	}
	if err := add("kubelet-service", "service", Service{Name: "kubelet", Display: "Kubernetes kubelet", Command: cfg.KubeletCommand()}, false); err != nil {
		return nil, err
	}
	if cfg.CNI == CNIFlannel {
		if err := add("kube-proxy-service", "service", Service{Name: "kube-proxy", Display: "Kubernetes kube-proxy", Command: cfg.kubeProxyCommand()}, false); err != nil {
			return nil, err
		}
	}
	return steps, nil
}

type fileData struct{ Path, Base64 string }

// Service is a Windows service the join (re)creates and starts.
type Service struct {
	Name, Display, Command string
}

// KubeletCommand is the kubelet service's command line: current flags only
// (every removed flag of the recipes — --network-plugin, --cni-bin-dir,
// --image-pull-progress-deadline, --pod-infra-container-image — stops a
// current kubelet), and none that are deprecated in favour of the
// configuration file (the runtime endpoint and the taints live there).
func (c JoinConfig) KubeletCommand() string {
	args := []string{
		quoteArg(KubeletExe),
		"--windows-service",
		"--bootstrap-kubeconfig=" + quoteArg(BootstrapKubeconfig),
		"--kubeconfig=" + quoteArg(NodeKubeconfig),
		"--config=" + quoteArg(KubeletConfigFile),
		"--cert-dir=" + quoteArg(KubeletCertDir),
		"--hostname-override=" + c.NodeName,
		"--node-ip=" + c.NodeIP,
		"--v=2",
	}
	if labels := joinLabels(c.Labels); labels != "" {
		args = append(args, "--node-labels="+labels)
	}
	return strings.Join(args, " ")
}

func (c JoinConfig) kubeProxyCommand() string {
	args := []string{
		quoteArg(KubeProxyExe),
		"--windows-service",
		"--kubeconfig=" + quoteArg(NodeKubeconfig),
		"--hostname-override=" + c.NodeName,
		"--proxy-mode=kernelspace",
		"--cluster-cidr=" + c.ClusterCIDR,
		"--v=2",
	}
	if c.FlannelBackend == "vxlan" {
		args = append(args, "--network-name=flannel.4096")
	} else {
		args = append(args, "--network-name=cbr0")
	}
	return strings.Join(args, " ")
}

func (c JoinConfig) flanneldCommand() string {
	return strings.Join([]string{
		quoteArg(FlannelExe),
		"--kubeconfig-file=" + quoteArg(NodeKubeconfig),
		"--iface=" + c.NodeIP,
		"--ip-masq=1",
		"--kube-subnet-mgr=1",
		"--net-config-path=" + quoteArg(FlannelNetConf),
	}, " ")
}

// flannelConfig is flannel's net-conf.json (VNI 4096 / port 4789 for VXLAN,
// as Windows requires) and the CNI configuration of the node.
func (c JoinConfig) flannelConfig() (netConf, cniConf []byte, err error) {
	backend := map[string]any{"Type": c.FlannelBackend}
	network := "cbr0"
	cniType := "win-bridge"
	if c.FlannelBackend == "vxlan" {
		backend = map[string]any{"Type": "vxlan", "VNI": FlannelWindowsVNI, "Port": FlannelWindowsPort, "name": "flannel.4096"}
		network = "flannel.4096"
		cniType = "win-overlay"
	}
	netConf, err = json.MarshalIndent(map[string]any{"Network": c.ClusterCIDR, "Backend": backend}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	cniConf, err = json.MarshalIndent(map[string]any{
		"cniVersion": "0.3.0",
		"name":       network,
		"plugins": []any{map[string]any{
			"type": "flannel",
			"delegate": map[string]any{
				"type":     cniType,
				"dns":      map[string]any{"Nameservers": c.ClusterDNS, "Search": []string{"svc." + c.ClusterDomain}},
				"policies": []any{map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "OutBoundNAT", "ExceptionList": []string{c.ClusterCIDR, c.ServiceCIDR}}}},
			},
		}},
	}, "", "  ")
	return netConf, cniConf, err
}

// bootstrapKubeconfig holds the short-lived bootstrap token, never an admin
// credential: the kubelet trades it for its own certificate.
func (c JoinConfig) bootstrapKubeconfig() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: c.APIServer, CertificateAuthorityData: c.ClusterCA}
	cfg.AuthInfos["tls-bootstrap-token-user"] = &clientcmdapi.AuthInfo{Token: c.BootstrapToken}
	cfg.Contexts["tls-bootstrap-token-user@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "tls-bootstrap-token-user"}
	cfg.CurrentContext = "tls-bootstrap-token-user@kubernetes"
	return clientcmd.Write(*cfg)
}

// kubeletConfiguration is the node's KubeletConfiguration: DNS from the
// cluster's own Service, the Windows-specific settings (no cgroups, no
// node-allocatable enforcement) and webhook authentication against the
// cluster CA.
func (c JoinConfig) kubeletConfiguration() ([]byte, error) {
	maxPods := c.MaxPods
	if maxPods == 0 {
		maxPods = 110
	}
	// A map, not kubeletv1beta1.KubeletConfiguration: the typed struct
	// marshals every zero duration ("0s") and drops the empty
	// enforceNodeAllocatable list that Windows needs (the default, [pods],
	// fails without cgroups).
	return yaml.Marshal(map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": ClusterCAFile},
		},
		"authorization":            map[string]any{"mode": "Webhook"},
		"clusterDNS":               c.ClusterDNS,
		"clusterDomain":            c.ClusterDomain,
		"containerRuntimeEndpoint": ContainerdPipe,
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []string{},
		"resolvConf":               "",
		"hairpinMode":              "promiscuous-bridge",
		"rotateCertificates":       true,
		"maxPods":                  maxPods,
		// Registered with the Node, so no pod lands before the taints exist.
		"registerWithTaints": registerTaints(c.Taints),
	})
}

// registerTaints turns "key=value:Effect" strings into KubeletConfiguration
// taints.
func registerTaints(taints []string) []map[string]string {
	out := []map[string]string{}
	for _, t := range taints {
		kv, effect, _ := strings.Cut(t, ":")
		key, value, _ := strings.Cut(kv, "=")
		taint := map[string]string{"key": key, "effect": effect}
		if value != "" {
			taint["value"] = value
		}
		out = append(out, taint)
	}
	return out
}

// joinLabels renders labels sorted, for a stable command line.
func joinLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// quoteArg double-quotes a path for a service command line when it has spaces.
func quoteArg(s string) string {
	if strings.ContainsAny(s, " \t") {
		return `"` + s + `"`
	}
	return s
}

// KubeletLogFile is where the node's kubelet log is kept; windows_node reads
// its last lines from here when a node never becomes Ready.
const KubeletLogFile = `C:\var\log\kubelet\kubelet.log`
