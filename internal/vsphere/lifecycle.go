package vsphere

import (
	"context"
	"fmt"
	"slices"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Destroy powers the VM off if it runs and deletes it with its disks. A VM
// that is already gone is not an error.
func (c *Client) Destroy(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	var m mo.VirtualMachine
	if err := c.retrieveOne(ctx, ref, []string{"runtime.powerState"}, &m); err != nil {
		if IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("destroying virtual machine %s: %w", ref.Value, err)
	}
	if m.Runtime.PowerState != PoweredOff {
		if err := c.PowerOff(ctx, ref); err != nil {
			if IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("destroying virtual machine %s: %w", ref.Value, err)
		}
	}
	task, err := object.NewVirtualMachine(c.Client.Client, ref).Destroy(ctx)
	_, err = c.waitTask(ctx, task, err)
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("destroying virtual machine %s: %w", ref.Value, err)
	}
	return nil
}

// MarkAsTemplate turns a powered-off VM into a template (same managed object id).
func (c *Client) MarkAsTemplate(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	err := object.NewVirtualMachine(c.Client.Client, ref).MarkAsTemplate(ctx)
	return notFoundOr(err, "virtual machine", ref, "marking as template")
}

// Rename renames a VM or template.
func (c *Client) Rename(ctx context.Context, vm mo.Reference, name string) error {
	ref := vm.Reference()
	task, err := object.NewVirtualMachine(c.Client.Client, ref).Rename(ctx, name)
	_, err = c.waitTask(ctx, task, err)
	if err != nil {
		return fmt.Errorf("renaming to %q: %w", name, notFoundOr(err, "virtual machine", ref, "renaming"))
	}
	return nil
}

// Move moves a VM or template into folder.
func (c *Client) Move(ctx context.Context, vm, folder mo.Reference) error {
	ref := vm.Reference()
	task, err := object.NewFolder(c.Client.Client, folder.Reference()).MoveInto(ctx, []types.ManagedObjectReference{ref})
	_, err = c.waitTask(ctx, task, err)
	if err != nil {
		return fmt.Errorf("moving into folder %s: %w", folder.Reference().Value, notFoundOr(err, "virtual machine", ref, "moving"))
	}
	return nil
}

// CreateSnapshot takes a snapshot (no memory, not quiesced) of a powered-off
// VM, e.g. a golden image build VM before it becomes a template, so that
// linked clones can share its disks. It returns the snapshot's reference.
func (c *Client) CreateSnapshot(ctx context.Context, vm mo.Reference, name, description string) (types.ManagedObjectReference, error) {
	ref := vm.Reference()
	task, err := object.NewVirtualMachine(c.Client.Client, ref).CreateSnapshot(ctx, name, description, false, false)
	if err != nil {
		return types.ManagedObjectReference{}, notFoundOr(err, "virtual machine", ref, "taking a snapshot of")
	}
	res, err := c.waitTask(ctx, task, nil)
	if err != nil {
		return types.ManagedObjectReference{}, notFoundOr(err, "virtual machine", ref, "taking a snapshot of")
	}
	snap, _ := res.(types.ManagedObjectReference)
	return snap, nil
}

// LinkedClones lists the VMs whose disks have one of the template's disks
// (or their backing chain) as a parent: linked clones that would break if
// the template were deleted. Three round trips however many VMs exist (a
// container view of all VMs).
func (c *Client) LinkedClones(ctx context.Context, template mo.Reference) ([]VM, error) {
	ref := template.Reference()
	info, err := c.ReadVM(ctx, ref)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	for _, d := range info.Disks {
		files[d.FileName] = true
		for _, p := range d.ParentFileNames {
			files[p] = true
		}
	}
	delete(files, "")
	if len(files) == 0 {
		return nil, nil
	}
	m := view.NewManager(c.Client.Client)
	v, err := m.CreateContainerView(ctx, c.Client.ServiceContent.RootFolder, []string{TypeVirtualMachine}, true)
	if err != nil {
		return nil, fmt.Errorf("listing virtual machines: %w", err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{TypeVirtualMachine}, []string{"name", "config.hardware.device"}, &vms); err != nil {
		return nil, fmt.Errorf("listing virtual machines: %w", err)
	}
	var out []VM
	for _, vm := range vms {
		if vm.Self == ref || vm.Config == nil {
			continue
		}
		for _, d := range disks(vm.Config.Hardware.Device) {
			if slices.ContainsFunc(d.ParentFileNames, func(f string) bool { return files[f] }) {
				out = append(out, VM{Ref: vm.Self, Name: vm.Name})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b VM) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}
