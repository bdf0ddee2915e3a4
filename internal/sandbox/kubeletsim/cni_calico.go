package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Calico's CNI plugin on Windows (calico.exe with calico-ipam.exe as its
// IPAM: projectcalico/calico cni-plugin, v3.32), as a pod sandbox's ADD and
// DEL run it: the network configuration is the conflist's calico plugin
// (tigera/operator pkg/render/windows.go createCalicoPluginConfig), the
// datastore is reached with the kubeconfig it names, an address comes from
// the node's affine block in the real datastore (the IPAMBlock's
// allocations, with the pod's handle), and the pod joins the "Calico" HNS
// network (SetupVxlanNetwork). Modelled: mode vxlan with
// windows_use_single_network and calico-ipam; anything else is refused.

// calicoNetConf is the part of the calico plugin's configuration the
// simulator reads (cni-plugin/pkg/types NetConf).
type calicoNetConf struct {
	Name                    string `json:"name"`
	Type                    string `json:"type"`
	Mode                    string `json:"mode"`
	VXLANVNI                int    `json:"vxlan_vni"`
	WindowsUseSingleNetwork bool   `json:"windows_use_single_network"`
	Nodename                string `json:"nodename"`
	DatastoreType           string `json:"datastore_type"`
	IPAM                    struct {
		Type string `json:"type"`
	} `json:"ipam"`
	Kubernetes struct {
		Kubeconfig string `json:"kubeconfig"`
	} `json:"kubernetes"`
}

// readCalicoNetConf reads the calico plugin of the loaded network's file;
// ok is false when the network's first plugin is not calico.
func readCalicoNetConf(files FileSystem, net *cniNetwork) (conf calicoNetConf, ok bool, err error) {
	if net == nil || len(net.Plugins) == 0 || net.Plugins[0].Type != "calico" {
		return conf, false, nil
	}
	data, err := files.ReadFile(net.File)
	if err != nil {
		return conf, true, err
	}
	var doc struct {
		Plugins []calicoNetConf `json:"plugins"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Plugins) == 0 {
		if err := json.Unmarshal(data, &conf); err != nil {
			return conf, true, fmt.Errorf("error parsing configuration: %w", err)
		}
	} else {
		conf = doc.Plugins[0]
	}
	if conf.Name == "" {
		conf.Name = net.Name
	}
	return conf, true, nil
}

// calicoAdd is the calico plugin's ADD for a pod: its address (IPAM) and
// the HNS network. It returns the pod's address and the node's block.
func calicoAdd(ctx context.Context, files FileSystem, conf calicoNetConf, nodeName, nodeIP, handle string) (string, netip.Prefix, error) {
	switch {
	case conf.DatastoreType != "" && conf.DatastoreType != "kubernetes":
		return "", netip.Prefix{}, fmt.Errorf("datastore_type %q is not modelled by the simulator (kubernetes only)", conf.DatastoreType)
	case conf.Mode != "vxlan":
		return "", netip.Prefix{}, fmt.Errorf("mode %q is not modelled by the simulator (vxlan only)", conf.Mode)
	case !conf.WindowsUseSingleNetwork:
		return "", netip.Prefix{}, errors.New("a network per IPAM block (windows_use_single_network false) is not modelled by the simulator")
	case conf.IPAM.Type != "calico-ipam":
		return "", netip.Prefix{}, fmt.Errorf("ipam type %q is not modelled by the simulator with calico (calico-ipam only)", conf.IPAM.Type)
	case conf.Kubernetes.Kubeconfig == "":
		return "", netip.Prefix{}, errors.New("in-cluster configuration is not modelled by the simulator: set kubernetes.kubeconfig")
	}
	if conf.Nodename != "" && !strings.HasPrefix(conf.Nodename, "__") {
		nodeName = conf.Nodename
	}
	cfg, _, err := loadKubeconfig(files, hostPath(conf.Kubernetes.Kubeconfig))
	if err != nil {
		return "", netip.Prefix{}, err
	}
	cfg.UserAgent = "calico-cni (windows/amd64)"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", netip.Prefix{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", netip.Prefix{}, err
	}
	c := &calicoClients{kube: kube, dyn: dyn}
	// ipam_plugin.go: with windows_use_single_network at most one block
	// (maxBlocks 1): the node's, claimed by calico-node's startup or here.
	block, err := calicoEnsureBlock(ctx, c, nodeName)
	if err != nil {
		return "", netip.Prefix{}, err
	}
	ip, err := calicoAssign(ctx, dyn, block, handle, nodeName)
	if err != nil {
		return "", netip.Prefix{}, err
	}
	vni := conf.VXLANVNI
	if vni == 0 {
		vni = calicoDefaultVNI
	} else if vni < calicoDefaultVNI {
		_ = calicoRelease(ctx, dyn, block, handle)
		return "", netip.Prefix{}, errors.New("Windows does not support VXLANVNI < 4096")
	}
	if err := calicoEnsureVXLANNetwork(files, block, vni, nodeIP); err != nil {
		_ = calicoRelease(ctx, dyn, block, handle)
		return "", netip.Prefix{}, err
	}
	return ip, block, nil
}

// calicoAssign takes the block's first unallocated ordinal for handle (an
// update of the IPAMBlock, retried on conflict as libcalico-go's
// blockReaderWriter does), or returns the address handle already holds.
func calicoAssign(ctx context.Context, dyn dynamic.Interface, block netip.Prefix, handle, node string) (string, error) {
	var ip string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		res := dyn.Resource(calicoGVR("ipamblocks"))
		b, err := res.Get(ctx, strings.NewReplacer(".", "-", "/", "-").Replace(block.String()), metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec, _, _ := unstructured.NestedMap(b.Object, "spec")
		allocations, _ := spec["allocations"].([]any)
		attributes, _ := spec["attributes"].([]any)
		unallocated, _ := spec["unallocated"].([]any)
		for ord, a := range allocations {
			if idx, ok := a.(int64); ok && int(idx) < len(attributes) {
				if attr, _ := attributes[idx].(map[string]any); attr["handle_id"] == handle {
					ip = nthAddr(block, ord).String()
					return nil
				}
			}
		}
		if len(unallocated) == 0 {
			return fmt.Errorf("no more free addresses in block %s (with windows_use_single_network a node has one block)", block)
		}
		ord, _ := unallocated[0].(int64)
		attributes = append(attributes, map[string]any{"handle_id": handle, "secondary": map[string]any{"node": node}})
		allocations[ord] = int64(len(attributes) - 1)
		spec["allocations"], spec["attributes"], spec["unallocated"] = allocations, attributes, unallocated[1:]
		b.Object["spec"] = spec
		if _, err := res.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
			return err
		}
		ip = nthAddr(block, int(ord)).String()
		return nil
	})
	return ip, err
}

// calicoRelease is the IPAM plugin's DEL: the handle's addresses go back
// to the block's unallocated list.
func calicoRelease(ctx context.Context, dyn dynamic.Interface, block netip.Prefix, handle string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		res := dyn.Resource(calicoGVR("ipamblocks"))
		b, err := res.Get(ctx, strings.NewReplacer(".", "-", "/", "-").Replace(block.String()), metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec, _, _ := unstructured.NestedMap(b.Object, "spec")
		allocations, _ := spec["allocations"].([]any)
		attributes, _ := spec["attributes"].([]any)
		unallocated, _ := spec["unallocated"].([]any)
		changed := false
		for ord, a := range allocations {
			if idx, ok := a.(int64); ok && int(idx) < len(attributes) {
				if attr, _ := attributes[idx].(map[string]any); attr["handle_id"] == handle {
					allocations[ord] = nil
					unallocated = append(unallocated, int64(ord))
					changed = true
				}
			}
		}
		if !changed {
			return nil
		}
		spec["allocations"], spec["unallocated"] = allocations, unallocated
		b.Object["spec"] = spec
		_, err = res.Update(ctx, b, metav1.UpdateOptions{})
		return err
	})
}

// calicoHandle is the IPAM handle of a pod's sandbox: the network's name
// and the sandbox (container) ID (cni-plugin utils.GetHandleID:
// "k8s-pod-network.<containerID>").
func calicoHandle(pod *corev1.Pod) string { return "k8s-pod-network." + sandboxID(pod) }

// calicoDel releases the handle's addresses in the node's block.
func calicoDel(ctx context.Context, files FileSystem, conf calicoNetConf, handle string) error {
	cfg, _, err := loadKubeconfig(files, hostPath(conf.Kubernetes.Kubeconfig))
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	n, ok := hnsNetworkByName(files, CalicoNetworkName)
	if !ok {
		return nil
	}
	block, err := netip.ParsePrefix(n.AddressPrefix)
	if err != nil {
		return err
	}
	return calicoRelease(ctx, dyn, block, handle)
}

// useCalicoBlock makes the node's pod network the block Calico gives its
// pods: its own pods are there, every other pod address is another node's.
func (n *nodeAgent) useCalicoBlock(block netip.Prefix) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.podNetwork != nil && n.podNetwork.podCIDR == block {
		return
	}
	n.podNetwork = &podNet{files: n.k.cfg.Files, overlay: n.k.cfg.Overlay, nodeIP: n.nodeIP(), podCIDR: block, host: n.k.cfg.Host.Disk}
}
