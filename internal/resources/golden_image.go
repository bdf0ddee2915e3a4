package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// Default timeouts: an image build downloads hundreds of megabytes and
// reboots the guest; deleting a template is one task. create lies above a
// build at the tail of each operation, about 61 minutes, most of it one
// cumulative update's install (40 minutes: a Windows Server 2022 update run
// took 36, adoptium/infrastructure#3462) and its restart (6); 60 minutes
// was below it (internal/sandbox/latency; TestDefaultTimeoutsAboveTheModelsTail).
const (
	goldenImageCreateTimeout = 90 * time.Minute
	goldenImageDeleteTimeout = 10 * time.Minute
)

func NewGoldenImage() resource.Resource { return &goldenImageResource{} }

type goldenImageResource struct {
	clients *clients.Clients
}

var (
	_ resource.ResourceWithConfigure   = (*goldenImageResource)(nil)
	_ resource.ResourceWithImportState = (*goldenImageResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*goldenImageResource)(nil)
)

func (r *goldenImageResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_golden_image"
}

func (r *goldenImageResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.clients = clientsFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan checks at plan time what can be known then: that the source is
// a Windows Server release Kubernetes supports (for the image's Kubernetes
// version) and Microsoft still services (a warning otherwise), and that the
// cluster accepts the kubelet version (golden_image_checks.go).
func (r *goldenImageResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "plan")
	if !req.Plan.Raw.IsNull() && registryInputsChanged(ctx, req.State, req.Plan, &resp.Diagnostics) {
		planRegistry(ctx, req.Plan, req.Config, &resp.Diagnostics)
	}
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return // destroy, or an existing image (inputs force replacement anyway)
	}
	warnAdminUser(ctx, req.Plan, &resp.Diagnostics)
	var containerdURL types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("containerd_url"), &containerdURL)...)
	if v := bootstrap.ContainerdVersion(containerdURL.ValueString()); !containerdURL.IsUnknown() && !bootstrap.ContainerdSupported(v) {
		resp.Diagnostics.AddAttributeWarning(path.Root("containerd_url"), "containerd "+v+" is outside the support matrix",
			"containerd's RELEASES.md supports containerd 2.3.0+ and 2.2.0+ for Kubernetes 1.36, and containerd 1.7 is past its end of life. "+
				"The image is built with it as pinned (configuration version 2 for 1.7), but use a 2.2 release, for example "+
				"https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz.")
	}
	if r.clients == nil {
		return
	}
	r.planVersionSkew(ctx, req.Plan, &resp.Diagnostics)
	var source, folder, poolID, dsCluster, policy types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("source_template"), &source)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("datastore_cluster_id"), &dsCluster)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("storage_policy_id"), &policy)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("folder"), &folder)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("resource_pool_id"), &poolID)...)
	vc := planVSphere(ctx, r.clients, "windows_golden_image", &resp.Diagnostics)
	if vc == nil {
		return
	}
	planFolder(ctx, vc, folder, poolID, &resp.Diagnostics)
	planStorage(ctx, vc, dsCluster, policy, &resp.Diagnostics)
	if source.IsUnknown() || source.IsNull() {
		return
	}
	info, err := goldenimage.InspectSource(ctx, vc, source.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("source_template"), "Invalid source_template", err.Error())
		return
	}
	tflog.Debug(ctx, "source template", map[string]any{"path": info.Path, "guest_id": info.GuestID, "release": info.Release.Version})
	warnSupport(ctx, req.Plan, info.Release, &resp.Diagnostics)
}

func (r *goldenImageResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "create")
	var plan goldenImageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	password, sshKey := writeOnlySecrets(ctx, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, goldenImageCreateTimeout)
	resp.Diagnostics.Append(diags...)
	vc := vsphereClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if plan.Name.IsUnknown() || plan.Name.IsNull() {
		plan.Name = types.StringValue(plan.NamePrefix.ValueString() + time.Now().UTC().Format("20060102150405"))
	}
	reg, err := plan.registry(ctx, req.Config)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("creating Windows golden image (%s)", plan.Name.ValueString()), err.Error())
		return
	}
	buildReq, err := plan.buildRequest(ctx, password, sshKey, reg)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("creating Windows golden image (%s)", plan.Name.ValueString()), err.Error())
		return
	}
	buildReq.OnBuildVM = func(vm goldenimage.VM) {
		plan.setBuildVM(vm)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		setIdentity(ctx, resp.Identity, goldenImageIdentity{ID: plan.ID}, &resp.Diagnostics)
	}
	buildReq.Progress = func(stage string, fields map[string]any) {
		if fields == nil {
			fields = map[string]any{}
		}
		fields["image"] = plan.Name.ValueString()
		tflog.Info(ctx, "golden image: "+stage, fields)
	}

	res, err := goldenimage.Build(ctx, goldenimage.NewVSphere(vc), remote.Connect, buildReq)
	if err != nil {
		summary := fmt.Sprintf("creating Windows golden image (%s)", plan.Name.ValueString())
		if res.BuildVM == nil {
			// The build VM is gone again: nothing to track.
			resp.State.RemoveResource(ctx)
			addGuestError(&resp.Diagnostics, summary, err, configuredHostKey(ctx, req.Config), uacCause(plan.AdminUser.ValueString(), err))
			return
		}
		addGuestError(&resp.Diagnostics, summary, err, configuredHostKey(ctx, req.Config), uacCause(plan.AdminUser.ValueString(), err)+fmt.Sprintf(
			"\n\nThe build VM %s was kept for debugging (keep_build_vm_on_failure); it is in the state and the next apply replaces it.", res.BuildVM.ID))
		return
	}
	plan.setOutputs(res)
	tflog.Info(ctx, "golden image built", map[string]any{"template": res.Template.Path, "windows_build": res.WindowsBuildFull,
		"elapsed": res.Elapsed.String(), "round_trips": res.RoundTrips})
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setIdentity(ctx, resp.Identity, goldenImageIdentity{ID: plan.ID}, &resp.Diagnostics)
}

func (r *goldenImageResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "read")
	var state goldenImageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	setIdentity(ctx, resp.Identity, goldenImageIdentity{ID: state.ID}, &resp.Diagnostics)
	vc := vsphereClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if id := state.BuildVMID.ValueString(); id != "" {
		// A kept, failed build: only its existence matters.
		if _, err := goldenimage.FindVM(ctx, vc, id); vsphere.IsNotFound(err) {
			resp.Diagnostics.AddWarning(fmt.Sprintf("Windows golden image (%s) build VM not found", state.Name.ValueString()),
				"The build VM kept after a failed build was deleted outside Terraform; it is removed from the state.")
			resp.State.RemoveResource(ctx)
		} else if err != nil {
			resp.Diagnostics.AddError(fmt.Sprintf("reading Windows golden image (%s)", state.Name.ValueString()), err.Error())
		}
		return
	}
	info, err := goldenimage.FindTemplate(ctx, vc, state.ID.ValueString())
	if vsphere.IsNotFound(err) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Windows golden image (%s) not found", state.Name.ValueString()),
			"The template was deleted outside Terraform (or is no longer a template); it is removed from the state and the next apply builds it again.")
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("reading Windows golden image (%s)", state.Name.ValueString()), err.Error())
		return
	}
	state.fromTemplate(info)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes nothing in vSphere: every input of a built image forces a
// replacement. It records what is not an input of the image (timeouts,
// skip_checks), and, on the first apply after an import, the configuration's
// inputs, which vCenter could not tell.
func (r *goldenImageResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "update")
	var plan goldenImageModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	plan.Transport = withHostKey(plan.Transport, "")
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setIdentity(ctx, resp.Identity, goldenImageIdentity{ID: plan.ID}, &resp.Diagnostics)
	resp.Diagnostics.Append(clearImported(ctx, resp.Private)...)
}

func (r *goldenImageResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "delete")
	var state goldenImageModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, goldenImageDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	vc := vsphereClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := fmt.Sprintf("deleting Windows golden image (%s)", state.Name.ValueString())
	if id := state.BuildVMID.ValueString(); id != "" {
		if err := goldenimage.NewVSphere(vc).Destroy(ctx, goldenimage.VM{ID: id}); err != nil {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("destroying the kept build VM %s: %v", id, err))
		}
		return
	}
	err := goldenimage.DeleteTemplate(ctx, vc, state.ID.ValueString())
	var inUse *goldenimage.InUseError
	switch {
	case errors.As(err, &inUse):
		resp.Diagnostics.AddError(summary, fmt.Sprintf("The template %s still has linked clones that share its disks: %s. "+
			"Delete or fully clone them first (or keep the image until the nodes move to a new one with create_before_destroy).",
			state.TemplatePath.ValueString(), strings.Join(inUse.Clones, ", ")))
	case err != nil:
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

// ImportState takes the template's inventory path or managed object id, or
// the identity's id (the managed object id).
func (r *goldenImageResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx = vsphereOperation(ctx, "windows_golden_image", "import")
	ref := req.ID
	var id goldenImageIdentity
	if importedIdentity(ctx, req, &id, "id", &resp.Diagnostics) {
		ref = id.ID.ValueString()
	}
	vc := vsphereClient(ctx, r.clients, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	info, err := goldenimage.FindTemplate(ctx, vc, ref)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("importing Windows golden image (%s)", ref), err.Error())
		return
	}
	state := importedImage(info)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	setIdentity(ctx, resp.Identity, goldenImageIdentity{ID: state.ID}, &resp.Diagnostics)
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...)
}
