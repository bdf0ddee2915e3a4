package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// flannel's Windows VXLAN rules: pkg/backend/vxlan/vxlan_windows.go
// (defaultVNI 4096, vxlanPort 4789; the HNS network is named
// "flannel.<VNI>" unless the backend config names it).
const (
	flannelDefaultVNI = 4096
	flannelVXLANPort  = 4789
	flannelAnnPrefix  = "flannel.alpha.coreos.com/"
)

// runFlanneld is flanneld.exe with --kube-subnet-mgr (flannel-io/flannel
// main.go, pkg/subnet/kube/kube.go, pkg/backend/vxlan/vxlan_windows.go).
func runFlanneld(ctx context.Context, p *winsim.Process) int {
	log := newLogger(p.Stderr)
	fatal := func(file, format string, args ...any) int {
		log.Error(file, fmt.Errorf(format, args...), "")
		return 1
	}
	// main.go's flag set (the standard library's flag package: an unknown
	// flag prints "flag provided but not defined: -x" and exits 2).
	fs := flag.NewFlagSet("flanneld", flag.ContinueOnError)
	var errOut strings.Builder
	fs.SetOutput(&errOut)
	kubeSubnetMgr := fs.Bool("kube-subnet-mgr", false, "")
	kubeconfig := fs.String("kubeconfig-file", "", "")
	kubeAPIURL := fs.String("kube-api-url", "", "")
	netConfPath := fs.String("net-config-path", "/etc/kube-flannel/net-conf.json", "")
	subnetFile := fs.String("subnet-file", "/run/flannel/subnet.env", "")
	publicIP := fs.String("public-ip", "", "")
	fs.Bool("ip-masq", false, "")
	for _, n := range []string{"etcd-endpoints", "etcd-prefix", "etcd-keyfile", "etcd-certfile", "etcd-cafile", "etcd-username",
		"etcd-password", "public-ipv6", "subnet-lease-renew-margin", "healthz-ip", "healthz-port", "iptables-resync",
		"iface-can-reach", "kube-annotation-prefix", "v", "vmodule", "log_dir", "log_file", "iptables-forward-rules",
		"netconf-path-override", "charon-executable-path", "charon-viciurl", "iface-regex"} {
		fs.String(n, "", "")
	}
	var ifaces multiFlag
	fs.Var(&ifaces, "iface", "")
	for _, n := range []string{"ip-masq-random-fully", "blackhole-route", "persistent-mtu", "version", "kube-subnet-mgr-ipv6", "auto-detect-ipv4", "auto-detect-ipv6", "logtostderr", "alsologtostderr"} {
		fs.Bool(n, false, "")
	}
	if err := fs.Parse(p.Args); err != nil {
		fmt.Fprint(p.Stderr, errOut.String())
		return 2
	}
	if !*kubeSubnetMgr {
		return fatal("main.go:233", "Failed to create SubnetManager: etcd subnet manager is not modelled by the simulator (use --kube-subnet-mgr)")
	}
	cfg, err := flannelClientConfig(p, *kubeconfig, *kubeAPIURL)
	if err != nil {
		return fatal("main.go:233", "Failed to create SubnetManager: fail to create kubernetes config: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fatal("main.go:233", "Failed to create SubnetManager: %v", err)
	}
	// kube.go NewSubnetManager: the node name.
	nodeName := p.Env["NODE_NAME"]
	if nodeName == "" {
		podName, podNS := p.Env["POD_NAME"], p.Env["POD_NAMESPACE"]
		if podName == "" || podNS == "" {
			return fatal("main.go:233", "Failed to create SubnetManager: env variables POD_NAME and POD_NAMESPACE must be set")
		}
		pod, err := client.CoreV1().Pods(podNS).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return fatal("main.go:233", "Failed to create SubnetManager: error retrieving pod spec for '%s/%s': %v", podNS, podName, err)
		}
		if nodeName = pod.Spec.NodeName; nodeName == "" {
			return fatal("main.go:233", "Failed to create SubnetManager: node name not present in pod spec '%s/%s'", podNS, podName)
		}
	}
	// The network config file (kube mode reads it from --net-config-path,
	// the kube-flannel-cfg ConfigMap mounted there).
	data, err := p.Host.ReadFile(hostPath(*netConfPath))
	if err != nil {
		return fatal("main.go:233", "Failed to create SubnetManager: failed to read net conf: open %s: The system cannot find the path specified.", *netConfPath)
	}
	var netConf struct {
		Network string
		Backend json.RawMessage
	}
	if err := json.Unmarshal(data, &netConf); err != nil {
		return fatal("main.go:233", "Failed to create SubnetManager: error parsing subnet config: %v", err)
	}
	if _, _, err := net.ParseCIDR(netConf.Network); err != nil {
		return fatal("main.go:233", "Failed to create SubnetManager: error parsing subnet config: invalid Network %q", netConf.Network)
	}
	// The node informer: list and watch every Node.
	nodes := client.CoreV1().Nodes()
	w, err := listAndWatch(ctx, "*v1.Node", func(ctx context.Context, o metav1.ListOptions) (string, error) {
		l, err := nodes.List(ctx, o)
		if err != nil {
			return "", err
		}
		return l.ResourceVersion, nil
	}, nodes.Watch, metav1.ListOptions{})
	if err != nil {
		log.Error("reflector.go:205", err, "Failed to watch")
		return 1
	}
	defer w.Stop()
	log.Info("kube.go:490", "Node controller sync successful")

	// The VXLAN backend's Windows checks.
	be := struct {
		Type, Name, MacPrefix string
		VNI, Port             int
		GBP, DirectRouting    bool
	}{VNI: flannelDefaultVNI, Port: flannelVXLANPort, MacPrefix: "0E-2A"}
	if len(netConf.Backend) > 0 {
		if err := json.Unmarshal(netConf.Backend, &be); err != nil {
			return fatal("main.go:345", "Error registering network: error decoding VXLAN backend config: %v", err)
		}
	}
	if !strings.EqualFold(be.Type, "vxlan") {
		return fatal("main.go:345", "Error registering network: backend type %q is not modelled by the simulator (vxlan only)", be.Type)
	}
	switch {
	case be.VNI < flannelDefaultVNI:
		return fatal("main.go:345", "Error registering network: invalid VXLAN backend config. VNI [%v] must be greater than or equal to %v on Windows", be.VNI, flannelDefaultVNI)
	case be.Port != flannelVXLANPort:
		return fatal("main.go:345", "Error registering network: invalid VXLAN backend config. Port [%v] is not supported on Windows. Omit the setting to default to port %v", be.Port, flannelVXLANPort)
	case be.DirectRouting:
		return fatal("main.go:345", "Error registering network: invalid VXLAN backend config. DirectRouting is not supported on Windows")
	case be.GBP:
		return fatal("main.go:345", "Error registering network: invalid VXLAN backend config. GBP is not supported on Windows")
	}
	if be.Name == "" {
		be.Name = fmt.Sprintf("flannel.%v", be.VNI)
	}
	log.Info("vxlan_windows.go:128", fmt.Sprintf("VXLAN config: Name=%s MacPrefix=%s VNI=%d Port=%d GBP=%v DirectRouting=%v", be.Name, be.MacPrefix, be.VNI, be.Port, be.GBP, be.DirectRouting))

	// AcquireLease (kube.go): the node's pod CIDR, then its annotations.
	node, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fatal("main.go:345", "Error registering network: failed to acquire lease: %v", err)
	}
	if node.Spec.PodCIDR == "" {
		return fatal("main.go:345", "Error registering network: failed to acquire lease: node %q pod cidr not assigned", nodeName)
	}
	extIP := *publicIP
	if extIP == "" {
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				extIP = a.Address
			}
		}
	}
	backendData, _ := json.Marshal(map[string]any{"VNI": be.VNI, "VtepMAC": "00:15:5d:00:00:01"})
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		flannelAnnPrefix + "backend-data":        string(backendData),
		flannelAnnPrefix + "backend-type":        "vxlan",
		flannelAnnPrefix + "kube-subnet-manager": "true",
		flannelAnnPrefix + "public-ip":           extIP,
	}}})
	// kube.go AcquireLease patches the annotations through the status
	// subresource, which kube-flannel.yml's ClusterRole allows (nodes/status
	// patch) without patch on nodes.
	if _, err := nodes.Patch(ctx, nodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fatal("main.go:345", "Error registering network: failed to acquire lease: %v", err)
	}
	log.Info("kube.go:560", "Lease acquired", "subnet", node.Spec.PodCIDR)
	// The HNS network (ensureNetwork: an existing one of the same type and
	// prefix is kept, else one is created) and subnet.env. With the host's
	// HNSLostOnReboot fault, creating it fails as on the hosts of
	// sig-windows-tools#89/#94 and flannel#1423 (hcsshim's HcsError
	// wording, ERROR_NOT_FOUND).
	if existing, ok := hnsNetworkByName(p.Host, be.Name); p.Host.Faults().HNSLostOnReboot &&
		(!ok || !strings.EqualFold(existing.Type, "Overlay") || existing.AddressPrefix != node.Spec.PodCIDR) {
		log.Info("device_windows.go:116", fmt.Sprintf("Attempting to create HostComputeNetwork %s", be.Name))
		return fatal("main.go:345", "Error registering network: failed to create VXLAN network: failed to create HostComputeNetwork %s: "+
			"hcnCreateNetwork failed in Win32: Element not found. (0x490)", be.Name)
	}
	if err := putHNSNetwork(p.Host, hnsNetwork{Name: be.Name, Type: "Overlay", AddressPrefix: node.Spec.PodCIDR, VNI: be.VNI}); err != nil {
		return fatal("main.go:345", "Error registering network: failed to create VXLAN network: %v", err)
	}
	env := fmt.Sprintf("FLANNEL_NETWORK=%s\nFLANNEL_SUBNET=%s\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n", netConf.Network, firstHost(node.Spec.PodCIDR))
	// WriteSubnetFile (pkg/subnet/subnet.go): a temporary ".<name>" beside
	// it, renamed into place, so that a reader (kube-proxy's start script)
	// never sees it half written.
	subnetPath := hostPath(*subnetFile)
	tmp := subnetPath[:strings.LastIndex(subnetPath, `\`)+1] + "." + subnetPath[strings.LastIndex(subnetPath, `\`)+1:]
	if err := p.Host.WriteFile(tmp, []byte(env)); err != nil {
		return fatal("main.go:375", "Failed to write subnet file: %v", err)
	}
	if err := p.Host.Rename(tmp, subnetPath); err != nil {
		return fatal("main.go:375", "Failed to write subnet file: %v", err)
	}
	// setNodeNetworkUnavailableFalse: the nodes/status patch.
	now := metav1.Now()
	statusPatch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "FlannelIsUp",
		Message: "Flannel is running on this node", LastTransitionTime: now, LastHeartbeatTime: now,
	}}}})
	if _, err := nodes.PatchStatus(ctx, nodeName, statusPatch); err != nil {
		log.Error("kube.go:620", err, "Failed to set NetworkUnavailable to False")
	}
	log.Info("main.go:420", "Running backend.")
	markReady(p)
	// flanneld has no service control handler: as a service it never
	// reports Running.
	drain(ctx, []watch.Interface{w})
	return 0
}

// flannelClientConfig is kube.go's: --kubeconfig-file (with --kube-api-url
// as the server when given), else in-cluster configuration.
func flannelClientConfig(p *winsim.Process, kubeconfig, apiURL string) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")
	}
	cfg, _, err := loadKubeconfig(p.Host, hostPath(kubeconfig))
	if err != nil {
		return nil, err
	}
	if apiURL != "" {
		cfg.Host = apiURL
	}
	cfg.UserAgent = "flanneld/" + p.Version + " (windows/amd64)"
	return cfg, nil
}

// firstHost is the .1 of a subnet, as subnet.env's FLANNEL_SUBNET says.
func firstHost(cidr string) string {
	ip, n, err := net.ParseCIDR(cidr)
	if err != nil || ip.To4() == nil {
		return cidr
	}
	b := n.IP.To4()
	ones, _ := n.Mask.Size()
	return fmt.Sprintf("%d.%d.%d.%d/%d", b[0], b[1], b[2], b[3]+1, ones)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// flannel: kube-proxy and flanneld as the mode's agents, the flannel CNI
// plugin delegating to win-overlay with host-local IPAM
// (flannel-io/cni-plugin, containernetworking/plugins).
func init() {
	registerAgent("flanneld", runFlanneld)
	registerMode("flannel", simMode{Agents: []string{"kube-proxy", "flanneld"}, CNIPlugins: []string{"flannel", "win-overlay", "host-local"}})
}
