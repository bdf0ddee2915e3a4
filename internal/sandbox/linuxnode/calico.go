package linuxnode

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// The cluster's network plugin on the Linux side (Options.CNI).
const (
	// CNIFlannel is flannel's Linux side: the node annotations flanneld's
	// kube subnet manager writes. The default.
	CNIFlannel = "flannel"
	// CNICalico is Calico's Linux side in the Kubernetes datastore, as an
	// operator or manifest install of Calico leaves it for Windows nodes to
	// join (docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator):
	// Calico's CRDs, a VXLAN IP pool, strict affinity, Felix's
	// configuration, the calico-node DaemonSet, and this node's IPAM block
	// and VXLAN tunnel as calico-node's startup claims them.
	CNICalico = "calico"
)

// Calico's objects as the sandbox installs them.
const (
	// CalicoNamespace and CalicoNodeDaemonSet are where an operator install
	// runs calico-node (tigera/operator pkg/common: CalicoNamespace
	// "calico-system", pkg/render/node.go "calico-node").
	CalicoNamespace     = "calico-system"
	CalicoNodeDaemonSet = "calico-node"
	// CalicoNodeImage is pinned by its digest, as a cluster that pins its
	// images runs it: quay.io/calico/node v3.32.1's multi-architecture
	// index (the digest public pinned installs of Calico v3.32.1's
	// manifests/calico.yaml resolve the tag to; not re-resolved against
	// quay.io from the sandbox, which runs no registry client).
	CalicoNodeImage = "quay.io/calico/node:v3.32.1@sha256:7f874b3f0b540c2b523aea9961ef5e2f43b0af9056a47874c916d6cf348168d3"
	// CalicoPoolName is the operator's default pool name
	// (pkg/controller/ippool: "default-ipv4-ippool").
	CalicoPoolName = "default-ipv4-ippool"
	// CalicoPoolCIDR is the cluster CIDR, as the operator's default pool
	// takes it from kubeadm's podSubnet.
	CalicoPoolCIDR = "10.244.0.0/16"
	// CalicoBlockSize is Calico's default IPv4 block size (/26).
	CalicoBlockSize = 26
	// CalicoBlock is this node's affine block: the pool's first, which
	// calico-node's startup claims on the first node.
	CalicoBlock = "10.244.0.0/26"
	// CalicoVXLANTunnelAddr is this node's VXLAN tunnel address: the first
	// address of its block, which calico-node's IPAM hands to the tunnel
	// (node/pkg/allocateip) before any pod.
	CalicoVXLANTunnelAddr = "10.244.0.0"
	// CalicoVTEPMAC is the VTEP's MAC calico-node records.
	CalicoVTEPMAC = "66:0e:a5:5f:28:0a"
	// CalicoVXLANVNI is what FelixConfiguration default carries: the
	// operator writes Felix's default 4096 (core_controller.go fillDefaults).
	CalicoVXLANVNI = 4096
)

// Calico's annotations on a Node in the Kubernetes datastore
// (libcalico-go/lib/backend/k8s/resources/node.go).
const (
	CalicoIPv4AddressAnnotation     = "projectcalico.org/IPv4Address"
	CalicoVXLANTunnelAddrAnnotation = "projectcalico.org/IPv4VXLANTunnelAddr"
	CalicoVXLANTunnelMACAnnotation  = "projectcalico.org/VXLANTunnelMACAddr"
)

//go:embed calico/crds.yaml
var calicoCRDs string

// CalicoGVR is a crd.projectcalico.org/v1 resource.
func CalicoGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: resource}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CalicoBlockName is an IPAMBlock's name (libcalico-go/lib/names
// CIDRToName: dots and the slash become dashes).
func CalicoBlockName(cidr string) string {
	return strings.NewReplacer(".", "-", "/", "-").Replace(cidr)
}

// CalicoAffinityName is a BlockAffinity's name: "<node>-<block name>"
// (libcalico-go/lib/backend/k8s/resources/ipam_affinity_v1.go).
func CalicoAffinityName(node, cidr string) string { return node + "-" + CalicoBlockName(cidr) }

// installCalico installs Calico's Linux side (see CNICalico) with an admin
// client, and returns once its CRDs are Established.
func (n *Node) installCalico(ctx context.Context, dyn dynamic.Interface) error {
	var names []string
	for _, doc := range strings.Split(calicoCRDs, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return fmt.Errorf("calico/crds.yaml: %w", err)
		}
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := dyn.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", obj.GetName(), err)
		}
		names = append(names, obj.GetName())
	}
	if err := waitEstablished(ctx, dyn, names); err != nil {
		return err
	}
	objects := []struct {
		resource, kind string
		obj            map[string]any
	}{
		// The operator's default pool for a VXLAN install
		// (docs.tigera.io windows-calico/operator; custom-resources.yaml
		// with encapsulation VXLAN): VXLAN always, no IP-in-IP, NAT out.
		{"ippools", "IPPool", map[string]any{"metadata": map[string]any{"name": CalicoPoolName}, "spec": map[string]any{
			"cidr": CalicoPoolCIDR, "blockSize": CalicoBlockSize, "vxlanMode": "Always", "ipipMode": "Never",
			"natOutgoing": true, "nodeSelector": "all()"}}},
		// The Windows guide's first step: strict affinity.
		{"ipamconfigs", "IPAMConfig", map[string]any{"metadata": map[string]any{"name": "default"}, "spec": map[string]any{
			"strictAffinity": true, "autoAllocateBlocks": true}}},
		{"felixconfigurations", "FelixConfiguration", map[string]any{"metadata": map[string]any{"name": "default"}, "spec": map[string]any{
			"vxlanVNI": CalicoVXLANVNI}}},
		// This node's block as calico-node's IPAM claims it: a confirmed
		// host affinity and the block, with the tunnel address and the DNS
		// pod's address allocated (libcalico-go/lib/ipam/ipam_block.go).
		{"blockaffinities", "BlockAffinity", map[string]any{"metadata": map[string]any{"name": CalicoAffinityName(NodeName, CalicoBlock)}, "spec": map[string]any{
			"state": "confirmed", "node": NodeName, "cidr": CalicoBlock, "deleted": "false", "type": "host"}}},
		{"ipamblocks", "IPAMBlock", map[string]any{"metadata": map[string]any{"name": CalicoBlockName(CalicoBlock)}, "spec": calicoLinuxBlock()}},
	}
	for _, o := range objects {
		u := &unstructured.Unstructured{Object: o.obj}
		u.SetAPIVersion("crd.projectcalico.org/v1")
		u.SetKind(o.kind)
		if _, err := dyn.Resource(CalicoGVR(o.resource)).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Calico %s %s: %w", o.resource, u.GetName(), err)
		}
	}
	return n.createCalicoNode(ctx)
}

// calicoLinuxBlock is this node's IPAMBlock: ordinal 0 the VXLAN tunnel
// address (attribute 0, handle vxlan-tunnel-addr-<node>), ordinal 2 the DNS
// pod (attribute 1), the rest unallocated.
func calicoLinuxBlock() map[string]any {
	size := 1 << (32 - CalicoBlockSize)
	allocations := make([]any, size)
	var unallocated []any
	for i := range size {
		switch i {
		case 0:
			allocations[i] = int64(0)
		case 2:
			allocations[i] = int64(1)
		default:
			unallocated = append(unallocated, int64(i))
		}
	}
	return map[string]any{
		"cidr": CalicoBlock, "affinity": "host:" + NodeName, "strictAffinity": false, "deleted": false,
		"allocations": allocations, "unallocated": unallocated,
		"attributes": []any{
			map[string]any{"handle_id": "vxlan-tunnel-addr-" + NodeName, "secondary": map[string]any{"node": NodeName, "type": "vxlanTunnelAddress"}},
			map[string]any{"handle_id": "k8s-pod-network.coredns", "secondary": map[string]any{"namespace": "kube-system", "node": NodeName, "pod": DNSPodName}},
		},
	}
}

// waitEstablished waits, on a watch, until every named CRD is Established.
func waitEstablished(ctx context.Context, dyn dynamic.Interface, names []string) error {
	pending := map[string]bool{}
	for _, n := range names {
		pending[n] = true
	}
	list, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range list.Items {
		if established(&c) {
			delete(pending, c.GetName())
		}
	}
	if len(pending) == 0 {
		return nil
	}
	w, err := dyn.Resource(crdGVR).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return err
	}
	defer w.Stop()
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Calico's CRDs to be Established: %w", ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("waiting for Calico's CRDs: the watch ended")
			}
			if c, isCRD := ev.Object.(*unstructured.Unstructured); isCRD && ev.Type != watch.Deleted && established(c) {
				delete(pending, c.GetName())
			}
		}
	}
	return nil
}

func established(c *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, raw := range conds {
		if m, ok := raw.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// createCalicoNode creates calico-node's DaemonSet in calico-system, on
// Linux nodes as upstream's (nodeSelector kubernetes.io/os: linux), by which
// discovery recognises Calico. Its pod on this node is reported Running by
// the node (reportCalicoNodePod).
func (n *Node) createCalicoNode(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CalicoNamespace}}
	if _, err := n.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	labels := map[string]string{"k8s-app": CalicoNodeDaemonSet}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: CalicoNodeDaemonSet, Namespace: CalicoNamespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
					HostNetwork:  true,
					Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers:   []corev1.Container{{Name: "calico-node", Image: CalicoNodeImage}},
				},
			},
		},
	}
	if _, err := n.client.AppsV1().DaemonSets(CalicoNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return n.reportCalicoNodePod(ctx)
}

// reportCalicoNodePod waits (a watch) for the DaemonSet controller's pod on
// this node and reports it Running and Ready, as this node's kubelet would.
func (n *Node) reportCalicoNodePod(ctx context.Context) error {
	pods := n.client.CoreV1().Pods(CalicoNamespace)
	opts := metav1.ListOptions{LabelSelector: "k8s-app=" + CalicoNodeDaemonSet}
	list, err := pods.List(ctx, opts)
	if err != nil {
		return err
	}
	report := func(p *corev1.Pod) (bool, error) {
		if p.Spec.NodeName != NodeName {
			return false, nil
		}
		return true, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.Now()
			cur.Status = corev1.PodStatus{
				Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
				HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, StartTime: &now,
				Conditions: []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "calico-node", Image: CalicoNodeImage, Ready: true, Started: new(true),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
			}
			_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	for i := range list.Items {
		if done, err := report(&list.Items[i]); done || err != nil {
			return err
		}
	}
	opts.ResourceVersion = list.ResourceVersion
	w, err := pods.Watch(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for calico-node's pod on %s: %w", NodeName, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("waiting for calico-node's pod: the watch ended")
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted {
				if done, err := report(p); done || err != nil {
					return err
				}
			}
		}
	}
}
