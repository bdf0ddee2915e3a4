package kube

import (
	"fmt"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
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
		if cl.CNI.Name == networking.PluginCalico {
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

// checkCNI judges the cluster's network plugin for Windows nodes
// (networking.CheckPlugin): a flannel overlay must use the VXLAN settings
// HNS accepts, another plugin must have Windows components.
func (cl *Cluster) checkCNI() Check {
	v := networking.CheckPlugin(cl.CNI, cl.daemonSetsIn)
	return Check{ID: CheckCNI, Status: v.Status, Message: v.Message, Remedy: v.Remedy}
}

// daemonSetsIn names the DaemonSets of a namespace.
func (cl *Cluster) daemonSetsIn(namespace string) []string {
	var out []string
	for _, ds := range cl.DaemonSets {
		if ds.Namespace == namespace {
			out = append(out, ds.Name)
		}
	}
	return out
}
