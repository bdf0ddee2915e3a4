package kube

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Thresholds of requested over allocatable on a Linux node. Once Windows
// workers join, pods that need Linux (system Deployments, Linux
// DaemonSets, controllers pinned to Linux) can only move to Linux nodes; a
// node already near full leaves them Pending (seed 000: 1970m of 2000m CPU
// requested on a 2-vCPU control plane).
const (
	headroomFail = 0.95
	headroomWarn = 0.85
)

// nodeUsage is what the pods bound to one node request against its allocatable.
type nodeUsage struct {
	name                         string
	cpuRequested, cpuAllocatable int64 // millicores
	memRequested, memAllocatable int64 // bytes
}

func (u nodeUsage) cpuRatio() float64 { return ratio(u.cpuRequested, u.cpuAllocatable) }
func (u nodeUsage) memRatio() float64 { return ratio(u.memRequested, u.memAllocatable) }

func ratio(requested, allocatable int64) float64 {
	if allocatable <= 0 {
		return 0
	}
	return float64(requested) / float64(allocatable)
}

// checkLinuxHeadroom: one check per Linux node.
func (cl *Cluster) checkLinuxHeadroom() []Check {
	usage := cl.linuxNodeUsage()
	if len(usage) == 0 {
		return []Check{{
			ID: CheckLinuxHeadroom, Status: StatusWarn,
			Message: "There are no Linux nodes: the pods that need Linux (CoreDNS, the network plugin's controllers, metrics-server) have nowhere to run once Windows nodes join.",
			Remedy:  "Add at least one Linux node (a control-plane node that accepts workloads, or a Linux worker) with room for the system pods.",
		}}
	}
	out := make([]Check, 0, len(usage))
	for _, u := range usage {
		c := Check{ID: CheckLinuxHeadroom + ":" + u.name}
		if u.cpuAllocatable <= 0 || u.memAllocatable <= 0 {
			c.Status = StatusWarn
			c.Message = fmt.Sprintf("Linux node %s reports no allocatable CPU or memory (status.allocatable), so its headroom is unknown; its kubelet may not have reported yet.", u.name)
			c.Remedy = fmt.Sprintf("Check the kubelet on %s: kubectl describe node %s.", u.name, u.name)
			out = append(out, c)
			continue
		}
		worst := max(u.cpuRatio(), u.memRatio())
		found := fmt.Sprintf("Pods on Linux node %s request %dm of %dm allocatable CPU (%.0f%%) and %s of %s allocatable memory (%.0f%%)",
			u.name, u.cpuRequested, u.cpuAllocatable, 100*u.cpuRatio(), mebibytes(u.memRequested), mebibytes(u.memAllocatable), 100*u.memRatio())
		switch {
		case worst >= headroomFail:
			c.Status = StatusFail
			c.Message = found + fmt.Sprintf(": at least %.0f%% is used, so the pods that need Linux cannot move onto it when Windows nodes join and stay Pending.", 100*headroomFail)
		case worst >= headroomWarn:
			c.Status = StatusWarn
			c.Message = found + fmt.Sprintf(": over %.0f%% is used, little room is left for the pods that need Linux once Windows nodes join.", 100*headroomWarn)
		default:
			c.Status = StatusPass
			c.Message = found + "."
		}
		if c.Status != StatusPass {
			c.Remedy = fmt.Sprintf("Give node %s more CPU or memory (for a VM: more vCPUs or RAM, e.g. 4 vCPUs instead of 2; "+
				"Tanzu: VSPHERE_CONTROL_PLANE_NUM_CPUS), add Linux worker nodes, or lower the requests of the pods on it (kubectl describe node %s lists them).", u.name, u.name)
		}
		out = append(out, c)
	}
	return out
}

// linuxNodeUsage sums the requests of the pods bound to each Linux node,
// sorted by node name. Every node that is not Windows counts as Linux.
func (cl *Cluster) linuxNodeUsage() []nodeUsage {
	byNode := map[string]*nodeUsage{}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		if IsWindowsNode(n) {
			continue
		}
		byNode[n.Name] = &nodeUsage{
			name:           n.Name,
			cpuAllocatable: n.Status.Allocatable.Cpu().MilliValue(),
			memAllocatable: n.Status.Allocatable.Memory().Value(),
		}
	}
	for i := range cl.Pods {
		p := &cl.Pods[i]
		u, ok := byNode[p.Spec.NodeName]
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req := podRequests(&p.Spec)
		u.cpuRequested += req.Cpu().MilliValue()
		u.memRequested += req.Memory().Value()
	}
	out := make([]nodeUsage, 0, len(byNode))
	for _, u := range byNode {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b nodeUsage) int { return cmp.Compare(a.name, b.name) })
	return out
}

// podRequests is what the scheduler reserves for a pod: pod-level requests
// when set, else the larger of the regular containers plus restartable init
// (sidecar) containers and the largest init container plus the sidecars
// started before it; plus the RuntimeClass overhead.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		var q resource.Quantity
		if spec.Resources != nil {
			if v, ok := spec.Resources.Requests[name]; ok {
				q = v.DeepCopy()
			}
		}
		if q.IsZero() {
			q = containerRequests(spec, name)
		}
		if o, ok := spec.Overhead[name]; ok {
			q.Add(o)
		}
		total[name] = q
	}
	return total
}

func containerRequests(spec *corev1.PodSpec, name corev1.ResourceName) resource.Quantity {
	var regular, sidecars, initPeak resource.Quantity
	for _, c := range spec.Containers {
		if v, ok := c.Resources.Requests[name]; ok {
			regular.Add(v)
		}
	}
	for _, c := range spec.InitContainers {
		v := c.Resources.Requests[name]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(v)
			continue
		}
		peak := v.DeepCopy()
		peak.Add(sidecars)
		if peak.Cmp(initPeak) > 0 {
			initPeak = peak
		}
	}
	regular.Add(sidecars)
	if initPeak.Cmp(regular) > 0 {
		return initPeak
	}
	return regular
}

func mebibytes(b int64) string {
	return fmt.Sprintf("%dMi", b/(1<<20))
}
