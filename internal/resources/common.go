package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
