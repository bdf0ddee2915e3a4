package resources

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// network_artifacts: the downloads each networking mode needs on the
// image (networking.Mode.Artifacts), keyed by mode and then by artifact:
// network_artifacts = { flannel = { flanneld = { url, sha256 }, ... } }.
// The schema is built from the registry, so a mode's artifacts appear here
// (and in the docs) without an edit to this file.

// networkArtifactsSchema is the attribute: one optional object per mode
// with artifacts, whose Required artifacts must all be given with it.
func networkArtifactsSchema() schema.SingleNestedAttribute {
	modes := map[string]schema.Attribute{}
	var listed []string
	for _, m := range networking.Modes() {
		arts := m.Artifacts()
		if len(arts) == 0 {
			continue
		}
		nested := map[string]schema.Attribute{}
		var names []string
		for _, a := range arts {
			nested[a.Name] = schema.SingleNestedAttribute{
				Required: a.Required, Optional: !a.Required,
				MarkdownDescription: a.Description,
				Attributes: map[string]schema.Attribute{
					"url": schema.StringAttribute{Required: true, Validators: []validator.String{httpURL()},
						MarkdownDescription: "Where the image build downloads it (HTTP or HTTPS)."},
					"sha256": schema.StringAttribute{Required: true, Validators: []validator.String{sha256Hex()},
						MarkdownDescription: "SHA-256 (64 hex digits) of the download, verified on the guest before it is used."},
				},
			}
			names = append(names, "`"+a.Name+"`")
		}
		modes[m.Name()] = schema.SingleNestedAttribute{Optional: true, Attributes: nested,
			MarkdownDescription: fmt.Sprintf("What `windows_node_networking` with `cni = %q` runs on the node: %s.", m.Name(), strings.Join(names, ", "))}
		listed = append(listed, "`"+m.Name()+"`")
	}
	return schema.SingleNestedAttribute{
		Optional: true, Attributes: modes, PlanModifiers: []planmodifier.Object{imageReplace},
		MarkdownDescription: "The programs a networking mode runs on the node, by mode (" + strings.Join(listed, ", ") + ") and then by " +
			"program, each a URL and its SHA-256: give the ones of the `cni` your `windows_node_networking` uses. A node refuses to join " +
			"a mode whose programs its image lacks.",
	}
}

// networkArtifacts turns the attribute into the image's downloads, in the
// registry's order.
func networkArtifacts(ctx context.Context, v types.Object) ([]bootstrap.Artifact, diag.Diagnostics) {
	var diags diag.Diagnostics
	if v.IsNull() || v.IsUnknown() {
		return nil, diags
	}
	var out []bootstrap.Artifact
	modes := v.Attributes()
	for _, m := range networking.Modes() {
		mv, ok := modes[m.Name()].(types.Object)
		if !ok || mv.IsNull() || mv.IsUnknown() {
			continue
		}
		given := mv.Attributes()
		for _, a := range m.Artifacts() {
			av, ok := given[a.Name].(types.Object)
			if !ok || av.IsNull() || av.IsUnknown() {
				continue
			}
			var dl struct {
				URL    types.String `tfsdk:"url"`
				SHA256 types.String `tfsdk:"sha256"`
			}
			diags.Append(av.As(ctx, &dl, basetypes.ObjectAsOptions{})...)
			out = append(out, installArtifact(m.Name(), a, dl.URL.ValueString(), dl.SHA256.ValueString()))
		}
	}
	return out, diags
}

// installArtifact is where one download lands: the program itself at
// InstallAs, or an archive unpacked (ExtractTo, else InstallAs's folder)
// with Member moved to InstallAs.
func installArtifact(mode string, a networking.Artifact, url, sum string) bootstrap.Artifact {
	name := strings.ReplaceAll(a.Name, "_", "-")
	if !strings.HasPrefix(name, mode) {
		name = mode + "-" + name // "flannel-cni-plugin"; "flanneld" names itself
	}
	out := bootstrap.Artifact{Name: name, URL: url, SHA256: sum, Path: a.InstallAs}
	if a.Member == "" && a.ExtractTo == "" {
		return out
	}
	out.Path = bootstrap.DownloadPath(url)
	out.ExtractTo = a.ExtractTo
	if out.ExtractTo == "" {
		out.ExtractTo = windowsDir(a.InstallAs)
	}
	if a.Member != "" {
		out.Member, out.InstallAs = a.Member, a.InstallAs
	}
	return out
}

// windowsDir is the folder of a Windows path.
func windowsDir(p string) string {
	return strings.ReplaceAll(path.Dir(strings.ReplaceAll(p, `\`, "/")), "/", `\`)
}

// networkArtifactsType is the attribute's type (null in an imported state).
func networkArtifactsType() types.ObjectType {
	return networkArtifactsSchema().GetType().(types.ObjectType)
}
