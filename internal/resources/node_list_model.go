package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

type nodeListConfig struct {
	Folder          types.String `tfsdk:"folder"`
	NamePrefix      types.String `tfsdk:"name_prefix"`
	IncludeUnjoined types.Bool   `tfsdk:"include_unjoined"`
}

// displayName says which VM and why it was found.
func displayName(f winnode.Found) string {
	switch f.MatchedBy {
	case winnode.MatchedByProviderID:
		return fmt.Sprintf("%s (VM %s, Node providerID %s)", f.Name(), f.InventoryPath, f.Node.Spec.ProviderID)
	case winnode.MatchedByName:
		return fmt.Sprintf("%s (VM %s, Node without providerID)", f.Name(), f.InventoryPath)
	default:
		return fmt.Sprintf("%s (VM %s, no Node: not joined)", f.Name(), f.InventoryPath)
	}
}

// stateData is a list result's resource (*tfsdk.Resource).
type stateData interface {
	attributeSetter
	Get(ctx context.Context, target any) diag.Diagnostics
	Set(ctx context.Context, v any) diag.Diagnostics
}

// listedNodeState is the state an import of the VM yields followed by its
// first Read: the import's attributes, then what the Read records of the
// VM and the Node (which Discover has just read) and the node's health (the
// run's snapshot, which every result shares).
func listedNodeState(ctx context.Context, m *winnode.Manager, f winnode.Found, res stateData) diag.Diagnostics {
	diags := setImported(ctx, f, res)
	if diags.HasError() {
		return diags
	}
	var node nodeModel
	diags.Append(res.Get(ctx, &node)...)
	if diags.HasError() {
		return diags
	}
	node.refresh(winnode.Observed{VM: f.VM, Node: f.Node})
	// As Read does after an import: the VM's notes (an imported node's
	// tags and custom attributes are null, so none is read).
	node.refreshSite(node.Name.ValueString(), f.VM, nil)
	h, err := m.ReadHealth(ctx, node.healthSpec(), f.Node, false)
	node.setHealth(h, err, &diags)
	diags.Append(res.Set(ctx, &node)...)
	return diags
}
