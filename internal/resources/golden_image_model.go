package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

type goldenImageModel struct {
	ID                           types.String   `tfsdk:"id"`
	Name                         types.String   `tfsdk:"name"`
	NamePrefix                   types.String   `tfsdk:"name_prefix"`
	Folder                       types.String   `tfsdk:"folder"`
	SourceTemplate               types.String   `tfsdk:"source_template"`
	ResourcePoolID               types.String   `tfsdk:"resource_pool_id"`
	DatastoreID                  types.String   `tfsdk:"datastore_id"`
	NetworkID                    types.String   `tfsdk:"network_id"`
	DatastoreClusterID           types.String   `tfsdk:"datastore_cluster_id"`
	StoragePolicyID              types.String   `tfsdk:"storage_policy_id"`
	Tags                         types.Set      `tfsdk:"tags"`
	CustomAttributes             types.Map      `tfsdk:"custom_attributes"`
	HostID                       types.String   `tfsdk:"host_id"`
	AdminUser                    types.String   `tfsdk:"admin_user"`
	AdminPasswordWO              types.String   `tfsdk:"admin_password_wo"`
	AdminPasswordWOVersion       types.Int64    `tfsdk:"admin_password_wo_version"`
	Transport                    types.Object   `tfsdk:"transport"`
	KubernetesVersion            types.String   `tfsdk:"kubernetes_version"`
	ArtifactsBaseURL             types.String   `tfsdk:"artifacts_base_url"`
	KubeletSHA256                types.String   `tfsdk:"kubelet_sha256"`
	KubeProxySHA256              types.String   `tfsdk:"kube_proxy_sha256"`
	ContainerdURL                types.String   `tfsdk:"containerd_url"`
	ContainerdSHA256             types.String   `tfsdk:"containerd_sha256"`
	CNIPluginsURL                types.String   `tfsdk:"cni_plugins_url"`
	CNIPluginsSHA256             types.String   `tfsdk:"cni_plugins_sha256"`
	NetworkArtifacts             types.Object   `tfsdk:"network_artifacts"`
	KubeLogRunnerSHA256          types.String   `tfsdk:"kube_log_runner_sha256"`
	PauseImage                   types.String   `tfsdk:"pause_image"`
	PrepullImages                types.List     `tfsdk:"prepull_images"`
	RegistryMirrors              types.Map      `tfsdk:"registry_mirrors"`
	RegistryCredentialsWO        types.Map      `tfsdk:"registry_credentials_wo"`
	RegistryCredentialsWOVersion types.Int64    `tfsdk:"registry_credentials_wo_version"`
	AdditionalExecutables        types.List     `tfsdk:"additional_executables"`
	WindowsUpdates               types.List     `tfsdk:"windows_updates"`
	OnlineUpdates                types.Object   `tfsdk:"online_updates"`
	InstalledUpdates             types.List     `tfsdk:"installed_updates"`
	SSHAuthorizedKey             types.String   `tfsdk:"ssh_authorized_key"`
	TimeZone                     types.String   `tfsdk:"time_zone"`
	KeepBuildVMOnFailure         types.Bool     `tfsdk:"keep_build_vm_on_failure"`
	SkipChecks                   types.List     `tfsdk:"skip_checks"`
	TemplateID                   types.String   `tfsdk:"template_id"`
	TemplatePath                 types.String   `tfsdk:"template_path"`
	BuildVMID                    types.String   `tfsdk:"build_vm_id"`
	WindowsBuild                 types.String   `tfsdk:"windows_build"`
	WindowsBuildFull             types.String   `tfsdk:"windows_build_full"`
	WindowsVersion               types.String   `tfsdk:"windows_version"`
	ContainerdVersion            types.String   `tfsdk:"containerd_version"`
	Manifest                     types.String   `tfsdk:"manifest"`
	Proxy                        types.Object   `tfsdk:"proxy"`
	Timeouts                     timeouts.Value `tfsdk:"timeouts"`
}

type executableModel struct {
	URL         types.String `tfsdk:"url"`
	SHA256      types.String `tfsdk:"sha256"`
	Destination types.String `tfsdk:"destination"`
}

// buildRequest converts the plan into the build's plain request.
func (m *goldenImageModel) buildRequest(ctx context.Context, password, sshKey string, reg bootstrap.Registry) (goldenimage.Request, error) {
	transport, diags := transportConfig(ctx, m.Transport, m.AdminUser.ValueString(), password, sshKey)
	if diags.HasError() {
		return goldenimage.Request{}, fmt.Errorf("reading transport: %v", diags)
	}
	var prepull []string
	if diags := m.PrepullImages.ElementsAs(ctx, &prepull, false); diags.HasError() {
		return goldenimage.Request{}, fmt.Errorf("reading prepull_images: %v", diags)
	}
	var extra []executableModel
	if diags := m.AdditionalExecutables.ElementsAs(ctx, &extra, false); diags.HasError() {
		return goldenimage.Request{}, fmt.Errorf("reading additional_executables: %v", diags)
	}
	updates, err := m.windowsUpdates(ctx)
	if err != nil {
		return goldenimage.Request{}, err
	}
	online, err := m.onlineUpdates(ctx)
	if err != nil {
		return goldenimage.Request{}, err
	}
	version, base := m.KubernetesVersion.ValueString(), m.ArtifactsBaseURL.ValueString()
	image := bootstrap.ImageConfig{
		KubernetesVersion: version,
		Containerd: bootstrap.Artifact{Name: "containerd", URL: m.ContainerdURL.ValueString(), SHA256: m.ContainerdSHA256.ValueString(),
			Path: bootstrap.DownloadPath(m.ContainerdURL.ValueString()), ExtractTo: bootstrap.ContainerdDir},
		Kubelet: bootstrap.Artifact{Name: "kubelet", URL: bootstrap.KubernetesArtifactURL(base, version, "kubelet.exe"),
			SHA256: m.KubeletSHA256.ValueString(), Path: bootstrap.KubeletExe},
		KubeProxy: bootstrap.Artifact{Name: "kube-proxy", URL: bootstrap.KubernetesArtifactURL(base, version, "kube-proxy.exe"),
			SHA256: m.KubeProxySHA256.ValueString(), Path: bootstrap.KubeProxyExe},
		KubeLogRunner: bootstrap.Artifact{Name: "kube-log-runner", URL: bootstrap.KubernetesArtifactURL(base, version, "kube-log-runner.exe"),
			SHA256: m.KubeLogRunnerSHA256.ValueString(), Path: bootstrap.KubeLogRunnerExe},
		CNIPlugins: bootstrap.Artifact{Name: "cni-plugins", URL: m.CNIPluginsURL.ValueString(), SHA256: m.CNIPluginsSHA256.ValueString(),
			Path: bootstrap.DownloadPath(m.CNIPluginsURL.ValueString()), ExtractTo: bootstrap.CNIBinDir},
		PauseImage:       m.PauseImage.ValueString(),
		PrepullImages:    prepullWithHostProcess(prepull, reg),
		Registry:         reg,
		SSHAuthorizedKey: m.SSHAuthorizedKey.ValueString(),
		Updates:          updates,
		Online:           online,
	}
	var pd diag.Diagnostics
	if image.Proxy = proxyConfig(ctx, m.Proxy, &pd); pd.HasError() {
		return goldenimage.Request{}, fmt.Errorf("reading proxy: %v", pd)
	}
	network, diags := networkArtifacts(ctx, m.NetworkArtifacts)
	if diags.HasError() {
		return goldenimage.Request{}, fmt.Errorf("reading network_artifacts: %v", diags)
	}
	image.Additional = append(image.Additional, network...)
	for i, e := range extra {
		image.Additional = append(image.Additional, bootstrap.Artifact{
			Name: fmt.Sprintf("additional-%d", i), URL: e.URL.ValueString(), SHA256: e.SHA256.ValueString(), Path: e.Destination.ValueString(),
		})
	}
	return goldenimage.Request{
		Clone: goldenimage.CloneRequest{
			Source: m.SourceTemplate.ValueString(), Name: m.Name.ValueString(), Folder: m.Folder.ValueString(),
			ResourcePoolID: m.ResourcePoolID.ValueString(), DatastoreID: m.DatastoreID.ValueString(),
			NetworkID: m.NetworkID.ValueString(), HostID: m.HostID.ValueString(),
			DatastoreClusterID: m.DatastoreClusterID.ValueString(), StoragePolicyID: m.StoragePolicyID.ValueString(),
			Metadata: vsphere.Metadata{Tags: knownStrings(ctx, m.Tags), CustomAttributes: knownStringMap(ctx, m.CustomAttributes)},
		},
		Transport:            transport,
		Image:                image,
		Unattend:             bootstrap.UnattendConfig{TimeZone: m.TimeZone.ValueString()},
		KeepBuildVMOnFailure: m.KeepBuildVMOnFailure.ValueBool(),
	}, nil
}

// setBuildVM records the build VM the moment it exists: from then on a
// failure leaves the resource tainted, never an untracked VM.
func (m *goldenImageModel) setBuildVM(vm goldenimage.VM) {
	m.ID = types.StringValue(vm.ID)
	m.BuildVMID = types.StringValue(vm.ID)
	m.clearOutputs()
}

// clearOutputs makes every computed output known-empty, for the state saved
// while the build runs (Terraform rejects unknown values after apply).
func (m *goldenImageModel) clearOutputs() {
	for _, s := range []*types.String{&m.TemplateID, &m.TemplatePath, &m.WindowsBuild, &m.WindowsBuildFull,
		&m.WindowsVersion, &m.ContainerdVersion, &m.Manifest} {
		*s = types.StringValue("")
	}
	m.InstalledUpdates = installedUpdatesValue(nil)
	m.Transport = withHostKey(m.Transport, "")
}

// setOutputs records the finished template; the build VM is gone.
func (m *goldenImageModel) setOutputs(res goldenimage.Result) {
	m.ID = types.StringValue(res.Template.ID)
	m.BuildVMID = types.StringValue("")
	m.TemplateID = types.StringValue(res.Template.ID)
	m.TemplatePath = types.StringValue(res.Template.Path)
	m.setBuild(res.WindowsBuildFull)
	m.ContainerdVersion = types.StringValue(res.ContainerdVersion)
	m.Manifest = types.StringValue(res.Manifest)
	m.InstalledUpdates = installedUpdatesValue(res.InstalledUpdates)
	m.Transport = withHostKey(m.Transport, res.SSHHostKey)
}

func (m *goldenImageModel) setBuild(full string) {
	m.WindowsBuildFull = types.StringValue(full)
	m.WindowsBuild = types.StringValue(winversion.TrimUBR(full))
	m.WindowsVersion = types.StringValue("")
	if r, ok := winversion.ByBuild(full); ok {
		m.WindowsVersion = types.StringValue(r.Version)
	}
}

// fromTemplate refreshes what vSphere knows of the finished template: where
// it is and what the build recorded on it.
func (m *goldenImageModel) fromTemplate(info goldenimage.TemplateInfo) {
	m.TemplateID = types.StringValue(info.VM.ID)
	m.TemplatePath = types.StringValue(info.VM.Path)
	m.Name = types.StringValue(info.Name)
	if m.Folder.IsNull() {
		m.Folder = types.StringValue(info.Folder)
	}
	if info.WindowsBuildFull != "" {
		m.setBuild(info.WindowsBuildFull)
	}
	if info.ContainerdVersion != "" {
		m.ContainerdVersion = types.StringValue(info.ContainerdVersion)
	}
	if info.Manifest != "" {
		m.Manifest = types.StringValue(info.Manifest)
		m.InstalledUpdates = installedUpdatesFromManifest(info.Manifest)
	}
	if info.KubernetesVersion != "" && m.KubernetesVersion.IsNull() {
		m.KubernetesVersion = types.StringValue(info.KubernetesVersion)
	}
}

// importedImage is the state an import of the template yields.
func importedImage(info goldenimage.TemplateInfo) goldenImageModel {
	var m goldenImageModel
	m.nullInputs()
	m.fromTemplate(info)
	m.ID = types.StringValue(info.VM.ID)
	m.BuildVMID = types.StringValue("")
	return m
}

// nullInputs prepares an imported state: inputs unknown to vSphere are
// null, and those with a default have the schema's default.
func (m *goldenImageModel) nullInputs() {
	for _, s := range []*types.String{&m.NamePrefix, &m.Folder, &m.SourceTemplate, &m.ResourcePoolID, &m.DatastoreID,
		&m.NetworkID, &m.HostID, &m.AdminPasswordWO, &m.KubernetesVersion, &m.KubeletSHA256, &m.KubeProxySHA256, &m.KubeLogRunnerSHA256,
		&m.ContainerdURL, &m.ContainerdSHA256, &m.CNIPluginsURL, &m.CNIPluginsSHA256, &m.SSHAuthorizedKey,
		&m.DatastoreClusterID, &m.StoragePolicyID} {
		*s = types.StringNull()
	}
	m.Tags = types.SetNull(types.StringType)
	m.CustomAttributes = types.MapNull(types.StringType)
	m.AdminUser = types.StringValue(bootstrap.DefaultAdminUser)
	m.ArtifactsBaseURL = types.StringValue(bootstrap.DefaultBaseURL)
	m.PauseImage = types.StringValue(bootstrap.DefaultPause)
	m.TimeZone = types.StringValue(timezone.Default)
	m.KeepBuildVMOnFailure = types.BoolValue(false)
	m.AdminPasswordWOVersion = types.Int64Null()
	m.Transport = types.ObjectNull(transportAttrTypes)
	m.PrepullImages = types.ListNull(types.StringType)
	m.RegistryMirrors = types.MapNull(registryMirrorType)
	m.RegistryCredentialsWO = types.MapNull(registryCredentialType)
	m.RegistryCredentialsWOVersion = types.Int64Null()
	m.AdditionalExecutables = types.ListNull(executableObjectType)
	m.NetworkArtifacts = types.ObjectNull(networkArtifactsType().AttrTypes)
	m.WindowsUpdates = types.ListNull(windowsUpdateObjectType)
	m.OnlineUpdates = types.ObjectNull(onlineUpdatesAttrTypes)
	m.Proxy = types.ObjectNull(proxyAttrTypes)
	m.SkipChecks = types.ListNull(types.StringType)
	m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}
	m.clearOutputs()
}

var executableObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"url": types.StringType, "sha256": types.StringType, "destination": types.StringType,
}}

// timeoutsAttrTypes is the timeouts block of the golden image (create, delete).
var timeoutsAttrTypes = map[string]attr.Type{"create": types.StringType, "delete": types.StringType}

// prepullWithHostProcess is the images the build pulls: the node agents'
// HostProcess base image first, then prepull_images. With registry mirrors
// only prepull_images: the build pulls through the mirrors, which carry the
// site's copy of the HostProcess image under the reference its
// windows_node_networking names (host_process_image), not necessarily the
// default one.
func prepullWithHostProcess(prepull []string, reg bootstrap.Registry) []string {
	if len(reg.Mirrors) > 0 {
		return prepull
	}
	return append([]string{networking.DefaultHostProcessImage}, prepull...)
}

// knownStrings and knownStringMap read a known set or map of strings; null or
// unknown reads as none.
func knownStrings(ctx context.Context, v types.Set) []string {
	var out []string
	if !v.IsNull() && !v.IsUnknown() {
		_ = v.ElementsAs(ctx, &out, false)
	}
	return out
}

func knownStringMap(ctx context.Context, v types.Map) map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	_ = v.ElementsAs(ctx, &out, false)
	return out
}
