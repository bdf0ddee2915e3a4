package resources

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	tfpath "github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// importDefaults are the values a node imported from vSphere gets for the
// inputs with defaults that the VM does not record (the customization's user
// and time zone, the drain settings, the networking mode): the schema's
// defaults, so a configuration that keeps them plans no change.
func importDefaults() map[string]any {
	return map[string]any{
		"admin_user": bootstrap.DefaultAdminUser, "time_zone": timezone.Default, "drain": drainObject(drainDefault),
		"cni": networking.Default().Name(), "reboot_after_join": false, "probe_on_refresh": false,
	}
}

// describeForImport finds a node's VM by what import takes (inventory path,
// instance UUID, providerID) and reads it with the Node it backs.
func describeForImport(ctx context.Context, m *winnode.Manager, ref string) (winnode.Found, error) {
	vm, err := m.Locate(ctx, ref)
	if err != nil {
		return winnode.Found{}, fmt.Errorf("%w\n\nImport by the VM's inventory path (/dc/vm/folder/name), its instance UUID, "+
			"or the Node's providerID (vsphere://<BIOS UUID>).", err)
	}
	return m.Describe(ctx, vm)
}

// setImported writes what an import knows of a node into an empty state:
// the VM's identity and placement, the name (the Node's, else the VM's in
// lower case), and the defaults of the inputs the VM does not record. Read
// (or refresh, for a list result) fills in the rest.
func setImported(ctx context.Context, f winnode.Found, state attributeSetter) diag.Diagnostics {
	var diags diag.Diagnostics
	im := f.Imported()
	attrs := map[string]any{"id": im.VMID, "name": im.Name, "vm_path": im.InventoryPath, "folder": im.Folder,
		"instance_uuid": im.InstanceUUID, "bios_uuid": im.BIOSUUID, "provider_id": im.ProviderID(), "joined": true,
		"linked_clone": im.LinkedClone}
	if im.ResourcePoolID != "" {
		attrs["resource_pool_id"] = im.ResourcePoolID
	}
	if im.WindowsBuildFull != "" {
		attrs["windows_build_full"] = im.WindowsBuildFull
	}
	maps.Copy(attrs, importDefaults())
	for name, v := range attrs {
		diags.Append(state.SetAttribute(ctx, tfpath.Root(name), v)...)
	}
	return diags
}

// attributeSetter is a state being built: an import's (*tfsdk.State) or a
// list result's resource (*tfsdk.Resource).
type attributeSetter interface {
	SetAttribute(ctx context.Context, p tfpath.Path, v any) diag.Diagnostics
}

// refresh records what a Read observes: the VM, and the Node or its absence.
func (m *nodeModel) refresh(obs winnode.Observed) {
	m.fromVM(obs.VM)
	if obs.Node == nil {
		m.Joined = types.BoolValue(false)
		m.Ready = types.BoolValue(false)
		return
	}
	m.fromNode(obs.Node, true)
}

// nodeReplace is the plan modifier of the node's create-only inputs an
// import cannot read back (the template, the placement ids the VM was not
// asked for, the static IPv4 settings, the cluster overrides).
var (
	nodeReplace       = replaceUnlessImported{description: "Changing it replaces the node."}
	nodeReplaceString = []planmodifier.String{nodeReplace}
	nodeReplaceInt64  = []planmodifier.Int64{nodeReplace}
	nodeReplaceObject = []planmodifier.Object{nodeReplace}
)
