package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Power states.
const (
	PoweredOn  = types.VirtualMachinePowerStatePoweredOn
	PoweredOff = types.VirtualMachinePowerStatePoweredOff
	Suspended  = types.VirtualMachinePowerStateSuspended
)

// PowerOn powers a VM on and waits for the task. A VM that is already on is
// not an error. The VM joins the shared watch with the task: the waits for
// its customization, IP or tools follow a power-on.
func (c *Client) PowerOn(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	task, err := object.NewVirtualMachine(c.Client.Client, ref).PowerOn(ctx)
	_, err = c.waitTask(ctx, task, err, ref)
	if err != nil && !isInvalidPowerState(err, PoweredOn) {
		return notFoundOr(err, "virtual machine", ref, "powering on")
	}
	return nil
}

// PowerOff powers a VM off (a hard stop) and waits for the task. A VM that
// is already off is not an error.
func (c *Client) PowerOff(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	task, err := object.NewVirtualMachine(c.Client.Client, ref).PowerOff(ctx)
	_, err = c.waitTask(ctx, task, err)
	if err != nil && !isInvalidPowerState(err, PoweredOff) {
		return notFoundOr(err, "virtual machine", ref, "powering off")
	}
	return nil
}

// ShutdownGuest asks the guest OS (through VMware Tools) to shut down and
// waits until the VM is powered off or ctx ends; it does not fall back to a
// hard power-off (callers decide: see PowerOff). A VM that is already off
// is not an error.
func (c *Client) ShutdownGuest(ctx context.Context, vm mo.Reference) error {
	ref := vm.Reference()
	err := object.NewVirtualMachine(c.Client.Client, ref).ShutdownGuest(ctx)
	if err != nil {
		if isInvalidPowerState(err, PoweredOff) {
			return nil
		}
		return notFoundOr(err, "virtual machine", ref, "shutting down the guest of")
	}
	return c.WaitForPowerState(ctx, ref, PoweredOff)
}

// WaitForPowerState waits, on the shared watch, until the VM reaches state
// (e.g. until sysprep /shutdown has powered it off).
func (c *Client) WaitForPowerState(ctx context.Context, vm mo.Reference, state types.VirtualMachinePowerState) error {
	ref := vm.Reference()
	last := types.VirtualMachinePowerState("")
	err := c.watcher().wait(ctx, ref, func(p props) (bool, error) {
		last = powerState(p)
		return last == state, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for virtual machine %s to be %s (still %s): %w", ref.Value, state, orUnknown(string(last)), ctx.Err())
		}
		return notFoundOr(err, "virtual machine", ref, "waiting for the power state of")
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// isInvalidPowerState reports an InvalidPowerState fault whose existing
// state is already the wanted one.
func isInvalidPowerState(err error, want types.VirtualMachinePowerState) bool {
	var f *types.InvalidPowerState
	if !asFault(err, &f) || f == nil {
		return false
	}
	return f.ExistingState == want
}
