package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Calico for Windows as calico-node.exe runs it (projectcalico/calico
// v3.32: node/cmd/calico-node/main.go's flags; -startup is
// node/pkg/lifecycle/startup (startup_windows.go ensureNetworkForOS), -felix
// is Felix with its Windows dataplane (felix/dataplane/windows)), against
// the Kubernetes datastore: Calico's CRDs in the real API server
// (crd.projectcalico.org/v1), read and written with the credentials of the
// kubeconfig KUBECONFIG names.
const (
	// CalicoNetworkName is the HNS network calico-node's startup creates
	// for the vxlan backend (startup_windows.go: networkName "Calico"),
	// which the CNI configuration names with windows_use_single_network.
	CalicoNetworkName = "Calico"
	// calicoDefaultVNI is hns.DefaultVNI (cni-plugin/pkg/dataplane/windows):
	// Windows refuses a VXLAN VNI below it.
	calicoDefaultVNI = 4096
	// calicoWindowsReservedHandle holds a Windows block's first three
	// addresses (network, gateway, the host endpoint) and its last
	// (broadcast): ipam.HostReservedAttr{StartOfBlock: 3, EndOfBlock: 1,
	// Handle: ipam.WindowsReservedHandle} in startup_windows.go and the
	// IPAM plugin.
	calicoWindowsReservedHandle = "windows-reserved-ipam-handle"

	calicoIPv4AddressAnnotation = "projectcalico.org/IPv4Address"
	calicoVXLANTunnelAddrAnn    = "projectcalico.org/IPv4VXLANTunnelAddr"
	calicoVXLANTunnelMACAnn     = "projectcalico.org/VXLANTunnelMACAddr"
)

// calico: calico-node-windows (calico-node.exe) beside kube-proxy, and
// Calico's CNI plugins (cni_calico.go).
func init() {
	registerAgent("calico-node", runCalicoNode)
	registerMode("calico", simMode{Agents: []string{"kube-proxy", "calico-node"}, CNIPlugins: []string{"calico", "calico-ipam"}})
}

// errCalicoStrictAffinity is libcalico-go/lib/ipam/ipam.go's
// ErrStrictAffinity: GetIPAMConfig refuses a Windows host unless the IPAM
// configuration's strictAffinity is true.
var errCalicoStrictAffinity = errors.New("global strict affinity should not be false for Windows node")

func calicoGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: resource}
}

// calicoClients are calico-node's clients: libcalico-go's Kubernetes
// datastore (DATASTORE_TYPE=kubernetes, KUBECONFIG) as a dynamic client for
// Calico's CRDs and a clientset for Nodes.
type calicoClients struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newCalicoClients(p *winsim.Process) (*calicoClients, error) {
	// libcalico-go/lib/apiconfig: DATASTORE_TYPE defaults to etcdv3.
	if ds := p.Env["DATASTORE_TYPE"]; ds != "kubernetes" {
		if ds == "" {
			ds = "etcdv3"
		}
		return nil, fmt.Errorf("datastore type %q is not modelled by the simulator (DATASTORE_TYPE=kubernetes only)", ds)
	}
	kc := p.Env["KUBECONFIG"]
	if kc == "" {
		return nil, errors.New("in-cluster configuration is not modelled by the simulator: set KUBECONFIG")
	}
	cfg, _, err := loadKubeconfig(p.Host, hostPath(kc))
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "calico-node/" + p.Version + " (windows/amd64)"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &calicoClients{kube: kube, dyn: dyn}, nil
}

// runCalicoNode is calico-node.exe: -startup [-complete-startup] and -felix
// are modelled; every other mode is refused.
func runCalicoNode(ctx context.Context, p *winsim.Process) int {
	log := newLogger(p.Stderr)
	fs := flag.NewFlagSet("Calico", flag.ContinueOnError)
	var errOut strings.Builder
	fs.SetOutput(&errOut)
	modes := map[string]*bool{}
	for _, n := range []string{"v", "startup", "complete-startup", "felix", "confd", "shutdown", "monitor-token", "node-services",
		"felix-live", "felix-ready", "bird-live", "bird-ready", "allocate-tunnel-addrs", "init", "show-status"} {
		modes[n] = fs.Bool(n, false, "")
	}
	if err := fs.Parse(p.Args); err != nil {
		fmt.Fprint(p.Stderr, errOut.String())
		return 2
	}
	switch {
	case *modes["v"]:
		fmt.Fprintln(p.Stdout, p.Version)
		return 0
	case *modes["startup"]:
		return calicoStartup(ctx, p, log, *modes["complete-startup"])
	case *modes["felix"]:
		return calicoFelix(ctx, p, log)
	}
	var set []string
	fs.Visit(func(f *flag.Flag) { set = append(set, "-"+f.Name) })
	log.Error("main.go:205", fmt.Errorf("calico-node %s is not modelled by the simulator (-startup, -felix only)", strings.Join(set, " ")), "")
	return 1
}

func calicoNodeName(p *winsim.Process) string {
	// node/pkg/lifecycle/utils DetermineNodeName: NODENAME, then HOSTNAME,
	// then the host's name, lower-cased.
	for _, k := range []string{"NODENAME", "HOSTNAME"} {
		if v := strings.TrimSpace(p.Env[k]); v != "" {
			return strings.ToLower(v)
		}
	}
	return strings.ToLower(p.Host.ComputerName())
}

// calicoStartup is calico-node -startup on Windows: the node's address,
// then ensureNetworkForOS for the vxlan backend (an affine IPAM block, the
// "Calico" Overlay HNS network over it, the VXLAN tunnel address), and with
// -complete-startup the NetworkUnavailable condition.
func calicoStartup(ctx context.Context, p *winsim.Process, log *logger, complete bool) int {
	fatal := func(file string, err error, msg string) int {
		log.Error(file, err, msg)
		return 1
	}
	c, err := newCalicoClients(p)
	if err != nil {
		return fatal("startup.go:120", err, "Failed to create Calico API client")
	}
	nodeName := calicoNodeName(p)
	log.Info("startup.go:241", "Using node name: "+nodeName)
	node, err := c.kube.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fatal("startup.go:160", err, "Unable to query node configuration")
	}
	var nodeIP string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	backend := p.Env["CALICO_NETWORKING_BACKEND"]
	switch backend {
	case "vxlan":
	case "none":
		log.Info("startup_windows.go:54", "Backend networking is none, no network setup needed.")
	case "windows-bgp":
		return fatal("startup_windows.go:99", errors.New("the windows-bgp backend (confd, BGP peering) is not modelled by the simulator"), "Unable to ensure network for os")
	default:
		log.Error("startup_windows.go:108", errors.New("invalid backend configuration"), "Invalid backend networking type", "backend", backend)
		return fatal("startup.go:244", errors.New("invalid backend configuration"), "Unable to ensure network for os")
	}
	annotations := map[string]string{calicoIPv4AddressAnnotation: nodeIP + "/32"}
	if backend == "vxlan" {
		vni, err := strconv.ParseInt(p.Env["VXLAN_VNI"], 10, 64)
		if err != nil {
			return fatal("startup.go:244", err, "Unable to ensure network for os")
		}
		block, err := calicoEnsureBlock(ctx, c, nodeName)
		if err != nil {
			return fatal("startup.go:244", err, "Unable to ensure network for os")
		}
		log.Info("ipam.go:2510", fmt.Sprintf("Host's block '%s' ", block))
		if vni == 0 {
			vni = calicoDefaultVNI
		} else if vni < calicoDefaultVNI {
			return fatal("startup.go:244", errors.New("Windows does not support VXLANVNI < 4096"), "Unable to ensure network for os")
		}
		if err := calicoEnsureVXLANNetwork(p.Host, block, int(vni), nodeIP); err != nil {
			return fatal("startup.go:244", err, "Unable to ensure network for os")
		}
		// EnsureVXLANTunnelAddr (dataplane_windows.go): the block's .1 and
		// the network's distributed router MAC.
		annotations[calicoVXLANTunnelAddrAnn] = nthAddr(block, 1).String()
		annotations[calicoVXLANTunnelMACAnn] = calicoVTEPMAC(nodeIP)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if _, err := c.kube.CoreV1().Nodes().Patch(ctx, nodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fatal("startup.go:290", err, "Unable to set node resource configuration")
	}
	log.Info("startup_windows.go:112", "Ensure network is done.")
	if complete {
		// utils.SetNodeNetworkUnavailableCondition (node/pkg/lifecycle/utils).
		now := metav1.Now()
		status, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
			Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "CalicoIsUp",
			Message: "Calico is running on this node", LastTransitionTime: now, LastHeartbeatTime: now,
		}}}})
		if _, err := c.kube.CoreV1().Nodes().PatchStatus(ctx, nodeName, status); err != nil {
			return fatal("startup.go:260", err, "Unable to set NetworkUnavailable to False")
		}
	}
	return 0
}

// calicoIPAMConfig is GetIPAMConfig on a Windows host: with no IPAMConfig
// it creates the default (strictAffinity false, autoAllocateBlocks true),
// and it refuses strictAffinity false.
func calicoIPAMConfig(ctx context.Context, c *calicoClients) error {
	res := c.dyn.Resource(calicoGVR("ipamconfigs"))
	cfg, err := res.Get(ctx, "default", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "IPAMConfig",
			"metadata": map[string]any{"name": "default"}, "spec": map[string]any{"strictAffinity": false, "autoAllocateBlocks": true}}}
		cfg, err = res.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cfg, err = res.Get(ctx, "default", metav1.GetOptions{})
		}
	}
	if err != nil {
		return err
	}
	if strict, _, _ := unstructured.NestedBool(cfg.Object, "spec", "strictAffinity"); !strict {
		return errCalicoStrictAffinity
	}
	return nil
}

// calicoEnsureBlock is ipam.EnsureBlock for a Windows host: the host's
// confirmed affine block, else a new block claimed from the first enabled
// IPv4 VXLAN pool (the IPAMBlock with the Windows reserved addresses, then
// the BlockAffinity). Upstream starts its search at a block seeded by the
// host name (randomBlockGenerator); the simulator takes the first free one.
// IPReservations are not modelled (none are read).
func calicoEnsureBlock(ctx context.Context, c *calicoClients, node string) (netip.Prefix, error) {
	if err := calicoIPAMConfig(ctx, c); err != nil {
		return netip.Prefix{}, err
	}
	affs, err := c.dyn.Resource(calicoGVR("blockaffinities")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return netip.Prefix{}, err
	}
	claimed := map[string]bool{}
	for _, a := range affs.Items {
		n, _, _ := unstructured.NestedString(a.Object, "spec", "node")
		cidr, _, _ := unstructured.NestedString(a.Object, "spec", "cidr")
		state, _, _ := unstructured.NestedString(a.Object, "spec", "state")
		claimed[cidr] = true
		if n == node && state == "confirmed" {
			return netip.ParsePrefix(cidr)
		}
	}
	blocks, err := c.dyn.Resource(calicoGVR("ipamblocks")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return netip.Prefix{}, err
	}
	for _, b := range blocks.Items {
		cidr, _, _ := unstructured.NestedString(b.Object, "spec", "cidr")
		claimed[cidr] = true
	}
	pools, err := c.dyn.Resource(calicoGVR("ippools")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return netip.Prefix{}, err
	}
	sort.Slice(pools.Items, func(i, j int) bool { return pools.Items[i].GetName() < pools.Items[j].GetName() })
	for _, pool := range pools.Items {
		cidr, _, _ := unstructured.NestedString(pool.Object, "spec", "cidr")
		disabled, _, _ := unstructured.NestedBool(pool.Object, "spec", "disabled")
		size, found, _ := unstructured.NestedInt64(pool.Object, "spec", "blockSize")
		if !found {
			size = 26
		}
		pfx, err := netip.ParsePrefix(cidr)
		if err != nil || disabled || !pfx.Addr().Is4() || int(size) < pfx.Bits() || size > 30 {
			continue
		}
		for b := netip.PrefixFrom(pfx.Masked().Addr(), int(size)); pfx.Contains(b.Addr()); b = nextBlock(b) {
			if claimed[b.String()] {
				continue
			}
			if err := calicoClaimBlock(ctx, c, node, b); apierrors.IsAlreadyExists(err) {
				continue // another host got there first
			} else if err != nil {
				return netip.Prefix{}, err
			}
			return b, nil
		}
	}
	return netip.Prefix{}, errors.New("no more free affine blocks and strict affinity enabled")
}

func calicoClaimBlock(ctx context.Context, c *calicoClients, node string, b netip.Prefix) error {
	name := strings.NewReplacer(".", "-", "/", "-").Replace(b.String())
	size := 1 << (32 - b.Bits())
	allocations := make([]any, size)
	var unallocated []any
	for i := range size {
		if i < 3 || i == size-1 {
			allocations[i] = int64(0)
		} else {
			unallocated = append(unallocated, int64(i))
		}
	}
	block := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "IPAMBlock",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"cidr": b.String(), "affinity": "host:" + node, "strictAffinity": true, "deleted": false,
			"allocations": allocations, "unallocated": unallocated,
			"attributes": []any{map[string]any{"handle_id": calicoWindowsReservedHandle, "secondary": map[string]any{"note": "windows host rsvd"}}}}}}
	if _, err := c.dyn.Resource(calicoGVR("ipamblocks")).Create(ctx, block, metav1.CreateOptions{}); err != nil {
		return err
	}
	aff := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "BlockAffinity",
		"metadata": map[string]any{"name": node + "-" + name},
		"spec":     map[string]any{"state": "confirmed", "node": node, "cidr": b.String(), "deleted": "false", "type": "host"}}}
	_, err := c.dyn.Resource(calicoGVR("blockaffinities")).Create(ctx, aff, metav1.CreateOptions{})
	return err
}

func nextBlock(b netip.Prefix) netip.Prefix {
	a := b.Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += 1 << (32 - b.Bits())
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), b.Bits())
}

func nthAddr(b netip.Prefix, n int) netip.Addr {
	a := b.Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// calicoVTEPMAC stands for the distributed router MAC HNS gives the
// network's management address (GetDRMACAddr reads it from HNS): the
// sandbox derives it from the host's address.
func calicoVTEPMAC(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is4() {
		return "00:15:5d:00:00:01"
	}
	b := a.As4()
	return fmt.Sprintf("00:15:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3])
}

// calicoEnsureVXLANNetwork is SetupVxlanNetwork (dataplane_windows.go): an
// existing "Calico" network of type Overlay over the block is kept, else it
// is (re)created with the block as its subnet and the VNI as its VSID, and
// the host's remote endpoint Calico_ep takes the block's .2 with the
// management address as its provider address.
func calicoEnsureVXLANNetwork(files FileSystem, block netip.Prefix, vni int, nodeIP string) error {
	if n, ok := hnsNetworkByName(files, CalicoNetworkName); ok && strings.EqualFold(n.Type, "Overlay") && n.AddressPrefix == block.String() && n.VNI == vni {
		return nil
	}
	if err := putHNSNetwork(files, hnsNetwork{Name: CalicoNetworkName, Type: "Overlay", AddressPrefix: block.String(), VNI: vni}); err != nil {
		return fmt.Errorf("failed to create HNSNetwork %s: %w", CalicoNetworkName, err)
	}
	var stale []string
	for _, ep := range winsim.HNSEndpoints(files) {
		if strings.EqualFold(ep.Name, CalicoNetworkName+"_ep") {
			stale = append(stale, ep.ID)
		}
	}
	if err := winsim.DeleteHNSEndpoints(files, stale...); err != nil {
		return err
	}
	_, err := winsim.CreateHNSEndpoint(files, winsim.HNSEndpoint{Name: CalicoNetworkName + "_ep", Network: CalicoNetworkName,
		IP: nthAddr(block, 2).String(), Remote: true, ProviderAddress: nodeIP})
	return err
}

// calicoFelix is Felix with the Windows dataplane, as far as the overlay
// goes: it needs the HNS network startup made (the vxlan manager finds it
// by KUBE_NETWORK's regular expression, "Calico.*"), reads
// FelixConfiguration default's VXLAN VNI, and keeps one RemoteSubnetRoute
// policy per remote node's affine block with that node's VTEP
// (vxlan_mgr.go CompleteDeferredWork), following Nodes and BlockAffinities
// on watches. Network policy (ACLs) is not modelled.
func calicoFelix(ctx context.Context, p *winsim.Process, log *logger) int {
	c, err := newCalicoClients(p)
	if err != nil {
		log.Error("config_params.go:420", err, "Failed to create datastore client")
		return 1
	}
	hostname := strings.ToLower(p.Env["FELIX_FELIXHOSTNAME"])
	if hostname == "" {
		hostname = calicoNodeName(p)
	}
	vni := calicoDefaultVNI
	if fc, err := c.dyn.Resource(calicoGVR("felixconfigurations")).Get(ctx, "default", metav1.GetOptions{}); err == nil {
		if v, found, _ := unstructured.NestedInt64(fc.Object, "spec", "vxlanVNI"); found {
			vni = int(v)
		}
	} else if !apierrors.IsNotFound(err) {
		log.Error("config_batcher.go:61", err, "Failed to read FelixConfiguration")
		return 1
	}
	if env := p.Env["FELIX_VXLANVNI"]; env != "" {
		if v, err := strconv.Atoi(env); err == nil {
			vni = v
		}
	}
	pattern := p.Env["KUBE_NETWORK"]
	if pattern == "" {
		pattern = "Calico.*"
	}
	nodes := c.kube.CoreV1().Nodes()
	affs := c.dyn.Resource(calicoGVR("blockaffinities"))
	nodeWatch, err := nodes.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		log.Error("watchercache.go:125", err, "Failed to watch Nodes")
		return 1
	}
	defer nodeWatch.Stop()
	affWatch, err := affs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		log.Error("watchercache.go:125", err, "Failed to watch BlockAffinities")
		return 1
	}
	defer affWatch.Stop()
	sync := func() error {
		return calicoProgramRoutes(ctx, p, nodes, affs, hostname, pattern, vni)
	}
	if err := sync(); err != nil {
		log.Error("win_dataplane.go:330", err, "Failed to apply dataplane updates")
		return 1
	}
	log.Info("vxlan_mgr.go:240", "All VXLAN route updates succeeded.")
	markReady(p)
	for {
		select {
		case <-ctx.Done():
			return 0
		case _, ok := <-nodeWatch.ResultChan():
			if !ok {
				return 1
			}
		case _, ok := <-affWatch.ResultChan():
			if !ok {
				return 1
			}
		}
		if err := sync(); err != nil {
			log.Error("win_dataplane.go:330", err, "Failed to apply dataplane updates")
		}
	}
}

func calicoProgramRoutes(ctx context.Context, p *winsim.Process, nodes interface {
	List(context.Context, metav1.ListOptions) (*corev1.NodeList, error)
}, affs dynamic.NamespaceableResourceInterface, hostname, pattern string, vni int) error {
	var network *hnsNetwork
	for _, n := range readHNS(p.Host) {
		// vxlan_mgr.go: networkName is a regexp.Regexp, matched anywhere.
		if ok, err := regexp.MatchString(pattern, n.Name); err != nil {
			return fmt.Errorf("KUBE_NETWORK %q: %w", pattern, err)
		} else if ok {
			network = &n
			break
		}
	}
	if network == nil {
		return fmt.Errorf("didn't find any HNS networks matching regular expression %s", pattern)
	}
	nodeList, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	affList, err := affs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	vteps := map[string]corev1.Node{}
	for _, n := range nodeList.Items {
		if n.Name != hostname && n.Annotations[calicoVXLANTunnelAddrAnn] != "" && n.Annotations[calicoVXLANTunnelMACAnn] != "" {
			vteps[n.Name] = n
		}
	}
	var routes []winsim.HNSNetworkPolicy
	for _, a := range affList.Items {
		node, _, _ := unstructured.NestedString(a.Object, "spec", "node")
		cidr, _, _ := unstructured.NestedString(a.Object, "spec", "cidr")
		state, _, _ := unstructured.NestedString(a.Object, "spec", "state")
		vtep, ok := vteps[node]
		if !ok || state != "confirmed" {
			continue // no route to ourselves, or a route without its VTEP
		}
		parent, _, _ := strings.Cut(vtep.Annotations[calicoIPv4AddressAnnotation], "/")
		routes = append(routes, winsim.HNSNetworkPolicy{Type: "RemoteSubnetRoute", DestinationPrefix: cidr, IsolationID: vni,
			DistributedRouterMacAddress: strings.ReplaceAll(vtep.Annotations[calicoVXLANTunnelMACAnn], ":", "-"), ProviderAddress: parent})
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].DestinationPrefix < routes[j].DestinationPrefix })
	network.Policies = routes
	return putHNSNetwork(p.Host, *network)
}
