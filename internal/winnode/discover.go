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
// sorted by node name. Three vSphere round trips (the list, and the
// inventory paths of the VMs found) and one Kubernetes request, however many
// VMs there are.
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
		out = append(out, f)
	}
	if err := setInventoryPaths(ctx, m.VSphere, out); err != nil {
		return nil, err
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
	found := []Found{{VM: vm}}
	if err := setInventoryPaths(ctx, m.VSphere, found); err != nil {
		return Found{}, err
	}
	f := found[0]
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

// folderRights ends the error of an inventory path vCenter does not give.
const folderRights = ". The vCenter role needs read access (System.Read) on the VM's folders and datacenter, as for a VM this provider creates"

// setInventoryPaths reads the inventory paths of the VMs found, which the
// state records (vm_path, folder), in one round trip. A vCenter role that
// may read a VM but not the folders above it yields an error or no path;
// either is reported, never an empty path.
func setInventoryPaths(ctx context.Context, vc VSphere, found []Found) error {
	if len(found) == 0 {
		return nil
	}
	ids := make([]string, 0, len(found))
	for _, f := range found {
		ids = append(ids, f.VM.ID())
	}
	paths, err := vc.InventoryPaths(ctx, ids)
	if err != nil {
		what := fmt.Sprintf("paths of %d VMs", len(found))
		if len(found) == 1 {
			what = fmt.Sprintf("path of VM %s (%s)", found[0].VM.Name, found[0].VM.Ref.Value)
		}
		return fmt.Errorf("reading the inventory %s: %w%s", what, err, folderRights)
	}
	for i := range found {
		vm := found[i].VM
		p := paths[vm.ID()]
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("reading the inventory path of VM %s (%s): vCenter returned no inventory path%s", vm.Name, vm.Ref.Value, folderRights)
		}
		found[i].InventoryPath = p
	}
	return nil
}
