package resources

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
)

// online_updates: the updates the Windows Update Agent installs (bootstrap.OnlineUpdates).

type onlineUpdatesModel struct {
	Categories types.List   `tfsdk:"categories"`
	IncludeKBs types.List   `tfsdk:"include_kbs"`
	ExcludeKBs types.List   `tfsdk:"exclude_kbs"`
	WSUSServer types.String `tfsdk:"wsus_server"`
}

var onlineUpdatesAttrTypes = map[string]attr.Type{
	"categories": types.ListType{ElemType: types.StringType}, "include_kbs": types.ListType{ElemType: types.StringType},
	"exclude_kbs": types.ListType{ElemType: types.StringType}, "wsus_server": types.StringType,
}

var kbListValidators = []validator.List{listvalidator.UniqueValues(), listvalidator.ValueStringsAre(stringvalidator.RegexMatches(
	regexp.MustCompile(`^KB[0-9]{6,8}$`), "must be a KB id as the Microsoft Update Catalog writes it: KB and six to eight digits, for example KB5044281"))}

func onlineUpdatesAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true, PlanModifiers: []planmodifier.Object{imageReplace},
		Validators: []validator.Object{onlineUpdatesValidator{}},
		MarkdownDescription: "Updates to install online through the Windows Update Agent, after `windows_updates`, from Windows Update or " +
			"from your WSUS (`wsus_server`): the build searches for software updates not installed of the `categories`, keeps those " +
			"`include_kbs` and `exclude_kbs` allow, downloads and installs them, restarts when they need it and searches again until " +
			"nothing applies. The agent's part runs as LocalSystem in a scheduled task (the agent refuses its downloader and installer to " +
			"a remote logon). A failure fails the build naming the HRESULT and its meaning (`0x8024402C WU_E_PT_WINHTTP_NAME_NOT_RESOLVED` " +
			"when the service cannot be reached). What is installed depends on the day of the build: pin the month's updates with " +
			"`include_kbs`, or use `windows_updates` from a mirror, for images that must be reproducible. See the Windows updates guide.",
		Attributes: map[string]schema.Attribute{
			"categories": schema.ListAttribute{
				ElementType: types.StringType, Required: true,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.OneOf(bootstrap.ClassificationNames()...))},
				MarkdownDescription: "Update classifications, as Windows Update and WSUS name them: " + backquotedList(bootstrap.ClassificationNames()) +
					". There is no servicing stack classification: a servicing stack update is found under the classification Microsoft gives it.",
			},
			"include_kbs": schema.ListAttribute{
				ElementType: types.StringType, Optional: true, Validators: kbListValidators,
				MarkdownDescription: "When set, only these KBs among the updates found are installed, for example `[\"KB5044281\"]`.",
			},
			"exclude_kbs": schema.ListAttribute{
				ElementType: types.StringType, Optional: true, Validators: kbListValidators,
				MarkdownDescription: "KBs never installed, for example an update known to break your workloads.",
			},
			"wsus_server": schema.StringAttribute{
				Optional: true,
				Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^https?://`),
					"must be an http:// or https:// URL of a WSUS server, like http://wsus.example.com:8530")},
				MarkdownDescription: "URL of your WSUS server, for example `http://wsus.example.com:8530` (WSUS's default HTTP port) or " +
					"`https://wsus.example.com:8531` (once WSUS is configured for SSL). The build writes it into the Windows Update policy " +
					"(`WUServer`, `WUStatusServer`, `UseWUServer = 1`), which the template then keeps. `http://` is accepted because it " +
					"is WSUS's default: the agent verifies each package's signature either way, `https://` also protects the update metadata. " +
					"Unset, the agent asks its default service: Windows Update, or the WSUS the template's own policy names.",
			},
		},
	}
}

// backquotedList is `a`, `b`, `c`: names as the docs set them.
func backquotedList(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += "`" + n + "`"
	}
	return out
}

// onlineUpdatesValidator judges what no single attribute's validator sees
// (a KB both included and excluded) and the WSUS URL's form, at plan time.
type onlineUpdatesValidator struct{}

func (onlineUpdatesValidator) Description(context.Context) string {
	return "a KB listed in include_kbs or exclude_kbs, not both; wsus_server a server URL"
}

func (v onlineUpdatesValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (onlineUpdatesValidator) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var m onlineUpdatesModel
	if diags := req.ConfigValue.As(ctx, &m, basetypes.ObjectAsOptions{}); diags.HasError() {
		return
	}
	if m.Categories.IsUnknown() || m.IncludeKBs.IsUnknown() || m.ExcludeKBs.IsUnknown() || m.WSUSServer.IsUnknown() {
		return // judged at apply
	}
	o, err := m.spec(ctx)
	if err != nil {
		return
	}
	// The attributes' own validators judge the categories' names and the
	// KBs' form; here what spans them, and the WSUS URL.
	if err := bootstrap.CheckOnlineSelection(o); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid online_updates", fmt.Sprintf("%v.", err))
	}
}

func (m onlineUpdatesModel) spec(ctx context.Context) (bootstrap.OnlineUpdates, error) {
	var o bootstrap.OnlineUpdates
	for _, l := range []struct {
		name string
		v    types.List
		to   *[]string
	}{{"categories", m.Categories, &o.Categories}, {"include_kbs", m.IncludeKBs, &o.IncludeKBs}, {"exclude_kbs", m.ExcludeKBs, &o.ExcludeKBs}} {
		if diags := l.v.ElementsAs(ctx, l.to, false); diags.HasError() {
			return o, fmt.Errorf("reading online_updates.%s: %v", l.name, diags)
		}
	}
	o.WSUSServer = m.WSUSServer.ValueString()
	return o, nil
}

func (m *goldenImageModel) onlineUpdates(ctx context.Context) (*bootstrap.OnlineUpdates, error) {
	if m.OnlineUpdates.IsNull() {
		return nil, nil
	}
	var om onlineUpdatesModel
	if diags := m.OnlineUpdates.As(ctx, &om, basetypes.ObjectAsOptions{}); diags.HasError() {
		return nil, fmt.Errorf("reading online_updates: %v", diags)
	}
	o, err := om.spec(ctx)
	if err != nil {
		return nil, err
	}
	return &o, nil
}
