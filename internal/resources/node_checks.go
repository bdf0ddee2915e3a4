package resources

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// The readiness checks of a new node run as early as their facts allow:
//
//   - at plan, the cluster-wide checks (node CIDR allocation, CNI, Linux
//     DaemonSets, Linux headroom) always, whatever else is unknown: the
//     one-shot configuration (golden image and nodes in one apply) has no
//     template yet;
//   - at plan, the checks of the image (version-skew against the template's
//     kubelet, windows-build) when the template is known; when it is not,
//     windows_golden_image checks its own kubernetes_version against the API
//     server at plan (golden_image_checks.go);
//   - at apply, Terraform plans each resource again just before it applies
//     it, with every value its dependencies produced known and the provider
//     configured with known settings: planChecks then runs all of them,
//     also the checks of an image built in the same apply and those a plan
//     whose provider settings were unknown could not run. It evaluates the
//     snapshot of that walk (clients.Cluster), taken at the first node's
//     plan, with the guards planned in it (clients.Planned);
//     That apply-time plan stops the node before Create is called, so
//     before anything is cloned: Create does not check again (a second
//     pass would cost one full cluster discovery per node to see only what
//     changed since the snapshot).

// planChecks runs, at plan time, the readiness checks of a node about to be
// created that the known facts allow.
func (r *nodeResource) planChecks(ctx context.Context, plan nodeModel, resp *resource.ModifyPlanResponse) {
	if r.clients == nil || plan.SkipChecks.IsUnknown() {
		return // the apply-time plan runs them once skip_checks is known
	}
	// vCenter first: a refused login or a missing template is an error
	// whatever the cluster says.
	var image *goldenimage.TemplateInfo
	errorsBefore := resp.Diagnostics.ErrorsCount()
	if vc := planVSphere(ctx, r.clients, "Windows node "+plan.Name.ValueString(), &resp.Diagnostics); vc != nil {
		planFolder(ctx, vc, plan.Folder, plan.ResourcePoolID, &resp.Diagnostics)
		planStorage(ctx, vc, plan.DatastoreClusterID, plan.StoragePolicyID, &resp.Diagnostics)
		if !plan.Template.IsUnknown() {
			tmpl, err := goldenimage.FindTemplate(ctx, vc, plan.Template.ValueString())
			switch {
			case err == nil:
				image = &tmpl
				warnWindowsSupport(ctx, r.clients, "Windows node "+plan.Name.ValueString(), []string{tmpl.WindowsBuild()}, plan.SkipChecks, &resp.Diagnostics)
			case vsphere.IsNotFound(err):
				resp.Diagnostics.AddAttributeError(path.Root("template"), "Template not found",
					fmt.Sprintf("template: %v. Give the inventory path or managed object id of a template, for example windows_golden_image.<name>.template_path.", err))
			default:
				resp.Diagnostics.AddAttributeError(path.Root("template"), "Invalid template", "template: "+err.Error())
			}
		}
	}
	if resp.Diagnostics.ErrorsCount() > errorsBefore {
		return // vCenter said no: the cluster's checks wait for a plan that can pass
	}
	if _, err := r.clients.Kubernetes(ctx); err != nil {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Cluster readiness checks of Windows node %s postponed to apply", plan.Name.ValueString()),
			"The plan cannot reach the cluster ("+err.Error()+"), so the readiness checks run when the apply plans the node again with the settings known, before any VM is cloned.")
		return
	}
	opts := kube.CheckOptions{PlannedGuards: r.clients.Planned.Guards()}
	if image != nil {
		opts.KubernetesVersion, opts.WindowsBuild = image.KubernetesVersion, image.WindowsBuild()
	}
	resp.Diagnostics.Append(plan.SkipChecks.ElementsAs(ctx, &opts.Skip, false)...)
	if slices.Contains(opts.Skip, kube.CheckNetworkProbe) {
		resp.Diagnostics.AddAttributeWarning(path.Root("skip_checks"), fmt.Sprintf("Network probe of Windows node %s skipped", plan.Name.ValueString()),
			"skip_checks lists \""+kube.CheckNetworkProbe+"\": the create ends once the Node is Ready with its agents, without proving that a pod on it "+
				"resolves names through the cluster DNS and reaches a Service and a pod on another node. Remove it from skip_checks to have the create prove that.")
	}
	cluster, err := r.clients.Cluster(ctx) // one snapshot for every node of this run
	if err != nil {
		resp.Diagnostics.AddWarning("Cluster readiness checks did not run", err.Error())
		return
	}
	checksFailed(&resp.Diagnostics, plan.Name.ValueString(), cluster.Checks(opts))
}

// checksFailed adds the one diagnostic of failed readiness checks: each
// failed check with its remedy.
func checksFailed(diags *diag.Diagnostics, node string, checks []kube.Check) {
	if err := kube.ChecksFailed(checks); err != nil {
		diags.AddError(fmt.Sprintf("Cluster not ready for Windows node %s", node),
			err.Error()+"\n\nFix the cluster, or list the check's ID in skip_checks if you know better.")
	}
}
