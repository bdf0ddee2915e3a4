package winnode

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// ImageBuildKey is the extraConfig key windows_golden_image records the
// template's Windows build in (internal/goldenimage); clones carry it, so
// every VM made from a golden image has it.
const ImageBuildKey = "guestinfo.windows.build-full"

// How a VM was found to be a Windows node.
const (
	// MatchedByProviderID: a Windows Node's spec.providerID is
	// vsphere://<the VM's BIOS UUID> (set by this provider, or by the vSphere
	// cloud provider).
	MatchedByProviderID = "providerID"
	// MatchedByName: a Windows Node without a providerID (joined by hand,
	// no cloud provider) is named like the VM or its guest's host name.
	MatchedByName = "name"
	// MatchedByImage: no Node; the VM is a clone of a golden image (it
	// carries ImageBuildKey): a node never joined, or whose Node was deleted.
	MatchedByImage = "image"
)

// Found is a VM that backs a Windows node.
type Found struct {
	VM            *vsphere.VMInfo
	InventoryPath string
	// Node is the Node the VM backs; nil when none does.
	Node      *corev1.Node
	MatchedBy string // MatchedBy*, "" when nothing ties the VM to a node
}

// Name is the node's name: the Node's when there is one, else the VM's in
// lower case (a Node name is a lower-case DNS label).
func (f Found) Name() string {
	if f.Node != nil {
		return f.Node.Name
	}
	return strings.ToLower(f.VM.Name)
}

// NodeOf returns the Windows Node among nodes that the VM backs, and how it
// was matched: by providerID first, else by name for a Node that has no
// providerID (a Node with another providerID is some other machine's).
func NodeOf(vm *vsphere.VMInfo, nodes []corev1.Node) (*corev1.Node, string) {
	if vm.BIOSUUID != "" {
		providerID := Identity{BIOSUUID: vm.BIOSUUID}.ProviderID()
		for i := range nodes {
			if strings.EqualFold(nodes[i].Spec.ProviderID, providerID) {
				return &nodes[i], MatchedByProviderID
			}
		}
	}
	names := []string{strings.ToLower(vm.Name)}
	if host, _, _ := strings.Cut(vm.GuestHostName, "."); host != "" {
		names = append(names, strings.ToLower(host))
	}
	for i := range nodes {
		if nodes[i].Spec.ProviderID == "" && slices.Contains(names, nodes[i].Name) {
			return &nodes[i], MatchedByName
		}
	}
	return nil, ""
}

// DiscoverOptions narrow Discover.
type DiscoverOptions struct {
	// Folder is an inventory path: only VMs in it and its subfolders.
	Folder string
	// NamePrefix keeps the nodes whose name (Found.Name) starts with it.
	NamePrefix string
	// IncludeUnjoined also returns clones of a golden image that back no
	// Node (MatchedByImage).
	IncludeUnjoined bool
}

// Discover finds the VMs that are Windows nodes of the cluster: VMs (never
// templates) that back a Node labelled kubernetes.io/os=windows (NodeOf),
// sorted by node name. Two vSphere round trips and one Kubernetes request,
// plus one round trip per node found for its inventory path.
func (m *Manager) Discover(ctx context.Context, opts DiscoverOptions) ([]Found, error) {
	vms, err := m.VSphere.ListVMs(ctx, opts.Folder)
	if err != nil {
		return nil, err
	}
	nodes, err := m.Kube.WindowsNodes(ctx)
	if err != nil {
		return nil, err
	}
	var out []Found
	for _, vm := range vms {
		if vm.Template {
			continue
		}
		node, how := NodeOf(vm, nodes)
		if node == nil {
			if !opts.IncludeUnjoined || vm.ExtraConfig[ImageBuildKey] == "" {
				continue
			}
			how = MatchedByImage
		}
		f := Found{VM: vm, Node: node, MatchedBy: how}
		if !strings.HasPrefix(f.Name(), opts.NamePrefix) {
			continue
		}
		if f.InventoryPath, err = inventoryPath(ctx, m.VSphere, vm); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Found) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Locate finds the VM of an existing node by what a user has at hand: the
// VM's inventory path (/dc/vm/folder/name), the Node's providerID
// (vsphere://<BIOS UUID>) or the VM's instance UUID.
// It returns the VM's managed object id.
func (m *Manager) Locate(ctx context.Context, ref string) (string, error) {
	switch lower := strings.ToLower(ref); {
	case strings.HasPrefix(lower, "vsphere://"):
		return m.VSphere.FindVMByUUID(ctx, strings.TrimPrefix(lower, "vsphere://"), false)
	case strings.Contains(ref, "/"):
		return m.VSphere.FindVMByPath(ctx, ref)
	default:
		return m.VSphere.FindVMByUUID(ctx, ref, true)
	}
}

// Describe reads a node's VM as Discover would have found it: its
// inventory path, and the Windows Node it backs (Node nil when none does).
func (m *Manager) Describe(ctx context.Context, vmID string) (Found, error) {
	vm, err := m.VSphere.ReadVM(ctx, vmID)
	if err != nil {
		return Found{}, err
	}
	if vm.Template {
		return Found{}, fmt.Errorf("%s is a template, not a node's VM (a windows_golden_image imports templates)", vm.Name)
	}
	f := Found{VM: vm}
	if f.InventoryPath, err = inventoryPath(ctx, m.VSphere, vm); err != nil {
		return Found{}, err
	}
	nodes, err := m.Kube.WindowsNodes(ctx)
	if err != nil {
		return Found{}, err
	}
	f.Node, f.MatchedBy = NodeOf(vm, nodes)
	if f.Node == nil && vm.ExtraConfig[ImageBuildKey] != "" {
		f.MatchedBy = MatchedByImage
	}
	return f, nil
}

// inventoryPath is the VM's inventory path, which the state records (vm_path,
// folder). A vCenter role that may read the VM but not the folders above it
// yields an error or no path; either is reported, never an empty path.
func inventoryPath(ctx context.Context, vc VSphere, vm *vsphere.VMInfo) (string, error) {
	p, err := vc.InventoryPath(ctx, vm.ID())
	if err == nil && !strings.HasPrefix(p, "/") {
		err = fmt.Errorf("vCenter returned no inventory path")
	}
	if err != nil {
		return "", fmt.Errorf("reading the inventory path of VM %s (%s): %w. The vCenter role needs read access (System.Read) "+
			"on the VM's folders and datacenter, as for a VM this provider creates", vm.Name, vm.Ref.Value, err)
	}
	return p, nil
}
