package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// A golden image depends on the cluster in one way: the kubelet it installs
// (kubernetes_version) must be one the API server accepts under the version
// skew policy. The version is known at plan, long before the image's
// template (and so any node's template) exists, so the image checks it
// itself: in a one-shot configuration (image and nodes in one apply) this is
// the plan-time version-skew check of the nodes to come, and a bad version
// stops the plan before an hour of image build. The check runs when the
// provider reaches a cluster; an image built where it does not (an image-only
// configuration) is not checked, and skip_checks = ["version-skew"] builds
// one for another cluster or ahead of a control-plane upgrade. A plan whose
// provider settings are unknown cannot reach the cluster; Terraform plans the
// image again at apply, with them known, before Create builds anything, and
// that plan checks it.

// planVersionSkew checks kubernetes_version against the API server at plan.
func (r *goldenImageResource) planVersionSkew(ctx context.Context, plan tfsdk.Plan, diags *diag.Diagnostics) {
	var version types.String
	var skip types.List
	diags.Append(plan.GetAttribute(ctx, path.Root("kubernetes_version"), &version)...)
	diags.Append(plan.GetAttribute(ctx, path.Root("skip_checks"), &skip)...)
	if version.IsUnknown() || version.IsNull() || skip.IsUnknown() {
		return // the apply-time plan checks it once known
	}
	r.versionSkew(ctx, version.ValueString(), skip, diags)
}

func (r *goldenImageResource) versionSkew(ctx context.Context, version string, skip types.List, diags *diag.Diagnostics) {
	var skipped []string
	diags.Append(skip.ElementsAs(ctx, &skipped, false)...)
	if r.clients == nil || kube.Skipped(kube.CheckVersionSkew, skipped) {
		return
	}
	k, err := r.clients.Kubernetes(ctx)
	if err != nil {
		tflog.Debug(ctx, "no cluster to check the golden image's kubernetes_version against", map[string]any{"error": err.Error()})
		return
	}
	server, err := k.ServerVersion(ctx)
	if err != nil {
		tflog.Warn(ctx, "the golden image's kubernetes_version was not checked against the API server", map[string]any{"error": err.Error()})
		return
	}
	if err := kube.ChecksFailed([]kube.Check{kube.VersionSkew(version, server)}); err != nil {
		diags.AddAttributeError(path.Root("kubernetes_version"), "Golden image kubelet not supported by the cluster",
			fmt.Sprintf("%v\n\nThe cluster is the one the provider's kubernetes settings reach (%s). If the image is for another cluster, or "+
				"for a control plane upgraded before nodes are cloned from it, set skip_checks = [%q].", err, k.Host(), kube.CheckVersionSkew))
	}
}

// warnSupport warns at plan when the source's Windows Server release is
// outside Kubernetes' supported releases for the image's kubernetes_version,
// or past Microsoft's extended support (winversion.SupportWarnings, with
// their sources). A warning, not an error: an administrator may build such
// an image on purpose (a migration, a lab).
func warnSupport(ctx context.Context, plan tfsdk.Plan, release winversion.Release, diags *diag.Diagnostics) {
	var version types.String
	diags.Append(plan.GetAttribute(ctx, path.Root("kubernetes_version"), &version)...)
	var minor int
	if version.IsUnknown() || version.IsNull() {
		return
	}
	if _, err := fmt.Sscanf(version.ValueString(), "v1.%d.", &minor); err != nil {
		return // the attribute's validator reports it
	}
	for _, w := range winversion.SupportWarnings(release, minor, time.Now()) {
		diags.AddAttributeWarning(path.Root("source_template"), "Windows Server "+release.Version+" is outside its support", w+
			" The image is built as asked; plan a move to a supported release.")
	}
}
