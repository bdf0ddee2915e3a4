package resources

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/registrymirror"
)

// The image's registry mirrors and their credentials live on
// windows_golden_image because containerd's configuration is written there
// (bootstrap.ImageSteps' containerd-service step): every clone starts
// containerd with the template's config.toml and hosts.toml, and the image
// build's own pulls (prepull_images) go through the same mirrors.

func registryMirrorsAttribute() schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		Optional: true, PlanModifiers: []planmodifier.Map{imageReplace},
		MarkdownDescription: "Registry mirrors containerd pulls through, keyed by the registry the images name (`registry.k8s.io`, " +
			"`mcr.microsoft.com`, `docker.io`, `myregistry.io:5000`, or `_default` for every other): each becomes a `hosts.toml` under " +
			"containerd's `config_path` (`" + bootstrap.RegistryHostsDir + "`), as containerd 2.x documents (docs/hosts.md). " +
			"containerd tries the `endpoints` in order, then `server`. The pause image, the networking agents' HostProcess images and " +
			"every pod's images go through them, and so do the image build's `prepull_images` (`ctr --hosts-dir`). With mirrors, the " +
			"HostProcess base image is no longer pulled into the template unless `prepull_images` lists it. The plan resolves " +
			"`pause_image` and `prepull_images` through the mirrors with `registry_credentials_wo`: a mirror's refusal (401, 403, 404) " +
			"is an error, a mirror Terraform cannot reach a warning.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"endpoints": schema.ListAttribute{
				ElementType: types.StringType, Required: true,
				Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(httpURL())},
				MarkdownDescription: "Mirror URLs (`https://mirror.example.com:5000`), tried in order; credentials go in `registry_credentials_wo`, not in the URL.",
			},
			"server": schema.StringAttribute{
				Optional: true, Validators: []validator.String{httpURL()},
				MarkdownDescription: "Where containerd goes after every endpoint refused. Unset, containerd falls back to the upstream registry itself.",
			},
		}},
	}
}

func registryCredentialsAttribute() schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		Optional: true, WriteOnly: true, Sensitive: true,
		MarkdownDescription: "Credentials of the mirrors, keyed by a mirror's `host[:port]` as its endpoint URL names it. Write-only: never " +
			"stored in the state; change `registry_credentials_wo_version` to rebuild with new ones. containerd 2.x reads a credential it " +
			"sends by itself (the pause image, and pulls the kubelet makes without an image pull secret) only from " +
			"`registry.configs.\"<host>\".auth` in `config.toml`: `hosts.toml` has no credential field by design, and a pod's image pull " +
			"secrets never reach a mirror (containerd#10996). So the credential is on the template's and the nodes' disk in `" +
			bootstrap.ContainerdConf + "`, whose DACL only LocalSystem and Administrators hold; it appears in no other file, log or state. " +
			"containerd deprecates `registry.configs` (removal planned for 2.4) until it offers a secret store.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"username": schema.StringAttribute{Required: true, WriteOnly: true, MarkdownDescription: "User name."},
			"password": schema.StringAttribute{Required: true, WriteOnly: true, Sensitive: true, MarkdownDescription: "Password or token."},
		}},
	}
}

type registryMirrorModel struct {
	Endpoints types.List   `tfsdk:"endpoints"`
	Server    types.String `tfsdk:"server"`
}

type registryCredentialModel struct {
	Username types.String `tfsdk:"username"`
	Password types.String `tfsdk:"password"`
}

// registryConfig reads the mirrors from a plan or configuration and the
// credentials from the configuration (write-only: nowhere else); known is
// false while any of them is unknown.
func registryConfig(ctx context.Context, mirrors types.Map, config tfsdk.Config) (reg bootstrap.Registry, known bool, diags diag.Diagnostics) {
	if mirrors.IsUnknown() {
		return reg, false, nil
	}
	var ms map[string]registryMirrorModel
	diags.Append(mirrors.ElementsAs(ctx, &ms, false)...)
	var credsValue types.Map
	diags.Append(config.GetAttribute(ctx, path.Root("registry_credentials_wo"), &credsValue)...)
	if diags.HasError() {
		return reg, false, diags
	}
	if credsValue.IsUnknown() {
		return reg, false, diags
	}
	var creds map[string]registryCredentialModel
	diags.Append(credsValue.ElementsAs(ctx, &creds, false)...)
	known = true
	for _, k := range sortedMapKeys(ms) {
		m := ms[k]
		var endpoints []string
		if m.Endpoints.IsUnknown() || m.Server.IsUnknown() {
			known = false
			continue
		}
		diags.Append(m.Endpoints.ElementsAs(ctx, &endpoints, false)...)
		reg.Mirrors = append(reg.Mirrors, bootstrap.RegistryMirror{Registry: k, Endpoints: endpoints, Server: m.Server.ValueString()})
	}
	for _, k := range sortedMapKeys(creds) {
		c := creds[k]
		if c.Username.IsUnknown() || c.Password.IsUnknown() {
			known = false
			continue
		}
		reg.Credentials = append(reg.Credentials, bootstrap.RegistryCredential{Host: k, Username: c.Username.ValueString(), Password: c.Password.ValueString()})
	}
	return reg, known, diags
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// planRegistry checks the mirrors and credentials at plan: their shape
// (bootstrap.Registry.Validate) and, when everything is known, that the
// pause image and the images to prepull resolve through the mirrors with
// the credentials (registrymirror.Resolve), from where Terraform runs.
func planRegistry(ctx context.Context, plan tfsdk.Plan, config tfsdk.Config, diags *diag.Diagnostics) {
	var mirrors types.Map
	diags.Append(plan.GetAttribute(ctx, path.Root("registry_mirrors"), &mirrors)...)
	if mirrors.IsNull() && !mirrors.IsUnknown() {
		var creds types.Map
		diags.Append(config.GetAttribute(ctx, path.Root("registry_credentials_wo"), &creds)...)
		if !creds.IsNull() && !creds.IsUnknown() {
			diags.AddAttributeError(path.Root("registry_credentials_wo"), "Credentials without mirrors",
				"registry_credentials_wo gives credentials to registry mirrors; set registry_mirrors, or remove the credentials.")
		}
		return
	}
	reg, known, d := registryConfig(ctx, mirrors, config)
	diags.Append(d...)
	if !known || diags.HasError() {
		return
	}
	if err := reg.Validate(); err != nil {
		attr := "registry_mirrors"
		if strings.HasPrefix(err.Error(), "registry_credentials_wo") {
			attr = "registry_credentials_wo"
		}
		diags.AddAttributeError(path.Root(attr), "Invalid "+attr, err.Error())
		return
	}
	var pause types.String
	var prepull types.List
	diags.Append(plan.GetAttribute(ctx, path.Root("pause_image"), &pause)...)
	diags.Append(plan.GetAttribute(ctx, path.Root("prepull_images"), &prepull)...)
	images := map[string]string{}
	if !pause.IsUnknown() && !pause.IsNull() {
		images[pause.ValueString()] = "pause_image"
	}
	if !prepull.IsUnknown() && !prepull.IsNull() {
		for _, v := range prepull.Elements() {
			if s, ok := v.(types.String); ok && !s.IsUnknown() {
				images[s.ValueString()] = "prepull_images"
			}
		}
	}
	checkImagesThroughMirrors(ctx, reg, images, diags)
}

func checkImagesThroughMirrors(ctx context.Context, reg bootstrap.Registry, images map[string]string, diags *diag.Diagnostics) {
	var mirrors []registrymirror.Mirror
	for _, m := range reg.Mirrors {
		mirrors = append(mirrors, registrymirror.Mirror{Registry: m.Registry, Endpoints: m.Endpoints})
	}
	creds := map[string]registrymirror.Credential{}
	for _, c := range reg.Credentials {
		creds[c.Host] = registrymirror.Credential{Username: c.Username, Password: c.Password}
	}
	for _, img := range sortedMapKeys(images) {
		attribute := images[img]
		res, err := registrymirror.Resolve(ctx, img, mirrors, creds, nil)
		if err != nil {
			diags.AddAttributeError(path.Root(attribute), "Invalid "+attribute, err.Error())
			continue
		}
		answers := strings.Join(res.Answers, "; ")
		switch res.Outcome {
		case registrymirror.Refused:
			diags.AddAttributeError(path.Root("registry_credentials_wo"), fmt.Sprintf("%s does not resolve through its mirrors", img),
				fmt.Sprintf("The mirrors answered: %s. A 401 or 403 is a missing or wrong credential: check registry_credentials_wo for the "+
					"mirror's host (and change registry_credentials_wo_version). A 404 is an image the mirror does not have: add it to the "+
					"mirror, or change %s. containerd would fall back to the upstream server, which a site with a mirror usually cannot reach.", answers, attribute))
		case registrymirror.Unreachable:
			diags.AddAttributeWarning(path.Root("registry_mirrors"), fmt.Sprintf("%s could not be checked through its mirrors", img),
				fmt.Sprintf("No mirror answered from where Terraform runs (%s); the guests may reach them all the same. The image build "+
					"fails at the pull if they cannot.", answers))
		}
	}
}

// registry is the build's registry configuration.
func (m *goldenImageModel) registry(ctx context.Context, config tfsdk.Config) (bootstrap.Registry, error) {
	reg, known, diags := registryConfig(ctx, m.RegistryMirrors, config)
	if diags.HasError() {
		return reg, fmt.Errorf("reading registry_mirrors and registry_credentials_wo: %v", diags)
	}
	if !known {
		return reg, fmt.Errorf("registry_mirrors or registry_credentials_wo is unknown at apply")
	}
	return reg, nil
}

// registryMirrorType is the element type of registry_mirrors.
var registryMirrorType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"endpoints": types.ListType{ElemType: types.StringType}, "server": types.StringType,
}}

// registryCredentialType is the element type of registry_credentials_wo.
var registryCredentialType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"username": types.StringType, "password": types.StringType,
}}

// registryInputsChanged reports whether the plan builds with other mirrors,
// credentials or images than the state's template: a new image, or one of
// the attributes the registry check reads changed (the credentials are
// write-only, so their version stands for them). An unchanged image is not
// checked at every plan.
func registryInputsChanged(ctx context.Context, state tfsdk.State, plan tfsdk.Plan, diags *diag.Diagnostics) bool {
	if state.Raw.IsNull() {
		return true
	}
	var m1, m2 types.Map
	var v1, v2 types.Int64
	var p1, p2 types.String
	var l1, l2 types.List
	for _, g := range []struct {
		name          string
		before, after any
	}{{"registry_mirrors", &m1, &m2}, {"registry_credentials_wo_version", &v1, &v2}, {"pause_image", &p1, &p2}, {"prepull_images", &l1, &l2}} {
		diags.Append(state.GetAttribute(ctx, path.Root(g.name), g.before)...)
		diags.Append(plan.GetAttribute(ctx, path.Root(g.name), g.after)...)
	}
	if diags.HasError() {
		return false
	}
	return !m1.Equal(m2) || !v1.Equal(v2) || !p1.Equal(p2) || !l1.Equal(l2)
}
