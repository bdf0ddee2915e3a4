package resources

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/gmsa"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

func NewGMSACredentialSpec() resource.Resource { return &gmsaCredentialSpecResource{} }

type gmsaCredentialSpecResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure   = (*gmsaCredentialSpecResource)(nil)
	_ resource.ResourceWithImportState = (*gmsaCredentialSpecResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*gmsaCredentialSpecResource)(nil)
	_ resource.ResourceWithIdentity    = (*gmsaCredentialSpecResource)(nil)
)

type gmsaCredentialSpecIdentity struct {
	Name types.String `tfsdk:"name"`
}

func (r *gmsaCredentialSpecResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_gmsa_credential_spec"
}

func (r *gmsaCredentialSpecResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan checks what Windows and the webhook would refuse of the
// credential spec, and that the cluster has windows-gmsa (its CRD serving
// v1 and both webhooks), failing the plan naming what to install. Unknown
// provider settings postpone the cluster check to apply, with a warning.
func (r *gmsaCredentialSpecResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan gmsaCredentialSpecModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Name.IsUnknown() {
		plan.ID = plan.Name
		plan.ClusterRole = types.StringValue(gmsa.RoleName(plan.Name.ValueString()))
	}
	if plan.known() {
		if err := plan.spec(ctx, &resp.Diagnostics).CredentialSpec.Validate(); err != nil {
			resp.Diagnostics.AddError("Invalid gMSA credential spec",
				"The credential spec is not one New-CredentialSpec writes, and the container runtime would refuse it: "+err.Error())
		}
	}
	plan.WebhookVersion = types.StringUnknown()
	if r.clients != nil {
		k, err := r.clients.Kubernetes(ctx)
		switch {
		case clients.IsUnknownConfig(err):
			resp.Diagnostics.AddWarning("Cluster not read during this plan",
				err.Error()+" The check that windows-gmsa is installed runs at apply.")
		case err != nil:
			resp.Diagnostics.AddError(clientErrorSummary("Kubernetes", err), err.Error())
		default:
			if in, ok := checkGMSAInstalled(ctx, k, &resp.Diagnostics); ok {
				plan.WebhookVersion = types.StringValue(in.Version())
			}
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *gmsaCredentialSpecResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics, "creating", gmsa.Store.Create)
}

func (r *gmsaCredentialSpecResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics, "updating", gmsa.Store.Update)
}

// write checks windows-gmsa again (the plan may have been made without the
// cluster), writes the credential spec, its role and bindings, and reads
// them back into the state.
func (r *gmsaCredentialSpecResource) write(ctx context.Context, planned tfsdk.Plan, state *tfsdk.State,
	identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics, verb string, apply func(gmsa.Store, context.Context, gmsa.Spec) error) {
	var plan gmsaCredentialSpecModel
	diags.Append(planned.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	spec := plan.spec(ctx, diags)
	k := kubeClient(ctx, r.clients, diags)
	if diags.HasError() {
		return
	}
	summary := fmt.Sprintf("%s gMSA credential spec (%s)", verb, spec.Name)
	in, ok := checkGMSAInstalled(ctx, k, diags)
	if !ok {
		return
	}
	store, err := gmsaStore(k)
	if err != nil {
		diags.AddError(summary, err.Error())
		return
	}
	tflog.Info(ctx, verb+" GMSACredentialSpec", map[string]any{"name": spec.Name, "gmsa": spec.CredentialSpec.DomainJoinConfig.MachineAccountName})
	err = apply(store, ctx, spec)
	switch {
	case apierrors.IsAlreadyExists(err):
		diags.AddAttributeError(path.Root("name"), summary,
			fmt.Sprintf("A GMSACredentialSpec named %q already exists in the cluster. Import it to manage it with Terraform: "+
				"terraform import <address> %s", spec.Name, spec.Name))
		return
	case apierrors.IsForbidden(err):
		diags.AddError(summary, err.Error()+"\n\nWriting a ClusterRole that grants `use` and binding it needs an administrator's identity "+
			"(or one that holds `use` on the credential spec itself, or `escalate` and `bind`): give the resource a provider configuration with an "+
			"administrator's kubeconfig (guide \"Least privilege\").")
		return
	case err != nil:
		diags.AddError(summary, err.Error())
		return
	}
	found, err := store.Find(ctx, spec.Name)
	if err != nil {
		diags.AddError(summary, "reading it back: "+err.Error())
		return
	}
	plan.fromCluster(spec.Name, found)
	plan.WebhookVersion = types.StringValue(in.Version())
	diags.Append(state.Set(ctx, &plan)...)
	setIdentity(ctx, identity, gmsaCredentialSpecIdentity{Name: plan.Name}, diags)
}

func (r *gmsaCredentialSpecResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state gmsaCredentialSpecModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, gmsaCredentialSpecIdentity{Name: state.ID}, &resp.Diagnostics)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	store, err := gmsaStore(k)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading gMSA credential spec (%s)", name), err.Error())
		return
	}
	found, err := store.Find(ctx, name)
	if errors.Is(err, gmsa.ErrNotFound) || isNoCRD(err) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("gMSA credential spec (%s) not found", name),
			"The GMSACredentialSpec (or its CRD) was deleted outside Terraform; it is removed from the state and the next apply creates it again.")
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading gMSA credential spec (%s)", name), err.Error())
		return
	}
	state.fromCluster(name, found)
	if state.WebhookVersion.IsNull() || state.WebhookVersion.IsUnknown() {
		// Imported: read the webhook's version once, so the next plan
		// does not show it changing. Each plan reads it again.
		state.WebhookVersion = types.StringValue("unknown")
		if in, err := gmsa.Detect(ctx, store.Clientset, store.Dynamic); err == nil {
			state.WebhookVersion = types.StringValue(in.Version())
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *gmsaCredentialSpecResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state gmsaCredentialSpecModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	k := kubeClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.ID.ValueString()
	store, err := gmsaStore(k)
	if err == nil {
		tflog.Info(ctx, "deleting GMSACredentialSpec", map[string]any{"name": name})
		err = store.Delete(ctx, name)
	}
	if err != nil && !isNoCRD(err) {
		resp.Diagnostics.AddError(fmt.Sprintf("deleting gMSA credential spec (%s)", name), err.Error())
	}
}

// ImportState takes the GMSACredentialSpec name, as the import ID or the
// identity's name; Read then fills the credential spec and the
// ServiceAccounts its role is bound to.
func (r *gmsaCredentialSpecResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name := req.ID
	var id gmsaCredentialSpecIdentity
	if importedIdentity(ctx, req, &id, "name", &resp.Diagnostics) {
		name = id.Name.ValueString()
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	setIdentity(ctx, resp.Identity, gmsaCredentialSpecIdentity{Name: types.StringValue(name)}, &resp.Diagnostics)
}

// checkGMSAInstalled adds the plan's error when windows-gmsa is not wholly
// installed, naming each missing part and what to install.
func checkGMSAInstalled(ctx context.Context, k *kube.Client, diags *diag.Diagnostics) (gmsa.Installation, bool) {
	dyn, err := dynamicOf(k)
	if err != nil {
		diags.AddError("Cannot check for windows-gmsa", err.Error())
		return gmsa.Installation{}, false
	}
	in, err := gmsa.Check(ctx, k.Interface, dyn)
	switch {
	case apierrors.IsForbidden(err):
		diags.AddError("Cannot check for windows-gmsa",
			"The provider's Kubernetes identity may not read the CustomResourceDefinitions and webhook configurations the check reads: "+
				"windows_gmsa_credential_spec is installed once per cluster, with an administrator's identity, through a provider "+
				"configuration of its own (`provider \"windows\" { alias = \"admin\" ... }` with a cluster administrator's kubeconfig, "+
				"and `provider = windows.admin` in the resource); the everyday role grants none of it (guide \"Least privilege\").\n\n"+err.Error())
		return in, false
	case errors.Is(err, gmsa.ErrNotInstalled):
		diags.AddError("windows-gmsa webhook not installed",
			fmt.Sprintf("A GMSACredentialSpec needs kubernetes-sigs/windows-gmsa in the cluster, and %s.\n\n%s", joinProblems(in.Problems()), gmsa.InstallHint))
		return in, false
	case err != nil:
		diags.AddError("Cannot check for windows-gmsa", err.Error())
		return in, false
	}
	return in, true
}

func joinProblems(p []string) string {
	out := ""
	for i, s := range p {
		switch {
		case i == 0:
		case i == len(p)-1:
			out += " and "
		default:
			out += ", "
		}
		out += s
	}
	return out
}

func gmsaStore(k *kube.Client) (gmsa.Store, error) {
	dyn, err := dynamicOf(k)
	return gmsa.Store{Clientset: k.Interface, Dynamic: dyn}, err
}

func dynamicOf(k *kube.Client) (dynamic.Interface, error) {
	if k.Dynamic != nil {
		return k.Dynamic, nil
	}
	return dynamic.NewForConfig(k.REST)
}

// isNoCRD reports an API server's answer for a resource type it does not
// serve (the CRD was removed): nothing of that type exists.
func isNoCRD(err error) bool {
	return apierrors.IsNotFound(err)
}
