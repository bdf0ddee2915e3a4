package goldenimage

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// ExtraConfig keys the build records on the template, so a refresh or an
// import reads what is in the image from the template itself.
const (
	keyWindowsBuild      = "guestinfo.windows.build-full"
	keyKubernetesVersion = "guestinfo.kubernetes.version"
	keyContainerdVersion = "guestinfo.containerd.version"
	keyManifest          = "guestinfo.windows.image-manifest"
	// SnapshotName is the snapshot every template carries, so windows_node
	// can make linked clones of it (a template cannot take one later).
	SnapshotName = "golden"
)

// NewVSphere adapts a vCenter session to what a build needs.
func NewVSphere(c *vsphere.Client) *VSphereAdapter { return &VSphereAdapter{c: c} }

// VSphereAdapter implements VSphere with internal/vsphere.
type VSphereAdapter struct {
	c *vsphere.Client
}

func (a *VSphereAdapter) CloneBuildVM(ctx context.Context, req CloneRequest) (VM, error) {
	source, err := a.c.FindVM(ctx, req.Source)
	if err != nil {
		return VM{}, err
	}
	spec := vsphere.CloneSpec{Source: source, Name: req.Name,
		Annotation: "Windows golden image build VM (terraform-provider-windows); becomes the template " + req.Name}
	pool, err := a.c.FindResourcePoolByID(ctx, req.ResourcePoolID)
	if err != nil {
		return VM{}, err
	}
	spec.ResourcePool = pool
	// After the pool: a relative folder path is relative to its datacenter.
	if spec.Folder, err = a.c.FindFolder(ctx, req.Folder, pool, true); err != nil {
		return VM{}, err
	}
	if req.DatastoreID != "" {
		if spec.Datastore, err = a.c.FindDatastoreByID(ctx, req.DatastoreID); err != nil {
			return VM{}, err
		}
	}
	if req.NetworkID != "" {
		if spec.Network, err = a.c.FindNetworkByID(ctx, req.NetworkID); err != nil {
			return VM{}, err
		}
	}
	if req.HostID != "" {
		if spec.Host, err = a.c.FindHostByID(ctx, req.HostID); err != nil {
			return VM{}, err
		}
	}
	if req.DatastoreClusterID != "" {
		if spec.DatastoreCluster, err = a.c.FindDatastoreClusterByID(ctx, req.DatastoreClusterID); err != nil {
			return VM{}, err
		}
	}
	if req.StoragePolicyID != "" {
		if _, err := a.c.CheckStoragePolicy(ctx, req.StoragePolicyID); err != nil {
			return VM{}, fmt.Errorf("storage_policy_id %s: %w", req.StoragePolicyID, err)
		}
		spec.StoragePolicyID = req.StoragePolicyID
	}
	vm, err := a.c.Clone(ctx, spec)
	if vm == nil {
		return VM{}, err
	}
	if err == nil {
		if err = a.c.SetMetadata(ctx, vm.Ref, vsphere.Metadata{}, req.Metadata); err != nil {
			err = fmt.Errorf("cloned the build VM %s, then: %w", vm.Name, err)
		}
	}
	// With an error too: the VM exists (the clone was interrupted after
	// vCenter made it, or its identity could not be read in full), and
	// the build must track it and clean it up.
	return VM{ID: vm.ID(), Path: vm.InventoryPath}, err
}

func (a *VSphereAdapter) GuestOperations(vm VM) *remote.GuestOperations {
	ref := vsphere.VMRef(vm.ID)
	return &remote.GuestOperations{Client: a.c.Client.Client, VM: ref,
		WaitReady: func(ctx context.Context) error { return a.c.WaitForGuestOperations(ctx, ref) }}
}

func (a *VSphereAdapter) PowerOn(ctx context.Context, vm VM) error {
	return a.c.PowerOn(ctx, vsphere.VMRef(vm.ID))
}

func (a *VSphereAdapter) WaitForIP(ctx context.Context, vm VM) (string, error) {
	return a.c.WaitForIP(ctx, vsphere.VMRef(vm.ID), vsphere.IPFilter{})
}

func (a *VSphereAdapter) WaitForGuestRestart(ctx context.Context, vm VM) error {
	return a.c.WaitForGuestRestart(ctx, vsphere.VMRef(vm.ID))
}

func (a *VSphereAdapter) WaitForPoweredOff(ctx context.Context, vm VM) error {
	return a.c.WaitForPowerState(ctx, vsphere.VMRef(vm.ID), types.VirtualMachinePowerStatePoweredOff)
}

// MarkAsTemplate records the build's facts on the VM, snapshots it for linked
// clones, and marks it as a template.
func (a *VSphereAdapter) MarkAsTemplate(ctx context.Context, vm VM, facts map[string]string) (VM, error) {
	ref := vsphere.VMRef(vm.ID)
	if len(facts) > 0 {
		if err := a.c.SetExtraConfig(ctx, ref, facts); err != nil {
			return VM{}, err
		}
	}
	if _, err := a.c.CreateSnapshot(ctx, ref, SnapshotName, "Base of linked clones of this golden image"); err != nil {
		return VM{}, err
	}
	if err := a.c.MarkAsTemplate(ctx, ref); err != nil {
		return VM{}, err
	}
	p, err := a.c.InventoryPath(ctx, ref)
	if err != nil {
		return VM{}, err
	}
	return VM{ID: vm.ID, Path: p}, nil
}

func (a *VSphereAdapter) Destroy(ctx context.Context, vm VM) error {
	return a.c.Destroy(ctx, vsphere.VMRef(vm.ID))
}

// SourceInfo is what plan-time validation learns of the source image.
type SourceInfo struct {
	Path    string
	GuestID string
	Release winversion.Release
}

// InspectSource checks that the source exists and is a Windows Server
// release Kubernetes supports (by its vSphere guest OS id).
func InspectSource(ctx context.Context, c *vsphere.Client, pathOrID string) (SourceInfo, error) {
	ref, err := c.FindVM(ctx, pathOrID)
	if err != nil {
		return SourceInfo{}, err
	}
	info, err := c.ReadVM(ctx, ref)
	if err != nil {
		return SourceInfo{}, err
	}
	out := SourceInfo{Path: pathOrID, GuestID: info.GuestID}
	if !strings.HasPrefix(strings.ToLower(info.GuestID), "windows") {
		return out, fmt.Errorf("%s runs guest OS %q, not Windows: source_template must be a Windows Server 2019, 2022 or 2025 image", pathOrID, info.GuestID)
	}
	for _, r := range winversion.Releases {
		if strings.EqualFold(r.GuestID, info.GuestID) {
			out.Release = r
			return out, nil
		}
	}
	var ids []string
	for _, r := range winversion.Releases {
		ids = append(ids, r.GuestID+" (Windows Server "+r.Version+")")
	}
	return out, fmt.Errorf("%s runs guest OS %q, which Kubernetes does not support as a Windows node: use a source with guest OS %s",
		pathOrID, info.GuestID, strings.Join(ids, ", "))
}

// TemplateInfo is a finished golden image as vSphere records it.
type TemplateInfo struct {
	VM                VM
	Name, Folder      string
	WindowsBuildFull  string
	KubernetesVersion string
	ContainerdVersion string
	Manifest          string
}

// FindVM reports whether a VM exists (by managed object id).
func FindVM(ctx context.Context, c *vsphere.Client, id string) (VM, error) {
	ref, err := c.FindVMByID(ctx, id)
	if err != nil {
		return VM{}, err
	}
	return VM{ID: ref.Value}, nil
}

// FindTemplate reads a golden image template by managed object id or
// inventory path. A VM that is no longer a template counts as not found.
func FindTemplate(ctx context.Context, c *vsphere.Client, pathOrID string) (TemplateInfo, error) {
	ref, err := c.FindVM(ctx, pathOrID)
	if err != nil {
		return TemplateInfo{}, err
	}
	info, err := c.ReadVM(ctx, ref)
	if err != nil {
		return TemplateInfo{}, err
	}
	if !info.Template {
		return TemplateInfo{}, &vsphere.NotFoundError{Kind: "template", ID: pathOrID}
	}
	p, err := c.InventoryPath(ctx, ref)
	if err != nil {
		return TemplateInfo{}, err
	}
	return TemplateInfo{
		VM: VM{ID: ref.Value, Path: p}, Name: info.Name, Folder: path.Dir(p),
		WindowsBuildFull:  info.ExtraConfig[keyWindowsBuild],
		KubernetesVersion: info.ExtraConfig[keyKubernetesVersion],
		ContainerdVersion: info.ExtraConfig[keyContainerdVersion],
		Manifest:          info.ExtraConfig[keyManifest],
	}, nil
}

// InUseError refuses to delete a template that linked clones depend on.
type InUseError struct{ Clones []string }

func (e *InUseError) Error() string {
	return "the template has linked clones: " + strings.Join(e.Clones, ", ")
}

// DeleteTemplate destroys a template unless linked clones share its disks.
// An already-deleted template is not an error.
func DeleteTemplate(ctx context.Context, c *vsphere.Client, id string) error {
	ref, err := c.FindVMByID(ctx, id)
	if vsphere.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	clones, err := c.LinkedClones(ctx, ref)
	if err != nil {
		return err
	}
	if len(clones) > 0 {
		var names []string
		for _, vm := range clones {
			names = append(names, vm.Name)
		}
		return &InUseError{Clones: names}
	}
	err = c.Destroy(ctx, ref)
	if vsphere.IsNotFound(err) {
		return nil
	}
	return err
}
