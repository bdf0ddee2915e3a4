package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

type providerModel struct {
	VSphere         *vsphereModel         `tfsdk:"vsphere"`
	Kubernetes      *kubernetesModel      `tfsdk:"kubernetes"`
	ActiveDirectory *activeDirectoryModel `tfsdk:"active_directory"`
}

type activeDirectoryModel struct {
	JoinUser     types.String `tfsdk:"join_user"`
	JoinPassword types.String `tfsdk:"join_password"`
	LDAPURL      types.String `tfsdk:"ldap_url"`
	CAFile       types.String `tfsdk:"ca_file"`
}

// activeDirectoryBlock is the join account nodes with active_directory join
// their domain with, and where the provider removes their computer accounts
// on destroy (internal/addirectory says why the provider does).
func activeDirectoryBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "The Active Directory join account of `windows_node` and `windows_node_pool` members that set `active_directory`: " +
			"vCenter's guest customization joins them with it, and the provider deletes their computer accounts with it on destroy. " +
			"It lives here, not in the resources, so that it is never stored in a state and still reaches a destroy (a write-only attribute would not). " +
			"The account needs Create and Delete Computer objects on the nodes' OU (the Delegation of Control wizard), nothing more.",
		Attributes: map[string]schema.Attribute{
			"join_user": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The join account: `user`, `DOMAIN\\user` or `user@domain`. Environment: `WINDOWS_AD_JOIN_USER`.",
			},
			"join_password": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "The join account's password. It travels to vCenter in the clone's customization spec (as the Administrator password does) and into the guest's `C:\\sysprep\\sysprep.xml`, which the node's first step deletes; Windows Setup scrubs it from its own cached answer file. Environment: `WINDOWS_AD_JOIN_PASSWORD`.",
			},
			"ldap_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A domain controller the provider reaches to delete a destroyed node's computer account, such as `ldaps://dc1.corp.example.com`. " +
					"Unset, accounts stay in the domain on destroy (a plan warning says so) and must be removed by hand (`Remove-ADComputer`). Environment: `WINDOWS_AD_LDAP_URL`.",
			},
			"ca_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM file that verifies the controller's LDAPS certificate; unset, the system's roots. Environment: `WINDOWS_AD_CA_FILE`.",
			},
		},
	}
}

type vsphereModel struct {
	Server             types.String `tfsdk:"server"`
	User               types.String `tfsdk:"user"`
	Password           types.String `tfsdk:"password"`
	CAFile             types.String `tfsdk:"ca_file"`
	CACertificate      types.String `tfsdk:"ca_certificate"`
	AllowUnverifiedSSL types.Bool   `tfsdk:"allow_unverified_ssl"`
	AllowUnencrypted   types.Bool   `tfsdk:"allow_unencrypted_http"`
	ProvisioningUnits  types.Int64  `tfsdk:"provisioning_units_per_host"`
}

type kubernetesModel struct {
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigPaths          types.List   `tfsdk:"config_paths"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	Exec                 *execModel   `tfsdk:"exec"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

func vsphereBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "How to reach vCenter. Needed only by resources that touch vSphere. A setting left out comes from its environment variable; " +
			"a setting that is unknown at plan (taken from a resource of the same run) never does: see [Settings known only after apply](#settings-known-only-after-apply).",
		Attributes: map[string]schema.Attribute{
			"server": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "vCenter host name, `host:port` or `https://` URL. Environment: `VSPHERE_SERVER`.",
			},
			"user": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "vCenter user name. Environment: `VSPHERE_USER`.",
			},
			"password": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "vCenter password. Environment: `VSPHERE_PASSWORD`.",
			},
			"ca_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Path of a PEM file with the CA that signed vCenter's certificate, trusted in addition to the system roots. Environment: `VSPHERE_CA_FILE`.",
			},
			"ca_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM of the CA that signed vCenter's certificate (for runs without local files, such as Terraform Cloud). Environment: `VSPHERE_CA_CERTIFICATE`.",
			},
			"allow_unverified_ssl": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Skip verification of vCenter's TLS certificate. Defaults to `false`; an explicit opt-in for lab systems only — " +
					"prefer `ca_file` or `ca_certificate`. Environment: `VSPHERE_ALLOW_UNVERIFIED_SSL`.",
			},
			"allow_unencrypted_http": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Accept an `http://` `server`, which sends the vCenter password and session in clear text. Defaults to `false`: " +
					"such a `server` is refused at plan. An explicit opt-in for a simulator or a lab only. Environment: `VSPHERE_ALLOW_UNENCRYPTED_HTTP`.",
			},
			"provisioning_units_per_host": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "How many of an ESXi host's provisioning units the provider's clones hold at once. A host has 16; a full clone takes 4 " +
					"and a linked clone 1, on its template's host and on the destination host both, and vCenter queues any clone beyond them " +
					"([vCenter limits for tasks running at the same time](https://blogs.vmware.com/performance/2021/02/vcenter-limits-for-tasks-running-at-the-same-time.html)). " +
					"So by default (`16`) the provider runs at most 4 full clones of one template at once and waits for a slot itself, saying so in its log " +
					"(`TF_LOG_PROVIDER=info`), rather than leaving `windows_node`s and pool members to wait unseen in vCenter's queue, which eats their create timeouts. " +
					"A larger value lets vCenter queue the rest (a queued task is waited for, never failed), for a host whose administrator raised its limits " +
					"or clones that share the host with nobody; `0` sets no limit. Values 1 to 3 are refused: a full clone would never fit. " +
					"Environment: `VSPHERE_PROVISIONING_UNITS_PER_HOST`.",
			},
		},
	}
}

func kubernetesBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "How to reach the Kubernetes cluster. Field names and environment variables follow the `hashicorp/kubernetes` provider; " +
			"explicit fields override what the kubeconfig file says. A setting left out comes from its environment variable; a setting that is unknown at plan " +
			"(for example `host = module.cluster.endpoint` while the cluster is being created) never does: see [Settings known only after apply](#settings-known-only-after-apply).",
		Attributes: map[string]schema.Attribute{
			"config_path": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Path of a kubeconfig file. Environment: `KUBE_CONFIG_PATH`, else `KUBECONFIG` (which may list several files).",
			},
			"config_paths": schema.ListAttribute{
				ElementType:         types.StringType,
				Optional:            true,
				MarkdownDescription: "Kubeconfig files merged in order. Environment: `KUBE_CONFIG_PATHS` (separated by `:`, `;` on Windows).",
			},
			"config_context": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Context of the kubeconfig to use instead of its current context. Environment: `KUBE_CTX`.",
			},
			"host": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "API server URL, for example `https://10.0.0.10:6443`. Environment: `KUBE_HOST`.",
			},
			"token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Bearer token. Environment: `KUBE_TOKEN`.",
			},
			"client_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM client certificate for TLS client authentication. Environment: `KUBE_CLIENT_CERT_DATA`.",
			},
			"client_key": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "PEM key of `client_certificate`. Environment: `KUBE_CLIENT_KEY_DATA`.",
			},
			"cluster_ca_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM CA that signed the API server's certificate. Environment: `KUBE_CLUSTER_CA_CERT_DATA`.",
			},
			"insecure": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Skip verification of the API server's certificate. Defaults to `false`; an explicit opt-in for throwaway clusters only. Environment: `KUBE_INSECURE`.",
			},
		},
		Blocks: map[string]schema.Block{"exec": execBlock()},
	}
}

func execBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "A credential plugin that prints the credentials, as kubectl's `users[].user.exec` and `hashicorp/kubernetes`'s `exec` have it: " +
			"for clusters whose users sign in through a plugin (EKS's `aws eks get-token`, AKS's `kubelogin`, OIDC, Rancher). " +
			"The provider runs it (through client-go's exec support) when it first talks to the cluster, and again once the credential's " +
			"`expirationTimestamp` has passed, so a token that expires during a long apply is renewed; after a 401 answer it runs it again for the " +
			"next request (the rejected one fails). The plugin must not prompt (it runs without standard input) and must be installed " +
			"where Terraform runs. It replaces any other credentials: it conflicts with `token`, `client_certificate` and `client_key`, " +
			"and wins over the credentials of the kubeconfig's user and of `KUBE_TOKEN`, `KUBE_CLIENT_CERT_DATA` and `KUBE_CLIENT_KEY_DATA`.",
		Attributes: map[string]schema.Attribute{
			// Required in an exec block, enforced by validateKubernetes: the
			// framework would demand a Required attribute of a nested block
			// even when the block is left out.
			"api_version": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Required in an `exec` block. The `apiVersion` of the ExecCredential the plugin prints: `client.authentication.k8s.io/v1beta1` " +
					"(what `aws eks get-token` and `kubelogin` print) or `client.authentication.k8s.io/v1`. `v1alpha1` was removed in Kubernetes 1.24.",
			},
			"command": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Required in an `exec` block. The plugin: a command name looked up in `PATH`, or a path.",
			},
			"args": schema.ListAttribute{
				ElementType:         types.StringType,
				Optional:            true,
				MarkdownDescription: "The plugin's arguments.",
			},
			"env": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Sensitive:   true,
				MarkdownDescription: "Environment variables for the plugin, in addition to Terraform's own environment. " +
					"Sensitive, since they may carry secrets.",
			},
		},
	}
}

// clients resolves the configuration against the environment. Nothing is
// contacted here: clients connect when a resource first needs them.
//
// unknown names the attributes that are unknown at plan (see
// unknownAttributes). A block with any of them is not resolved at all: its
// client refuses to connect until Terraform configures the provider again at
// apply, with known values. Filling the gap from the environment would plan
// against whatever KUBECONFIG or VSPHERE_SERVER points at, which need not be
// the cluster the configuration names.
func (m providerModel) clients(ctx context.Context, unknown []string, diags *diag.Diagnostics) *clients.Clients {
	c := &clients.Clients{
		VSphereConfigUnknown: inBlock(unknown, "vsphere"),
		KubeConfigUnknown:    inBlock(unknown, "kubernetes"),
	}
	if len(c.VSphereConfigUnknown) == 0 {
		vs := m.VSphere
		if vs == nil {
			vs = &vsphereModel{}
		}
		c.VSphereConfig = vsphere.Config{
			Server:             stringOr(vs.Server, "VSPHERE_SERVER"),
			User:               stringOr(vs.User, "VSPHERE_USER"),
			Password:           stringOr(vs.Password, "VSPHERE_PASSWORD"),
			CAFile:             stringOr(vs.CAFile, "VSPHERE_CA_FILE"),
			CACertificate:      stringOr(vs.CACertificate, "VSPHERE_CA_CERTIFICATE"),
			AllowUnverifiedSSL: boolOr(vs.AllowUnverifiedSSL, "VSPHERE_ALLOW_UNVERIFIED_SSL", path.Root("vsphere").AtName("allow_unverified_ssl"), diags),
			AllowUnencryptedHTTP: boolOr(vs.AllowUnencrypted, "VSPHERE_ALLOW_UNENCRYPTED_HTTP",
				path.Root("vsphere").AtName("allow_unencrypted_http"), diags),
			ProvisioningUnitsPerHost: provisioningUnits(vs.ProvisioningUnits, diags),
		}
		c.VSphereConfig.From = settingsFrom(map[string]settingSource{
			"server": {vs.Server, "VSPHERE_SERVER"}, "user": {vs.User, "VSPHERE_USER"}, "password": {vs.Password, "VSPHERE_PASSWORD"},
			"ca_file": {vs.CAFile, "VSPHERE_CA_FILE"}, "ca_certificate": {vs.CACertificate, "VSPHERE_CA_CERTIFICATE"},
			"allow_unverified_ssl": {vs.AllowUnverifiedSSL, "VSPHERE_ALLOW_UNVERIFIED_SSL"},
		})
		// Refused here, at plan, not at the first login in the apply.
		if _, err := c.VSphereConfig.SDKURL(); errors.Is(err, vsphere.ErrUnencryptedHTTP) {
			diags.AddAttributeError(path.Root("vsphere").AtName("server"), "Unencrypted vCenter URL", err.Error())
		}
	}
	if len(inBlock(unknown, "active_directory")) == 0 {
		ad := m.ActiveDirectory
		if ad == nil {
			ad = &activeDirectoryModel{}
		}
		c.ADConfig = addirectory.Config{
			JoinUser: stringOr(ad.JoinUser, "WINDOWS_AD_JOIN_USER"), JoinPassword: stringOr(ad.JoinPassword, "WINDOWS_AD_JOIN_PASSWORD"),
			LDAPURL: stringOr(ad.LDAPURL, "WINDOWS_AD_LDAP_URL"), CAFile: stringOr(ad.CAFile, "WINDOWS_AD_CA_FILE"),
		}
	}
	if len(c.KubeConfigUnknown) == 0 {
		ks := m.Kubernetes
		if ks == nil {
			ks = &kubernetesModel{}
		}
		c.KubeConfig = kube.Config{
			ConfigContext:        stringOr(ks.ConfigContext, "KUBE_CTX"),
			Host:                 stringOr(ks.Host, "KUBE_HOST"),
			Token:                stringOr(ks.Token, "KUBE_TOKEN"),
			ClientCertificate:    stringOr(ks.ClientCertificate, "KUBE_CLIENT_CERT_DATA"),
			ClientKey:            stringOr(ks.ClientKey, "KUBE_CLIENT_KEY_DATA"),
			ClusterCACertificate: stringOr(ks.ClusterCACertificate, "KUBE_CLUSTER_CA_CERT_DATA"),
			Insecure:             boolOr(ks.Insecure, "KUBE_INSECURE", path.Root("kubernetes").AtName("insecure"), diags),
			ConfigPaths:          ks.configPaths(ctx, diags),
			Exec:                 ks.Exec.exec(ctx, diags),
		}
	}
	return c
}

// exec is the credential plugin, nil when the block is left out.
func (e *execModel) exec(ctx context.Context, diags *diag.Diagnostics) *kube.Exec {
	if e == nil {
		return nil
	}
	out := &kube.Exec{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
	if !e.Args.IsNull() {
		diags.Append(e.Args.ElementsAs(ctx, &out.Args, false)...)
	}
	if !e.Env.IsNull() {
		diags.Append(e.Env.ElementsAs(ctx, &out.Env, false)...)
	}
	return out
}

// validateKubernetes checks the kubernetes block at plan: the credential
// plugin's settings, and that it is the only credential configured.
func validateKubernetes(ks *kubernetesModel, diags *diag.Diagnostics) {
	if ks == nil || ks.Exec == nil {
		return
	}
	at := path.Root("kubernetes").AtName("exec")
	e := ks.Exec
	if e.APIVersion.IsNull() {
		diags.AddAttributeError(at.AtName("api_version"), "Missing kubernetes.exec.api_version",
			"An exec block needs api_version, the apiVersion of the ExecCredential the plugin prints: "+
				strings.Join(kube.ExecAPIVersions, " or ")+" (`aws eks get-token` and kubelogin print client.authentication.k8s.io/v1beta1).")
	}
	if v := e.APIVersion; !v.IsNull() && !v.IsUnknown() && !slices.Contains(kube.ExecAPIVersions, v.ValueString()) {
		detail := "kubernetes.exec.api_version is " + strconv.Quote(v.ValueString()) + ". Set it to the apiVersion of the ExecCredential the plugin prints: " +
			strings.Join(kube.ExecAPIVersions, " or ") + " (`aws eks get-token` and kubelogin print client.authentication.k8s.io/v1beta1)."
		if strings.HasSuffix(v.ValueString(), "/v1alpha1") {
			detail += " client.authentication.k8s.io/v1alpha1 was removed in Kubernetes 1.24: update the plugin if it prints only that."
		}
		diags.AddAttributeError(at.AtName("api_version"), "Unsupported kubernetes.exec.api_version", detail)
	}
	if v := e.Command; !v.IsUnknown() && strings.TrimSpace(v.ValueString()) == "" {
		diags.AddAttributeError(at.AtName("command"), "Missing kubernetes.exec.command",
			"kubernetes.exec.command is missing or empty: set it to the credential plugin, such as \"aws\" or \"kubelogin\" (a name looked up in PATH, or a path).")
	}
	for _, c := range []struct {
		name string
		v    types.String
	}{{"token", ks.Token}, {"client_certificate", ks.ClientCertificate}, {"client_key", ks.ClientKey}} {
		name := c.name
		if c.v.IsNull() {
			continue
		}
		diags.AddAttributeError(path.Root("kubernetes").AtName(name), "Conflicting Kubernetes credentials",
			"kubernetes.exec and kubernetes."+name+" both give the provider credentials, and only one may: "+
				"remove kubernetes."+name+" to sign in through the credential plugin, or remove the exec block to use kubernetes."+name+".")
	}
}

// unknownAttributes names the attributes of the provider configuration that
// are unknown, as "kubernetes.host". A list with an unknown element is named
// as a whole ("kubernetes.config_paths"), and a block that is unknown as a
// whole (a dynamic block over a list known only at apply) by its name.
func unknownAttributes(config tftypes.Value) []string {
	if !config.IsKnown() {
		return []string{"kubernetes", "vsphere"}
	}
	var names []string
	_ = tftypes.Walk(config, func(at *tftypes.AttributePath, v tftypes.Value) (bool, error) {
		if v.IsKnown() {
			return true, nil
		}
		var parts []string
		for _, step := range at.Steps() {
			if name, ok := step.(tftypes.AttributeName); ok {
				parts = append(parts, string(name))
			}
		}
		if name := strings.Join(parts, "."); !slices.Contains(names, name) {
			names = append(names, name)
		}
		return false, nil
	})
	sort.Strings(names)
	return names
}

// withoutUnknownBlocks returns the configuration with a block that is unknown
// as a whole (kubernetes, or kubernetes.exec) made null, so that it decodes
// (clients does not resolve a block with anything unknown).
func withoutUnknownBlocks(config tfsdk.Config) tfsdk.Config {
	raw, err := tftypes.Transform(config.Raw, func(at *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() && (len(at.Steps()) == 1 || v.Type().Is(tftypes.Object{})) {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		return config // Get reports what cannot be decoded
	}
	config.Raw = raw
	return config
}

// inBlock picks the names that belong to a block: the block itself or its
// attributes.
func inBlock(names []string, block string) []string {
	var in []string
	for _, n := range names {
		if n == block || strings.HasPrefix(n, block+".") {
			in = append(in, n)
		}
	}
	return in
}

// configPaths picks the kubeconfig files: config_paths, config_path, then
// KUBE_CONFIG_PATHS, KUBE_CONFIG_PATH and KUBECONFIG. Explicit host settings
// alone do not read ~/.kube/config, as in hashicorp/kubernetes.
func (ks *kubernetesModel) configPaths(ctx context.Context, diags *diag.Diagnostics) []string {
	if ks.ConfigPaths.IsUnknown() || ks.ConfigPath.IsUnknown() {
		return nil // never the environment's files in place of unknown ones
	}
	if !ks.ConfigPaths.IsNull() {
		var paths []string
		diags.Append(ks.ConfigPaths.ElementsAs(ctx, &paths, false)...)
		return paths
	}
	if p := ks.ConfigPath.ValueString(); p != "" {
		return []string{p}
	}
	for _, env := range []string{"KUBE_CONFIG_PATHS", "KUBE_CONFIG_PATH", "KUBECONFIG"} {
		if v := os.Getenv(env); v != "" {
			return filepath.SplitList(v)
		}
	}
	return nil
}

// settingSource is a setting of the vsphere block and the environment
// variable it falls back to.
type settingSource struct {
	value interface{ IsNull() bool }
	env   string
}

// settingsFrom says how the user set each setting ("password":
// "vsphere.password" or "VSPHERE_PASSWORD"), for errors that name the one
// to fix (vsphere.Config.From); a setting set neither way is left out.
func settingsFrom(settings map[string]settingSource) map[string]string {
	from := map[string]string{}
	for attr, s := range settings {
		switch {
		case !s.value.IsNull():
			from[attr] = "vsphere." + attr
		case os.Getenv(s.env) != "":
			from[attr] = s.env
		}
	}
	return from
}

// stringOr is the configured value, else the environment's. Only a null
// value falls back: an unknown one gives "" (clients does not even resolve a
// block that has one).
func stringOr(v types.String, env string) string {
	if !v.IsNull() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func boolOr(v types.Bool, env string, at path.Path, diags *diag.Diagnostics) bool {
	if !v.IsNull() {
		return v.ValueBool()
	}
	raw := strings.TrimSpace(os.Getenv(env))
	if raw == "" {
		return false
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		diags.AddAttributeError(at, "Invalid environment variable "+env,
			"The value "+strconv.Quote(raw)+" is not a boolean: use true or false.")
	}
	return b
}

// provisioningUnitsEnv is provisioning_units_per_host's environment variable.
const provisioningUnitsEnv = "VSPHERE_PROVISIONING_UNITS_PER_HOST"

// provisioningUnits is provisioning_units_per_host (or its environment
// variable) as vsphere.Config has it: 0 for the default, negative for no
// limit. A value a full clone cannot fit in is refused.
func provisioningUnits(v types.Int64, diags *diag.Diagnostics) int {
	at := path.Root("vsphere").AtName("provisioning_units_per_host")
	var n int64
	switch raw := strings.TrimSpace(os.Getenv(provisioningUnitsEnv)); {
	case !v.IsNull() && !v.IsUnknown():
		n = v.ValueInt64()
	case raw != "":
		var err error
		if n, err = strconv.ParseInt(raw, 10, 32); err != nil {
			diags.AddAttributeError(at, "Invalid environment variable "+provisioningUnitsEnv,
				"The value "+strconv.Quote(raw)+" is not a whole number: use 16 (a host's units), a larger number, or 0 for no limit.")
			return 0
		}
	default:
		return 0
	}
	if msg := validProvisioningUnits(n); msg != "" {
		diags.AddAttributeError(at, "Invalid provisioning_units_per_host", msg)
		return 0
	}
	if n == 0 {
		return -1
	}
	return int(n)
}

// validProvisioningUnits says what is wrong with n as
// provisioning_units_per_host, or "".
func validProvisioningUnits(n int64) string {
	switch {
	case n < 0:
		return fmt.Sprintf("%d is negative: use 16 (an ESXi host's provisioning units, the default), a larger number to let vCenter queue clones, or 0 for no limit.", n)
	case n > 0 && n < vsphere.UnitsPerFullClone:
		return fmt.Sprintf("%d is fewer units than a full clone takes (%d): no full clone would ever start. Use 16 (an ESXi host's units, the default), "+
			"at least %d, or 0 for no limit.", n, vsphere.UnitsPerFullClone, vsphere.UnitsPerFullClone)
	case n > 1<<20:
		return fmt.Sprintf("%d is more than any host has: use 0 for no limit.", n)
	}
	return ""
}
