package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// vsphereOperation tags ctx so that every vSphere call of one operation of
// a resource carries one operationID, which vCenter logs beside each call
// (vsphere.WithOperation), and puts the id on the provider's own log lines
// of the operation (TF_LOG=debug): an administrator matches the two.
func vsphereOperation(ctx context.Context, resource, action string) context.Context {
	ctx, id := vsphere.WithOperation(ctx, resource, action)
	ctx = tflog.SetField(ctx, "vsphere_operation_id", id)
	tflog.Debug(ctx, "vSphere operation")
	return ctx
}

// clientsFrom unwraps the provider data handed to Configure. It is nil while
// the provider itself is not configured yet (validation, early plan).
func clientsFrom(providerData any, diags *diag.Diagnostics) *clients.Clients {
	if providerData == nil {
		return nil
	}
	c, ok := providerData.(*clients.Clients)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *clients.Clients, got %T. This is a bug in the provider; please report it.", providerData))
		return nil
	}
	return c
}

// kubeClient returns the Kubernetes client or adds one diagnostic saying why
// there is none.
func kubeClient(ctx context.Context, c *clients.Clients, diags *diag.Diagnostics) *kube.Client {
	if c == nil {
		diags.AddError("Provider not configured", "The windows provider was not configured before use. This is a bug in the provider; please report it.")
		return nil
	}
	k, err := c.Kubernetes(ctx)
	if err != nil {
		diags.AddError(clientErrorSummary("Kubernetes", err), err.Error())
		return nil
	}
	return k
}

// clientErrorSummary heads the diagnostic of a client that is not available.
// Settings unknown until apply are not a connection failure: the error's
// detail names them and the ways out.
func clientErrorSummary(client string, err error) string {
	if clients.IsUnknownConfig(err) {
		return "Provider configuration unknown until apply"
	}
	return "Cannot connect to " + client
}

// vsphereClient returns the vCenter session or adds one diagnostic saying why
// there is none.
func vsphereClient(ctx context.Context, c *clients.Clients, diags diagAdder) *vsphere.Client {
	if c == nil {
		diags.AddError("Provider not configured", "The windows provider was not configured before use. This is a bug in the provider; please report it.")
		return nil
	}
	vc, err := c.VSphere(ctx)
	if err != nil {
		diags.AddError(clientErrorSummary("vSphere", err), err.Error())
		return nil
	}
	return vc
}

type diagAdder interface{ AddError(summary, detail string) }

// planVSphere returns the vCenter session for the plan-time checks of
// subject ("Windows node x"), or nil with the reason in diags: settings
// unknown until apply postpone the checks (a warning); a refused login, an
// unverified certificate or an unreachable vCenter with known settings is
// an error, naming the setting to fix, at plan rather than after the plan
// is approved. No vCenter configured (no server) leaves the checks to the
// apply, which says what is missing.
func planVSphere(ctx context.Context, c *clients.Clients, subject string, diags *diag.Diagnostics) *vsphere.Client {
	if c == nil {
		return nil
	}
	if len(c.VSphereConfigUnknown) == 0 && c.VSphereConfig.Server == "" {
		return nil
	}
	vc, err := c.VSphere(ctx)
	switch {
	case clients.IsUnknownConfig(err):
		diags.AddWarning("vSphere checks of "+subject+" postponed to apply",
			err.Error()+"\n\nThe apply plans it again with the settings known and checks vCenter then, before anything is created.")
		return nil
	case err != nil:
		diags.AddError("Cannot connect to vSphere", "Planning "+subject+": "+err.Error())
		return nil
	}
	return vc
}

// addDiscoverError turns an error of winnode.Manager.Discover into a
// diagnostic: on the folder attribute when the folder given is not there.
func addDiscoverError(diags *diag.Diagnostics, err error, folder string) {
	if vsphere.IsNotFound(err) && folder != "" {
		diags.AddAttributeError(path.Root("folder"), "Folder not found",
			fmt.Sprintf("folder: %v. Give the inventory path of a VM folder, for example /dc1/vm/k8s-windows, or omit folder to search the whole inventory.", err))
		return
	}
	diags.AddError("Listing Windows nodes", err.Error())
}

// planFolder checks at plan that the plan's folder exists or can be created
// (a missing one is created at apply), an error on the attribute otherwise;
// a folder or resource pool unknown until apply is checked then.
func planFolder(ctx context.Context, vc *vsphere.Client, folder, poolID types.String, diags *diag.Diagnostics) {
	if folder.IsUnknown() || folder.IsNull() || poolID.IsUnknown() {
		return
	}
	if !poolID.IsNull() {
		if _, err := vc.FindResourcePoolByID(ctx, poolID.ValueString()); vsphere.IsNotFound(err) {
			diags.AddAttributeError(path.Root("resource_pool_id"), "Resource pool not found", fmt.Sprintf("resource_pool_id: %v.", err))
			return
		}
	}
	err := vc.CheckFolder(ctx, folder.ValueString(), poolID.ValueString())
	switch {
	case vsphere.IsNotFound(err):
		diags.AddAttributeError(path.Root("folder"), "Folder not found",
			fmt.Sprintf("folder: %v, and it cannot be created there: folders are created below an existing folder of a datacenter's VM folder. "+
				"Give the inventory path of a VM folder, for example /dc1/vm/k8s-windows, or the managed object id of an existing one.", err))
	case err != nil:
		diags.AddAttributeError(path.Root("folder"), "Invalid folder", "folder: "+err.Error())
	}
}

// planStorage checks at plan that vCenter has the datastore cluster and the
// storage policy (PBM) the plan names, an error on the attribute otherwise,
// as planFolder does for the folder: a clone naming either fails only at
// vCenter, after the plan was approved. Values unknown until apply are
// checked by the apply's plan.
func planStorage(ctx context.Context, vc *vsphere.Client, datastoreClusterID, storagePolicyID types.String, diags *diag.Diagnostics) {
	if id := datastoreClusterID; !id.IsUnknown() && !id.IsNull() {
		if _, err := vc.FindDatastoreClusterByID(ctx, id.ValueString()); err != nil {
			summary := "Invalid datastore_cluster_id"
			if vsphere.IsNotFound(err) {
				summary = "Datastore cluster not found"
			}
			diags.AddAttributeError(path.Root("datastore_cluster_id"), summary,
				fmt.Sprintf("datastore_cluster_id: %v. Give the managed object id of a datastore cluster (vsphere_datastore_cluster.<name>.id, \"group-p...\").", err))
		}
	}
	if id := storagePolicyID; !id.IsUnknown() && !id.IsNull() {
		if _, err := vc.CheckStoragePolicy(ctx, id.ValueString()); err != nil {
			summary := "Invalid storage_policy_id"
			if vsphere.IsNotFound(err) {
				summary = "Storage policy not found"
			}
			diags.AddAttributeError(path.Root("storage_policy_id"), summary,
				fmt.Sprintf("storage_policy_id: %v. Give the id of a VM storage policy vCenter has (data.vsphere_storage_policy.<name>.id).", err))
		}
	}
}
