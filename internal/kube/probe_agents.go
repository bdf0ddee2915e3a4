package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostProcessAgentsOn lists the Running HostProcess pods of DaemonSets on
// a node, as "namespace/name": the Windows agents a cluster's own CNI runs
// there (calico-node-windows, antrea-agent-windows and kube-proxy-windows of
// sig-windows-tools all run as HostProcess DaemonSets:
// https://kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod/).
// A node of mode none is probed once they exist. One pod list.
func (c *Client) HostProcessAgentsOn(ctx context.Context, node string) ([]string, error) {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, fmt.Errorf("listing the pods on node %s: %w", node, err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && ownedByDaemonSet(&p) && hostProcess(&p) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return out, nil
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// hostProcess: the pod's security context, or every container's, asks for
// a HostProcess container (a pod may set it either way; all containers of
// a HostProcess pod must be HostProcess).
func hostProcess(p *corev1.Pod) bool {
	if sc := p.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
		return true
	}
	for _, c := range p.Spec.Containers {
		if sc := c.SecurityContext; sc == nil || sc.WindowsOptions == nil || sc.WindowsOptions.HostProcess == nil || !*sc.WindowsOptions.HostProcess {
			return false
		}
	}
	return len(p.Spec.Containers) > 0
}
