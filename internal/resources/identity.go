package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Resource identities: what `import { identity = { ... } }` takes (Terraform
// 1.12 and later) and what `terraform query` returns for each object it
// finds (1.14 and later). Each names the object where it lives, with the
// values the import ID takes, and does not change while the object lives.
// Each is derived from the state alone, so every Read returns it — also a
// Read that finds the object gone, and under a CLI older than 1.12, which
// sends no identity (the framework rejects a Read that returns none, and
// older CLIs ignore the field).

var (
	_ resource.ResourceWithIdentity = (*runtimeClassResource)(nil)
	_ resource.ResourceWithIdentity = (*nodeResource)(nil)
	_ resource.ResourceWithIdentity = (*goldenImageResource)(nil)
	_ resource.ResourceWithIdentity = (*nodeNetworkingResource)(nil)
	_ resource.ResourceWithIdentity = (*linuxDaemonSetGuardResource)(nil)
)

type runtimeClassIdentity struct {
	Name types.String `tfsdk:"name"`
}

func (r *runtimeClassResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"name": identityschema.StringAttribute{RequiredForImport: true,
			Description: "Name of the RuntimeClass (the import ID)."},
	}}
}

// nodeIdentity is the VM's instance UUID: vCenter's own id of the VM, kept
// when the VM is renamed or moved (its inventory path changes then) and
// unique in the vCenter, unlike the BIOS UUID a copied VM may share.
type nodeIdentity struct {
	InstanceUUID types.String `tfsdk:"instance_uuid"`
}

func (r *nodeResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"instance_uuid": identityschema.StringAttribute{RequiredForImport: true,
			Description: "vCenter instance UUID of the node's VM (config.instanceUuid, the instance_uuid attribute; govc vm.info -json shows it)."},
	}}
}

// goldenImageIdentity is the template's managed object id, the resource's
// id: it stays when the template is renamed or moved.
type goldenImageIdentity struct {
	ID types.String `tfsdk:"id"`
}

func (r *goldenImageResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true,
			Description: "Managed object id of the template, for example vm-1042 (the id attribute; govc ls -i <inventory path> prints it as VirtualMachine:vm-1042)."},
	}}
}

type nodeNetworkingIdentity struct {
	Namespace types.String `tfsdk:"namespace"`
}

func (r *nodeNetworkingResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"namespace": identityschema.StringAttribute{RequiredForImport: true,
			Description: "Namespace of the agents' objects (the import ID), for example kube-system."},
	}}
}

// linuxDaemonSetGuardIdentity is the namespace and, when the guard names
// them, its DaemonSets. The names change in place, so this identity may
// change (ResourceBehavior.MutableIdentity).
type linuxDaemonSetGuardIdentity struct {
	Namespace types.String `tfsdk:"namespace"`
	Names     types.List   `tfsdk:"names"`
}

func (r *linuxDaemonSetGuardResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"namespace": identityschema.StringAttribute{RequiredForImport: true,
			Description: "Namespace of the DaemonSets."},
		"names": identityschema.ListAttribute{ElementType: types.StringType, OptionalForImport: true,
			Description: "The guarded DaemonSets, sorted; omit for a guard of the whole namespace (names not set)."},
	}}
}

func guardIdentity(ctx context.Context, namespace types.String, names types.Set, diags *diag.Diagnostics) linuxDaemonSetGuardIdentity {
	id := linuxDaemonSetGuardIdentity{Namespace: namespace, Names: types.ListNull(types.StringType)}
	if list := setStrings(ctx, names, diags); len(list) > 0 {
		id.Names = stringList(list)
	}
	return id
}

// setIdentity records a resource's identity. The framework hands every
// operation of a resource with an identity schema a non-nil identity, also
// when the CLI predates identities.
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, value any, diags *diag.Diagnostics) {
	if identity == nil {
		return
	}
	diags.Append(identity.Set(ctx, value)...)
}

// importedIdentity reads the identity of an `import { identity = ... }` into
// value; false for an import by ID (or when the identity is unusable, with
// an error naming the attribute to set).
func importedIdentity(ctx context.Context, req resource.ImportStateRequest, value any, required string, diags *diag.Diagnostics) bool {
	if req.ID != "" || req.Identity == nil || req.Identity.Raw.IsNull() {
		return false
	}
	diags.Append(req.Identity.Get(ctx, value)...)
	var v types.String
	diags.Append(req.Identity.GetAttribute(ctx, path.Root(required), &v)...)
	if !diags.HasError() && v.ValueString() == "" {
		diags.AddError("Incomplete import identity",
			fmt.Sprintf("The import block's identity has no %s: set identity = { %s = \"...\" }.", required, required))
	}
	return !diags.HasError()
}

// nodePoolIdentity is the name prefix: every member's name starts with it,
// and it never changes while the pool lives.
type nodePoolIdentity struct {
	NamePrefix types.String `tfsdk:"name_prefix"`
}

func (r *nodePoolResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"name_prefix": identityschema.StringAttribute{RequiredForImport: true,
			Description: "The pool's name prefix: its members are the Windows nodes named <name_prefix>-<suffix>."},
	}}
}
