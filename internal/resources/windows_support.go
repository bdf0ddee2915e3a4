package resources

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// The support lifecycle at plan: a windows_node or windows_node_pool whose
// Windows Server release is outside the releases Kubernetes supports for the
// cluster's version (the API server's, read by discovery once per run), or
// past Microsoft's extended support, gets a warning naming the rule's source
// and dates (winversion.SupportWarnings, winversion.LifecycleNote).
//
// A warning, not an error: Kubernetes does not refuse such a kubelet (the
// matrix is what SIG Windows tests and supports), and an error would stop the
// very plans that move a pool off the release (its members are still on it
// while the new template rolls in). skip_checks = ["windows-support"]
// acknowledges it: the plans of a node kept on purpose stop repeating it.
// windows_golden_image warns the same way by its own kubernetes_version
// (golden_image_checks.go), before any node exists.

// warnWindowsSupport adds the warnings of builds ("10.0.17763" or with a
// UBR) for subject ("Windows node win-1"), each release once.
func warnWindowsSupport(ctx context.Context, c *clients.Clients, subject string, builds []string, skip types.List, diags *diag.Diagnostics) {
	if c == nil || skip.IsUnknown() {
		return
	}
	var skipped []string
	diags.Append(skip.ElementsAs(ctx, &skipped, false)...)
	if kube.Skipped(kube.CheckWindowsSupport, skipped) {
		return
	}
	var releases []winversion.Release
	for _, b := range builds {
		if r, ok := winversion.ByBuild(b); ok && !slices.ContainsFunc(releases, func(x winversion.Release) bool { return x.Version == r.Version }) {
			releases = append(releases, r)
		}
	}
	if len(releases) == 0 {
		return
	}
	server, err := c.ServerVersion(ctx)
	if err != nil {
		tflog.Debug(ctx, "the Windows support lifecycle was not judged: no API server version", map[string]any{"error": err.Error()})
		return
	}
	minor, err := winversion.ServerMinor(server)
	if err != nil {
		tflog.Warn(ctx, "the Windows support lifecycle was not judged", map[string]any{"error": err.Error()})
		return
	}
	now := time.Now()
	for _, r := range releases {
		warnings := winversion.SupportWarnings(r, minor, now)
		if len(warnings) == 0 {
			continue
		}
		detail := ""
		for _, w := range warnings {
			detail += w + " "
		}
		diags.AddAttributeWarning(path.Root("template"),
			fmt.Sprintf("%s runs Windows Server %s, outside its support on Kubernetes %s", subject, r.Version, server),
			fmt.Sprintf("%sThe cluster's API server reports %s. %s\n\nThe node runs as it is. Move it to a supported release: a "+
				"windows_golden_image from a supported base template, and the node's or pool's template set to it (Windows updates "+
				"guide). To keep it on purpose, list %q in skip_checks: that acknowledges this warning.",
				detail, server, winversion.LifecycleNote(r, now), kube.CheckWindowsSupport))
	}
}

// templateBuildFull reads the build with its update revision (build.UBR)
// that a known template's golden image recorded on it, for the plan: "" when
// it cannot (the template unknown until apply, no vCenter settings yet, not
// found, not a golden image).
func templateBuildFull(ctx context.Context, c *clients.Clients, template types.String) string {
	if c == nil || template.IsUnknown() || template.IsNull() || c.VSphereConfig.Server == "" {
		return ""
	}
	vc, err := c.VSphere(ctx)
	if err != nil {
		return ""
	}
	tmpl, err := goldenimage.FindTemplate(ctx, vc, template.ValueString())
	if err != nil {
		tflog.Debug(ctx, "the template's update revision was not read for the plan", map[string]any{"template": template.ValueString(), "error": err.Error()})
		return ""
	}
	return tmpl.WindowsBuildFull
}
