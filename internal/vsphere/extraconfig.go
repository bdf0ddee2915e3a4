package vsphere

import (
	"context"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// SetExtraConfig sets advanced settings (config.extraConfig) on a VM: how a
// resource records facts on the object itself, so an import or a refresh can
// read them back.
func (c *Client) SetExtraConfig(ctx context.Context, vm mo.Reference, values map[string]string) error {
	spec := types.VirtualMachineConfigSpec{}
	for k, v := range values {
		spec.ExtraConfig = append(spec.ExtraConfig, &types.OptionValue{Key: k, Value: v})
	}
	return c.reconfigure(ctx, vm.Reference(), spec, "setting extraConfig of")
}
