package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
)

// A machine's template is a VM given in any form vSphere resolves: an
// inventory path (windows_golden_image.template_path), a managed object ID
// (template_id) or a UUID. A change of form is not a change of template: the
// plan resolves the prior and the new value and replaces the node (or rolls
// the pool's members) only when they name different VMs. The state then
// takes the new form in place, which touches nothing on the VM.

// sameTemplate tells whether two template values name the same VM. It is
// false when either is unknown or null, when vCenter cannot be asked at plan
// (its settings unknown until apply, or unreachable) or either does not
// resolve: the plan then replaces, as for any other change.
func sameTemplate(ctx context.Context, c *clients.Clients, prior, planned types.String) bool {
	if prior.IsUnknown() || planned.IsUnknown() || prior.IsNull() || planned.IsNull() {
		return false
	}
	if prior.Equal(planned) {
		return true
	}
	if c == nil || len(c.VSphereConfigUnknown) > 0 || c.VSphereConfig.Server == "" {
		return false
	}
	vc, err := c.VSphere(ctx)
	if err != nil {
		return false
	}
	// The run's lookups: a plan of many nodes from one template resolves
	// each form once.
	lookups := vc.Lookups()
	a, err := lookups.FindVM(ctx, prior.ValueString())
	if err != nil {
		return false
	}
	b, err := lookups.FindVM(ctx, planned.ValueString())
	return err == nil && a == b
}
