package winnode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// What a node's VM records of its making, in extraConfig keys set in the
// clone spec itself (so a VM never exists without them): the node it was
// cloned for and the template as the configuration named it. A create that
// died between the clone and the state write (a crash, a second Ctrl-C, a
// SIGKILL) leaves such a VM, which the next create of the node adopts
// instead of cloning a second one (adoptable). Not guestinfo.* keys, which
// the guest itself can set.
const (
	CloneNodeKey     = "wincluster.node"
	CloneTemplateKey = "wincluster.template"
)

// cloneMarks are the extraConfig values of a node's clone.
func cloneMarks(spec Spec) map[string]string {
	return map[string]string{CloneNodeKey: spec.Name, CloneTemplateKey: spec.Template}
}

// NotOurVMError says the VM where a node's clone goes (its folder and name)
// exists and is not one this provider cloned for the node: it is never
// adopted, nor touched.
type NotOurVMError struct {
	Name, Folder, VMID, Why string
}

func (e *NotOurVMError) Error() string {
	return fmt.Sprintf("a VM named %q already exists in folder %q (%s) and %s, so it is not adopted as this node's VM and nothing was cloned: "+
		"give the node another name, or remove or rename that VM if it is not needed", e.Name, e.Folder, e.VMID, e.Why)
}

// adoptable says why an existing VM at the clone's place cannot be taken as
// the node's VM: "" when it can (cloned by this provider, for this node,
// from this template).
func adoptable(vm *vsphere.VMInfo, spec Spec) string {
	node, ok := vm.ExtraConfig[CloneNodeKey]
	switch {
	case vm.Template:
		return "is a template"
	case !ok:
		return fmt.Sprintf("was not cloned by terraform-provider-windows (it has no %s record)", CloneNodeKey)
	case node != spec.Name:
		return fmt.Sprintf("was cloned for node %q, not %q", node, spec.Name)
	case vm.ExtraConfig[CloneTemplateKey] != spec.Template:
		return fmt.Sprintf("was cloned from template %q, and this node clones %q", vm.ExtraConfig[CloneTemplateKey], spec.Template)
	}
	return ""
}

// adopt finds the VM an earlier create of this node cloned and never
// recorded (it died before the state was written). ok is false when there is
// none and the node is to be cloned; a VM that is there but not adoptable is
// a *NotOurVMError.
func (m *Manager) adopt(ctx context.Context, spec Spec, req CloneRequest) (Identity, bool, error) {
	vm, err := m.VSphere.FindClone(ctx, req)
	if vsphere.IsNotFound(err) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, fmt.Errorf("looking for an earlier clone of the node: %w", err)
	}
	if why := adoptable(vm, spec); why != "" {
		return Identity{}, false, &NotOurVMError{Name: req.Name, Folder: req.Folder, VMID: vm.ID(), Why: why}
	}
	id := Identity{VMID: vm.ID(), InstanceUUID: vm.InstanceUUID, BIOSUUID: vm.BIOSUUID}
	paths, err := m.VSphere.InventoryPaths(ctx, []string{id.VMID})
	if err != nil {
		return id, true, fmt.Errorf("reading the inventory path of %s: %w", id.VMID, err)
	}
	id.InventoryPath = paths[id.VMID]
	return id, true, nil
}

// NodeNotOursError says a Node of the node's name exists that this provider
// may not delete, and why: it stops the create or the destroy before
// anything is changed.
type NodeNotOursError struct {
	Name, Why, Fix string
}

func (e *NodeNotOursError) Error() string {
	return fmt.Sprintf("Node %q %s; nothing was deleted. %s", e.Name, e.Why, e.Fix)
}

// ownership says whether node is the Node of the VM id (in this vCenter):
// "" when it is, else why not. The proofs, strongest first: the VM
// annotation this provider sets at join (this vCenter, this VM); the
// providerID it sets (the VM's BIOS UUID, for Nodes joined before the
// annotation existed); or, for a Node never claimed (no providerID: a join
// that failed before the provider set it), the system UUID its kubelet
// reports, which is the VM's BIOS UUID.
func (m *Manager) ownership(node *corev1.Node, id Identity) string {
	if vm, ok := node.Annotations[kube.VMAnnotation]; ok {
		if vm == kube.NodeVM(m.VSphere.VCenterID(), id.VMID) {
			return ""
		}
		return fmt.Sprintf("belongs to another VM (its %s annotation is %q, and this node's VM is %s of vCenter %s)",
			kube.VMAnnotation, vm, id.VMID, m.VSphere.VCenterID())
	}
	pid := node.Spec.ProviderID
	switch {
	case id.BIOSUUID == "":
	case pid != "" && strings.EqualFold(pid, id.ProviderID()):
		return ""
	case pid == "" && strings.EqualFold(node.Status.NodeInfo.SystemUUID, id.BIOSUUID):
		return ""
	}
	if pid == "" {
		return fmt.Sprintf("was registered by another machine (system UUID %q, no providerID; this node's VM %s has BIOS UUID %q)",
			node.Status.NodeInfo.SystemUUID, id.VMID, id.BIOSUUID)
	}
	return fmt.Sprintf("belongs to another machine (providerID %s; this node's VM %s is %s)", pid, id.VMID, id.ProviderID())
}

// removeStaleNode clears the way for a node's join when a Node of its name
// exists. It deletes it only when it is provably a Node this provider
// joined on a VM that no longer exists: the provider's label, the VM
// annotation naming this vCenter, and vCenter answering that VM id with
// ManagedObjectNotFound (vsphere.VMGone). A VM merely not seen (another
// vCenter, a folder outside the role) proves nothing, and the Node of a
// healthy machine of someone else's must never go: then the join stops
// and names the Node. The delete carries the Node's UID, so a Node
// registered anew meanwhile is not deleted.
func (m *Manager) removeStaleNode(ctx context.Context, name string, id Identity) error {
	node, err := m.Kube.FindNode(ctx, name)
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	why := m.ownership(node, id)
	if why == "" || (node.Spec.ProviderID == "" && node.Status.NodeInfo.SystemUUID == "") {
		return nil // ours (a re-join), or registered by no machine yet
	}
	fix := fmt.Sprintf("Give this node another name; or, if that machine is gone, delete the Node (kubectl delete node %s) and apply again.", name)
	notOurs := &NodeNotOursError{Name: name, Why: why, Fix: fix}
	if node.Labels[kube.LabelManagedBy] != kube.FieldManager {
		notOurs.Why += fmt.Sprintf(", and it was not joined by this provider (no %s=%s label)", kube.LabelManagedBy, kube.FieldManager)
		return notOurs
	}
	vcenter, vmID, ok := strings.Cut(node.Annotations[kube.VMAnnotation], "/")
	if !ok || vcenter != m.VSphere.VCenterID() {
		notOurs.Why += ", a VM this vCenter cannot vouch for"
		return notOurs
	}
	gone, err := m.VSphere.VMGone(ctx, vmID)
	if err != nil {
		return errors.Join(notOurs, err)
	}
	if !gone {
		notOurs.Why += fmt.Sprintf(", and VM %s still exists", vmID)
		return notOurs
	}
	m.progress(ctx, "delete stale Node", map[string]any{"node": name, "vm": vmID})
	return m.Kube.DeleteNodeUID(ctx, name, node.UID)
}
