package kubeletsim

import (
	"context"
	"net"
	"net/netip"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// For the external tests.

// HNSStateFile is where the host keeps its HNS networks.
const HNSStateFile = winsim.HNSNetworksFile

// PutHNSNetwork writes an overlay network as flanneld leaves it.
func PutHNSNetwork(files FileSystem, name, prefix string, vni int) error {
	return putHNSNetwork(files, hnsNetwork{Name: name, Type: "Overlay", AddressPrefix: prefix, VNI: vni})
}

// PodDial dials from a pod of a host with these files and overlay.
func PodDial(ctx context.Context, files FileSystem, overlay Overlay, network string, dst netip.AddrPort) (net.Conn, error) {
	return (&podNet{files: files, overlay: overlay}).dial(ctx, network, dst)
}

// FirstHost is flanneld's FLANNEL_SUBNET of a pod CIDR.
func FirstHost(cidr string) string { return firstHost(cidr) }

// ServiceCIDR is the service range the pods' dataplane knows.
var ServiceCIDR = serviceCIDR

// ForgetHNSAfterBoot is what the kubelet does to the HNS state as it starts.
var ForgetHNSAfterBoot = forgetHNSAfterBoot

// HostProcessPodsRunning lists the UIDs of the HostProcess pods whose
// containers the host's current boot runs (its shimTable).
func HostProcessPodsRunning(h *winsim.Host) []string {
	t := shimsOf(h)
	t.mu.Lock()
	defer t.mu.Unlock()
	var uids []string
	for uid := range t.pods {
		uids = append(uids, string(uid))
	}
	return uids
}

// PodResolve resolves a name from a pod of a host (its pod CIDR and node
// address) through the cluster DNS 10.96.0.10, as runAgnhost's resolver does.
func PodResolve(ctx context.Context, files FileSystem, overlay Overlay, nodeIP, podCIDR, name string) ([]string, error) {
	pn := &podNet{files: files, overlay: overlay, nodeIP: nodeIP}
	if p, err := netip.ParsePrefix(podCIDR); err == nil {
		pn.podCIDR = p
	}
	return pn.resolver("10.96.0.10").LookupHost(ctx, name)
}
