package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// The replace modifiers: a template (and a node's placement) is immutable, so
// a change builds a new one.
var (
	replaceString = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceBool   = []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	replaceInt64  = []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	keepString    = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
)

// Golden image inputs force a replacement, except on the first apply after
// an import: vCenter cannot tell an image's inputs (source, checksums, URLs),
// and recording them must not rebuild the template.
var (
	imageReplace = replaceUnlessImported{description: "Changing it builds a new template."}
	imageString  = []planmodifier.String{imageReplace}
	imageBool    = []planmodifier.Bool{imageReplace}
	imageInt64   = []planmodifier.Int64{imageReplace}
	imageList    = []planmodifier.List{imageReplace}
	imageSet     = []planmodifier.Set{imageReplace}
	imageMap     = []planmodifier.Map{imageReplace}
	// imageTransport rebuilds the image when the transport changes, but not
	// for the SSH host key recorded at the build.
	imageTransport = []planmodifier.Object{replaceUnlessImported{description: imageReplace.description,
		changed: func(state, plan attr.Value) bool { return transportChanged(state.(types.Object), plan.(types.Object)) }}}
)

func sha256Attribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		Required:            true,
		MarkdownDescription: "SHA-256 (64 hex digits) of " + what + ". The download is verified on the guest before it is used.",
		Validators:          []validator.String{sha256Hex()},
		PlanModifiers:       imageString,
	}
}

func (r *goldenImageResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kubernetes-ready Windows Server template on vSphere (containerd, kubelet, kube-proxy and the CNI plugins, every download verified on the guest), built from a stock base template with nothing on your machine but Terraform. " +
			"Any change builds a new template.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Managed object id of the template (the build VM's while it is not a template yet).",
			},
			"name": schema.StringAttribute{
				Optional: true, Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "Name of the template. Conflicts with `name_prefix`; one of them is required.",
				Validators: []validator.String{
					stringvalidator.ExactlyOneOf(path.MatchRoot("name_prefix")),
					stringvalidator.LengthBetween(1, 80),
				},
			},
			"name_prefix": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "Creates a unique name beginning with this prefix (a timestamp follows), for `create_before_destroy` rollouts.",
				Validators:          []validator.String{stringvalidator.LengthBetween(1, 60)},
			},
			"folder": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "VM folder for the template, for example `/dc1/vm/templates` (created if missing)." + accepts(vsphere.FolderKind),
				Validators:          []validator.String{vsphereObject(vsphere.FolderKind)},
			},
			"source_template": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "The base Windows Server 2019, 2022 or 2025 template or VM, with VMware Tools and WinRM (or OpenSSH) reachable with the administrator credentials below." + accepts(vsphere.VMKind),
				Validators:          []validator.String{vsphereObject(vsphere.VMKind)},
			},
			"resource_pool_id": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "Resource pool of the build VM." + accepts(vsphere.ResourcePoolKind),
				Validators:          []validator.String{vsphereObject(vsphere.ResourcePoolKind)},
			},
			"datastore_id": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "Datastore for the build VM and the template; defaults to the source's." + accepts(vsphere.DatastoreKind),
				Validators:          []validator.String{vsphereObject(vsphere.DatastoreKind)},
			},
			"datastore_cluster_id": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "Datastore cluster whose Storage DRS places the build VM and so the template (in place of `datastore_id`); checked against vCenter at plan." +
					accepts(vsphere.DatastoreClusterKind),
				Validators: []validator.String{vsphereObject(vsphere.DatastoreClusterKind), stringvalidator.ConflictsWith(path.MatchRoot("datastore_id"))},
			},
			"storage_policy_id": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "Storage policy (`data.vsphere_storage_policy.<name>.id`) of the build VM's home and disks, and so the template's; " +
					"checked against vCenter's policies at plan and before the clone. A node's own `storage_policy_id` applies to its clone.",
				Validators: []validator.String{stringvalidator.RegexMatches(storagePolicyIDPattern, "must be a storage policy id, a UUID (data.vsphere_storage_policy.<name>.id)")},
			},
			"tags": schema.SetAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: imageSet,
				MarkdownDescription: "vSphere tag ids (`vsphere_tag.<name>.id`) attached to the build VM right after its clone, which the template keeps " +
					"(a clone of it does not: vCenter copies no tags).",
				Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.RegexMatches(vsphere.TagIDPattern,
					"must be a vSphere tag id, urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL (vsphere_tag.<name>.id)"))},
			},
			"custom_attributes": schema.MapAttribute{ElementType: types.StringType, Optional: true, PlanModifiers: imageMap,
				MarkdownDescription: "Custom attribute values of the build VM, and so the template, by custom attribute id (`vsphere_custom_attribute.<name>.id`).",
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(vsphere.CustomAttributeKeyPattern,
					"must be a custom attribute's id (vsphere_custom_attribute.<name>.id), a number"))},
			},
			"network_id": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "Network for the build VM's NIC; defaults to the source's." + accepts(vsphere.NetworkKind),
				Validators:          []validator.String{vsphereObject(vsphere.NetworkKind)},
			},
			"host_id": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "ESXi host for the build VM; defaults to one DRS picks." + accepts(vsphere.HostKind),
				Validators:          []validator.String{vsphereObject(vsphere.HostKind)},
			},
			"admin_user": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(bootstrap.DefaultAdminUser), PlanModifiers: imageString,
				MarkdownDescription: "Administrator account of the source image. Defaults to `" + bootstrap.DefaultAdminUser + "`." +
					"Use the built-in Administrator account (RID 500, whatever its name): Windows gives any other local administrator a filtered, " +
					"non-elevated token over WinRM and SSH (UAC remote restrictions) unless `LocalAccountTokenFilterPolicy` is 1 under " +
					"`HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System` on the template, and the steps fail with access denied. " +
					"Another name gets a plan-time warning.",
			},
			"admin_password_wo": schema.StringAttribute{
				Required: true, WriteOnly: true, Sensitive: true,
				MarkdownDescription: "Administrator password of the source image; also the password sysprep sets on the template. Write-only: never stored in the state. " +
					"Change `admin_password_wo_version` to rebuild with a new password.",
			},
			"admin_password_wo_version": schema.Int64Attribute{
				Optional: true, PlanModifiers: imageInt64,
				MarkdownDescription: "Any number; changing it rebuilds the image with the current `admin_password_wo`.",
			},
			"transport": transportSchema("the image's build VM becomes the template, so a listener and key made on it would be every clone's "+
				"(the shared template certificate https_bootstrap exists to avoid); build the image over the default transport (vmtools) and give the nodes https_bootstrap", imageTransport...),
			"kubernetes_version": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "Kubernetes version of kubelet and kube-proxy, for example `v1.36.3`.",
				Validators:          []validator.String{kubernetesRelease()},
			},
			"artifacts_base_url": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(bootstrap.DefaultBaseURL), PlanModifiers: imageString,
				MarkdownDescription: "Where the guest downloads kubelet and kube-proxy: `<base>/<version>/bin/windows/amd64/<binary>`. Defaults to the upstream release " +
					"location; point it at a local HTTP server for air-gapped sites.",
				Validators: []validator.String{httpURL()},
			},
			"kubelet_sha256":    sha256Attribute("kubelet.exe"),
			"kube_proxy_sha256": sha256Attribute("kube-proxy.exe"),
			"kube_log_runner_sha256": func() schema.StringAttribute {
				a := sha256Attribute("kube-log-runner.exe")
				a.MarkdownDescription += " kube-log-runner (from the same release as the kubelet) runs the kubelet service and keeps its log in " +
					"`C:\\var\\log\\kubelet\\kubelet.log`, rotated: a service has no console, and kubelet v1.36 has no `--log-file`."
				return a
			}(),
			"containerd_url": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "URL of the containerd Windows release archive (`containerd-<version>-windows-amd64.tar.gz`, with `bin/` at its root), " +
					"for example `https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz`. " +
					"containerd 2.2 or later is what containerd's RELEASES.md supports for Kubernetes 1.36 (configuration version 3); a 1.7 " +
					"archive still works (configuration version 2) but the plan warns that it is outside the support matrix and past its end of life.",
				Validators: []validator.String{httpURL()},
			},
			"containerd_sha256": sha256Attribute("the containerd archive"),
			"cni_plugins_url": schema.StringAttribute{
				Required: true, PlanModifiers: imageString,
				MarkdownDescription: "URL of the Windows CNI plugins archive of containernetworking/plugins (`cni-plugins-windows-amd64-<tag>.tgz`, " +
					"with `host-local.exe`, `win-bridge.exe` and `win-overlay.exe` at its root), unpacked into `C:\\opt\\cni\\bin`, for example " +
					"`https://github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-windows-amd64-v1.9.1.tgz`.",
				Validators: []validator.String{httpURL()},
			},
			"cni_plugins_sha256": sha256Attribute("the CNI plugins archive"),
			"network_artifacts":  networkArtifactsSchema(),
			"pause_image": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(bootstrap.DefaultPause), PlanModifiers: imageString,
				Validators: []validator.String{imageReference()},
				MarkdownDescription: "The pod sandbox (pause) image containerd uses: a full reference with a tag or a digest " +
					"(`registry/repository:tag`, `...@sha256:<digest>` to pin its content). Defaults to `" + bootstrap.DefaultPause + "`.",
			},
			"prepull_images": schema.ListAttribute{
				ElementType: types.StringType, Optional: true, PlanModifiers: imageList,
				Validators: []validator.List{listvalidator.ValueStringsAre(imageReference())},
				MarkdownDescription: "Images pulled into the template, so the first pods on new nodes start without waiting. The HostProcess base image " +
					"of the node agents (`" + networking.DefaultHostProcessImage + "`, see `windows_node_networking.host_process_image`) is always pulled " +
					"first; for an air-gapped site, list your mirror's copy here too.",
			},
			"registry_mirrors":        registryMirrorsAttribute(),
			"registry_credentials_wo": registryCredentialsAttribute(),
			"registry_credentials_wo_version": schema.Int64Attribute{
				Optional: true, PlanModifiers: imageInt64,
				MarkdownDescription: "Any number; changing it rebuilds the image with the current `registry_credentials_wo`.",
			},
			"additional_executables": schema.ListNestedAttribute{
				Optional: true, PlanModifiers: imageList,
				MarkdownDescription: "Further files to install, each verified by SHA-256.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"url":         schema.StringAttribute{Required: true, Validators: []validator.String{httpURL()}, MarkdownDescription: "Download URL."},
					"sha256":      schema.StringAttribute{Required: true, Validators: []validator.String{sha256Hex()}, MarkdownDescription: "SHA-256 of the file."},
					"destination": schema.StringAttribute{Required: true, Validators: []validator.String{windowsPath()}, MarkdownDescription: "Absolute Windows path of the file, for example `C:\\k\\wins.exe`."},
				}},
			},
			"windows_updates": windowsUpdatesAttribute(),
			"online_updates":  onlineUpdatesAttribute(),
			"proxy": proxyAttribute("The build's downloads (Invoke-WebRequest `-Proxy`), WinHTTP's proxy (`netsh winhttp set proxy`, which Windows Update uses) "+
				"and containerd's service environment (its prepulls) take it; the template keeps WinHTTP's and containerd's settings until a node's own replace them.",
				"builds a new template", []planmodifier.Object{imageReplace}),
			"ssh_authorized_key": schema.StringAttribute{
				Optional: true, PlanModifiers: imageString,
				MarkdownDescription: "OpenSSH public key: when set, the template runs the OpenSSH server with this key for the Administrators group.",
			},
			"time_zone": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(timezone.Default), PlanModifiers: imageString,
				Validators: []validator.String{timeZoneID()},
				MarkdownDescription: timeZoneDescription + " The build sets it on the build VM before sysprep (`Set-TimeZone`), and the answer " +
					"file carries it, so the template and clones made without a customization have it; a `windows_node` sets its own " +
					"`time_zone`. Defaults to `" + timezone.Default + "`.",
			},
			"keep_build_vm_on_failure": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false), PlanModifiers: imageBool,
				MarkdownDescription: "Keep the build VM when a step fails, for debugging (it stays in the state and the resource is tainted).",
			},
			"skip_checks": schema.ListAttribute{
				ElementType: types.StringType, Optional: true,
				MarkdownDescription: "Readiness checks not to enforce: `[\"version-skew\"]`, the one check of an image. When the provider reaches a " +
					"cluster, the plan (and again create, before the build VM is cloned) checks `kubernetes_version` against its API server under " +
					"the Kubernetes version skew policy (a kubelet never newer than the API server, at most three minor versions older) and stops on a " +
					"failure; skip it for an image meant for another cluster, or built ahead of a control-plane upgrade. Changing it rebuilds nothing.",
				Validators: []validator.List{listvalidator.ValueStringsAre(stringvalidator.OneOf(kube.CheckVersionSkew))},
			},

			"template_id": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Managed object id of the template.",
			},
			"template_path": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Inventory path of the template, for `windows_node.template`.",
			},
			"build_vm_id": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Managed object id of the build VM while it exists (a failed build with `keep_build_vm_on_failure`); empty once the template is done.",
			},
			"windows_build": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Windows build read from the guest, as the `node.kubernetes.io/windows-build` label carries it (`10.0.20348`), for `windows_runtime_class.windows_build`.",
			},
			"windows_build_full": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Windows build read from the guest with its update revision, for example `10.0.20348.2340`: after " +
					"`windows_updates`, the revision the last cumulative update brought.",
			},
			"installed_updates": schema.ListAttribute{
				ElementType: types.StringType, Computed: true, PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "KB ids of the `windows_updates` the build installed, in order, as the guest lists them installed after their " +
					"restarts (`Get-HotFix`: a package whose installer reported success but that Windows does not list fails the build, naming its KB), " +
					"then those `online_updates` installed, in the order the " +
					"Windows Update Agent installed them (also in `manifest`, as entries of kind `windows-update`; an online one with its `source`, " +
					"`size` in bytes and `title`).",
			},
			"windows_version": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "Windows Server release of the guest: `2019`, `2022` or `2025`.",
			},
			"containerd_version": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "containerd version, from the release archive's name.",
			},
			"manifest": schema.StringAttribute{
				Computed: true, PlanModifiers: keepString,
				MarkdownDescription: "JSON list of every installed artifact with its URL, SHA-256 and path on the guest.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}
