package kube

import (
	"fmt"
	"strings"
)

// checkNodeCIDRAllocation: a Windows node's CNI (flannel, win-bridge,
// win-overlay, Antrea) takes the node's pod network from spec.podCIDR, which
// only the controller manager's node IPAM fills in. Without it the node
// joins but no pod gets an address (seed 001).
func (cl *Cluster) checkNodeCIDRAllocation() Check {
	c := Check{ID: CheckNodeCIDRAllocation}
	cidr := "<pod network, e.g. 10.244.0.0/16>"
	if len(cl.Network.ClusterCIDRs) > 0 {
		cidr = strings.Join(cl.Network.ClusterCIDRs, ",")
	}
	remedy := fmt.Sprintf("Run kube-controller-manager with --allocate-node-cidrs=true --cluster-cidr=%s "+
		"(kubeadm: set networking.podSubnet = %s in the ClusterConfiguration, `kubeadm init --pod-network-cidr=%s`); "+
		"once it runs with them it allocates a pod CIDR to every node that has none.", cidr, cidr, cidr)

	missing := cl.nodesWithoutPodCIDR()
	allocated := cl.nodeWithPodCIDR()
	switch {
	case allocated != nil && len(missing) == 0:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("All %d nodes have a pod CIDR (spec.podCIDR), for example %s: %s.", len(cl.Nodes), allocated.Name, allocated.Spec.PodCIDR)
		if pending := len(cl.Nodes) - cl.nodesAllocated(); pending > 0 {
			c.Message = fmt.Sprintf("Nodes have a pod CIDR (spec.podCIDR), for example %s: %s; %d registered in the last %s and are being allocated one.",
				allocated.Name, allocated.Spec.PodCIDR, pending, podCIDRGrace)
		}
	case len(missing) > 0:
		c.Status, c.Remedy = StatusFail, remedy
		c.Message = fmt.Sprintf("%d of %d nodes have no pod CIDR (spec.podCIDR): %s. The controller manager does not allocate node pod CIDRs, "+
			"so a Windows node would join without a pod network and its pods would get no IP address.",
			len(missing), len(cl.Nodes), listNames(missing))
		if cl.CNI.Name == CNICalico {
			// Calico's own IPAM hands out addresses without spec.podCIDR.
			c.Status = StatusWarn
			c.Message += " Calico assigns pod addresses from its own IP pools, so this matters only with host-local IPAM."
		}
	default:
		enabled, known := cl.NodeCIDRAllocation()
		switch {
		case known && enabled:
			c.Status = StatusPass
			c.Message = "There are no nodes yet; kube-controller-manager runs with --allocate-node-cidrs=true."
		case known:
			c.Status, c.Remedy = StatusFail, remedy
			c.Message = "There are no nodes yet, and kube-controller-manager runs with --allocate-node-cidrs=false: nodes would join without a pod CIDR."
		default:
			c.Status, c.Remedy = StatusWarn, "Make sure kube-controller-manager runs with --allocate-node-cidrs=true --cluster-cidr="+cidr+
				"; this check can tell once a node exists."
			c.Message = "There are no nodes yet and the controller manager's flags are not visible, so whether it allocates node pod CIDRs is unknown."
		}
	}
	return c
}

// checkCNI: Windows joins a flannel overlay only through HNS, which accepts
// VXLAN with VNI 4096 on UDP port 4789; flannel's defaults (VNI 1, port 8472)
// leave Windows pods unreachable (seed 004).
func (cl *Cluster) checkCNI() Check {
	c := Check{ID: CheckCNI}
	switch cl.CNI.Name {
	case CNIFlannel:
		return cl.checkFlannel()
	case CNICalico, CNIAntrea:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("%s detected (%s); install its Windows components on the Windows nodes.", titleCase(cl.CNI.Name), cl.CNI.Source)
	default:
		c.Status = StatusWarn
		c.Message = "No flannel (ConfigMap kube-flannel-cfg), Calico (DaemonSet calico-node) or Antrea (DaemonSet antrea-agent) found: " +
			"the network plugin is unknown, so its Windows support cannot be checked."
		c.Remedy = "Install a network plugin with Windows support before adding Windows nodes: flannel with the vxlan backend " +
			"(VNI 4096, Port 4789), Calico or Antrea. If yours supports Windows, skip this check (\"" + CheckCNI + "\")."
	}
	return c
}

func (cl *Cluster) checkFlannel() Check {
	f := cl.CNI.Flannel
	c := Check{ID: CheckCNI}
	namespace, _, _ := strings.Cut(f.ConfigMap, "/")
	restart := fmt.Sprintf("kubectl -n %s rollout restart daemonset %s", namespace, cl.flannelDaemonSet(namespace))
	wantBackend := fmt.Sprintf(`"Backend": {"Type": "vxlan", "VNI": %d, "Port": %d}`, WindowsVXLANVNI, WindowsVXLANPort)
	switch {
	case f.Backend == "vxlan" && f.VNI == WindowsVXLANVNI && f.Port == WindowsVXLANPort:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("flannel (ConfigMap %s) uses the vxlan backend with VNI %d and port %d, as Windows requires.", f.ConfigMap, f.VNI, f.Port)
	case f.Backend == "vxlan":
		c.Status = StatusFail
		c.Message = fmt.Sprintf("flannel (ConfigMap %s, key %s) uses the vxlan backend with VNI %d and port %d; "+
			"Windows overlay networking only works with VNI %d and port %d, so Windows pods would be unreachable.",
			f.ConfigMap, flannelNetConf, f.VNI, f.Port, WindowsVXLANVNI, WindowsVXLANPort)
		c.Remedy = fmt.Sprintf("In ConfigMap %s, key %s, set %s, then restart flannel on every node: %s.", f.ConfigMap, flannelNetConf, wantBackend, restart)
	case f.Backend == "host-gw":
		c.Status = StatusPass
		c.Message = fmt.Sprintf("flannel (ConfigMap %s) uses the host-gw backend: Windows nodes join with l2bridge networking "+
			"and must share a layer-2 network with the Linux nodes.", f.ConfigMap)
	default:
		c.Status = StatusFail
		c.Message = fmt.Sprintf("flannel (ConfigMap %s, key %s) uses the %s backend, which flannel does not implement on Windows (vxlan and host-gw only).",
			f.ConfigMap, flannelNetConf, f.Backend)
		c.Remedy = fmt.Sprintf("In ConfigMap %s, key %s, set %s, then restart flannel on every node: %s.", f.ConfigMap, flannelNetConf, wantBackend, restart)
	}
	return c
}

// flannelDaemonSet names flannel's DaemonSet in namespace for the restart
// command: kube-flannel-ds in current manifests, kube-flannel-ds-<arch> in
// older ones.
func (cl *Cluster) flannelDaemonSet(namespace string) string {
	for _, ds := range cl.DaemonSets {
		if ds.Namespace == namespace && strings.Contains(ds.Name, "flannel") {
			return ds.Name
		}
	}
	return "kube-flannel-ds"
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
