package resources

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
)

// windows_updates: the update packages the image installs (bootstrap.WindowsUpdate).

type windowsUpdateModel struct {
	KB     types.String `tfsdk:"kb"`
	URL    types.String `tfsdk:"url"`
	SHA256 types.String `tfsdk:"sha256"`
}

var windowsUpdateObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"kb": types.StringType, "url": types.StringType, "sha256": types.StringType,
}}

func windowsUpdatesAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional: true, PlanModifiers: imageList,
		Validators: []validator.List{windowsUpdatesList{}},
		MarkdownDescription: "Windows update packages to install into the image, in this order, before anything else: a month's " +
			"servicing stack update (SSU) before its cumulative update (LCU). Each is downloaded from `url` (your mirror of the " +
			"Microsoft Update Catalog), verified by `sha256` on the guest, and installed with DISM (`.cab`: `dism.exe /Online " +
			"/Add-Package /Quiet /NoRestart`) or the Windows Update Standalone Installer (`.msu`: `wusa.exe /quiet /norestart`, run in a scheduled task as " +
			"SYSTEM, since wusa refuses a remote session: KB2773898); " +
			"the guest restarts when a package needs it (exit code 3010). Exit codes 0 and 2359302 (already installed) pass; any " +
			"other fails the build, naming the KB, its exit code and the last lines of `C:\\Windows\\Logs\\CBS\\CBS.log`. " +
			"Changing the list builds a new template; see the Windows updates guide for the monthly loop.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"kb": schema.StringAttribute{Required: true, MarkdownDescription: "The update's KB id, for example `KB5044281`.",
				Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^KB[0-9]{6,8}$`),
					"must be a KB id as the Microsoft Update Catalog writes it: KB and six to eight digits, for example KB5044281")}},
			"url": schema.StringAttribute{Required: true, Validators: []validator.String{httpURL()},
				MarkdownDescription: "Download URL of the `.cab` or `.msu` package on your mirror."},
			"sha256": schema.StringAttribute{Required: true, Validators: []validator.String{sha256Hex()},
				MarkdownDescription: "SHA-256 of the package file (`Get-FileHash -Algorithm SHA256`)."},
		}},
	}
}

// windowsUpdatesList checks the list as a whole at plan time: each package
// a .cab or .msu, each KB once (bootstrap.CheckUpdateList).
type windowsUpdatesList struct{}

func (windowsUpdatesList) Description(context.Context) string {
	return "each update a .cab or .msu package, each KB listed once"
}

func (v windowsUpdatesList) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (windowsUpdatesList) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var list []windowsUpdateModel
	if diags := req.ConfigValue.ElementsAs(ctx, &list, false); diags.HasError() {
		return
	}
	var updates []bootstrap.WindowsUpdate
	for _, u := range list {
		if u.KB.IsUnknown() || u.URL.IsUnknown() || u.SHA256.IsUnknown() {
			return // judged at apply
		}
		updates = append(updates, bootstrap.WindowsUpdate{KB: u.KB.ValueString(), URL: u.URL.ValueString(), SHA256: u.SHA256.ValueString()})
	}
	// Each attribute's own validators judge its format.
	if err := bootstrap.CheckUpdateList(updates); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid windows_updates", fmt.Sprintf("%v.", err))
	}
}

func (m *goldenImageModel) windowsUpdates(ctx context.Context) ([]bootstrap.WindowsUpdate, error) {
	var list []windowsUpdateModel
	if diags := m.WindowsUpdates.ElementsAs(ctx, &list, false); diags.HasError() {
		return nil, fmt.Errorf("reading windows_updates: %v", diags)
	}
	var out []bootstrap.WindowsUpdate
	for _, u := range list {
		out = append(out, bootstrap.WindowsUpdate{KB: u.KB.ValueString(), URL: u.URL.ValueString(), SHA256: u.SHA256.ValueString()})
	}
	return out, nil
}

func installedUpdatesValue(kbs []string) types.List {
	vals := make([]attr.Value, 0, len(kbs))
	for _, kb := range kbs {
		vals = append(vals, types.StringValue(kb))
	}
	return types.ListValueMust(types.StringType, vals)
}

// installedUpdatesFromManifest reads the KBs the manifest records (import, refresh).
func installedUpdatesFromManifest(manifest string) types.List {
	return installedUpdatesValue(goldenimage.InstalledUpdates(manifest))
}
