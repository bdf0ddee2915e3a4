package resources

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// transportModel is how the provider reaches a guest: vCenter's guest
// operations (vmtools) unless told otherwise.
type transportModel struct {
	Type          types.String `tfsdk:"type"`
	Port          types.Int64  `tfsdk:"port"`
	HTTPS         types.Bool   `tfsdk:"https"`
	UseNTLM       types.Bool   `tfsdk:"use_ntlm"`
	Insecure      types.Bool   `tfsdk:"insecure"`
	CACertificate types.String `tfsdk:"ca_certificate"`
	TLSServerName types.String `tfsdk:"tls_server_name"`
	SSHPrivateKey types.String `tfsdk:"ssh_private_key_wo"`
	SSHHostKey    types.String `tfsdk:"ssh_host_key"`
	// HTTPSBootstrap and WinRMCertSHA256: per-clone WinRM HTTPS trust
	// (transport_https.go).
	HTTPSBootstrap  types.String `tfsdk:"https_bootstrap"`
	WinRMCertSHA256 types.String `tfsdk:"winrm_certificate_sha256"`
	ManagementCIDRs types.List   `tfsdk:"management_cidrs"`
}

var transportAttrTypes = map[string]attr.Type{
	"type": types.StringType, "port": types.Int64Type, "https": types.BoolType, "use_ntlm": types.BoolType,
	"insecure": types.BoolType, "ca_certificate": types.StringType, "tls_server_name": types.StringType,
	"ssh_private_key_wo": types.StringType, "ssh_host_key": types.StringType,
	"https_bootstrap": types.StringType, "winrm_certificate_sha256": types.StringType,
	"management_cidrs": types.ListType{ElemType: types.StringType},
}

// transportSchema is the transport attribute; modifiers are its plan
// modifiers (a golden image is rebuilt when it changes, a node is not).
// noHTTPSBootstrap, when not empty, is why the resource refuses
// https_bootstrap.
func transportSchema(noHTTPSBootstrap string, modifiers ...planmodifier.Object) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:      true,
		PlanModifiers: modifiers,
		Validators:    []validator.Object{plainHTTPValidator{}, vmtoolsTransportValidator{}, httpsTrustValidator{refused: noHTTPSBootstrap}},
		MarkdownDescription: "How the provider reaches the guest. Defaults to `type = \"vmtools\"`: vCenter's guest operations, " +
			"which need nothing on a stock template but VMware Tools and no network path from the provider to the guest. " +
			"`type = \"winrm\"` is WinRM over HTTPS (port 5986) with NTLM authentication and certificate verification against " +
			"`ca_certificate` (or the system roots), or over the HTTP listener a stock Windows Server has (`https = false`); " +
			"`type = \"ssh\"` needs OpenSSH Server on the guest. See the base template guide.",
		Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "`vmtools` (the default), `winrm` or `ssh`. `vmtools` runs the steps through vCenter's guest operations, " +
					"which VMware Tools in the guest carries out (as PowerCLI's `Invoke-VMScript` does): no port, no listener and no " +
					"certificate on the guest, and no route from the provider to it, only to vCenter and, for the scripts' output, to " +
					"the ESXi host running the VM (HTTPS, port 443, verified by the thumbprint vCenter holds). It needs VMware Tools " +
					"running in the guest, the guest's administrator password (the one the resource sets), and the vCenter privileges " +
					"`VirtualMachine.GuestOperations.Query`, `.Modify` and `.Execute` on the VM. `port`, `https`, `use_ntlm`, `insecure`, " +
					"`ca_certificate`, `tls_server_name` and the `ssh_*` attributes do not apply to it and are refused. It is the default " +
					"because it is the one transport that works with a stock template (VMware Tools and an Administrator password) from a " +
					"runner on another subnet (a CI runner, a Terraform Cloud agent): a stock Windows Server has no HTTPS listener and no " +
					"SSH server, and its firewall admits WinRM over HTTP on a Public network only from its own subnet. `winrm` needs a " +
					"listener the provider can reach (and, over HTTPS, a certificate for each clone's own address or name); `ssh` needs " +
					"OpenSSH Server installed on the template.",
				Validators: []validator.String{stringvalidator.OneOf("winrm", "ssh", string(remote.ProtocolVMTools))},
			},
			"port": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Port: defaults to 5986 for WinRM over HTTPS, 5985 for WinRM over HTTP, 22 for SSH.",
				Validators:          []validator.Int64{int64validator.Between(1, 65535)},
			},
			"https": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "WinRM over HTTPS. Defaults to `true`, which needs an HTTPS listener on the guest (Windows has none " +
					"out of the box). `false` uses the HTTP listener a stock Windows Server has on port 5985: NTLM authenticates " +
					"the connection and every message is encrypted with its NTLM session (WinRM message encryption), which is what " +
					"that listener requires (`AllowUnencrypted = false`). HTTP needs `use_ntlm`; Basic over HTTP is refused at plan. " +
					"The NTLM session's RC4 encryption does not authenticate the guest as a certificate does: prefer HTTPS where you can. " +
					"A node joined with `type = \"vmtools\"` has no HTTP listener left (its join removes it), and a change to " +
					"WinRM over HTTP is refused at plan.",
			},
			"use_ntlm": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Authenticate to WinRM with NTLM (the default, and what Windows accepts out of the box for local " +
					"accounts) instead of Basic. `false` (Basic) needs HTTPS and Basic enabled on the guest " +
					"(`winrm set winrm/config/service/auth @{Basic=\"true\"}`); with `https = false` it is refused at plan, as " +
					"Basic would send the password in clear text and Windows refuses it by default.",
			},
			"insecure": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Skip verification of the WinRM HTTPS certificate. Defaults to `false`: an explicit opt-in, prefer `ca_certificate`.",
			},
			"ca_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM of the CA that signed the guest's WinRM HTTPS certificate.",
			},
			"tls_server_name": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Name to verify in the WinRM certificate instead of the guest's IP address.",
			},
			"ssh_private_key_wo": schema.StringAttribute{
				Optional: true, WriteOnly: true, Sensitive: true,
				MarkdownDescription: "PEM private key for SSH; without it SSH uses the administrator password. Write-only.",
			},
			"ssh_host_key": schema.StringAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{keepRecordedHostKey{}},
				Validators:    []validator.String{hostKeyValidator{}},
				MarkdownDescription: "The guest's SSH host key (`ssh-ed25519 AAAA...`), for `type = \"ssh\"`. Without it the key the guest " +
					"presents at the first connection is trusted and recorded here, in the state; every later connection (a re-join, " +
					"a reconnection after a reboot) must present that key, and a guest that presents another one is refused. Set it to " +
					"pin a key verified out of band before the first connection, or, after verifying a guest's new key out of band " +
					"(its console: `Get-Content C:\\ProgramData\\ssh\\ssh_host_ed25519_key.pub`), to accept it. Removing it from the " +
					"configuration keeps the recorded key.",
			},
			"https_bootstrap":          httpsBootstrapAttribute(),
			"winrm_certificate_sha256": winrmCertificateAttribute(),
			"management_cidrs":         managementCIDRsAttribute(),
		},
	}
}

// plainHTTPValidator refuses Basic authentication over HTTP: the password
// would travel in clear text (Basic is base64, not encryption), and a stock
// Windows listener refuses it (winrm/config/service Basic=false,
// AllowUnencrypted=false). NTLM over HTTP is allowed: its messages are
// encrypted.
type plainHTTPValidator struct{}

func (plainHTTPValidator) Description(context.Context) string {
	return "WinRM over HTTP needs NTLM: Basic authentication over HTTP is refused"
}

func (v plainHTTPValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (plainHTTPValidator) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	typ, _ := attrs["type"].(types.String)
	https, _ := attrs["https"].(types.Bool)
	ntlm, _ := attrs["use_ntlm"].(types.Bool)
	if typ.IsUnknown() || typ.ValueString() != string(remote.ProtocolWinRM) || https.IsUnknown() || ntlm.IsUnknown() {
		return
	}
	if https.IsNull() || https.ValueBool() || ntlm.IsNull() || ntlm.ValueBool() {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path.AtName("use_ntlm"), "Basic authentication over HTTP is refused",
		req.Path.String()+" sets https = false and use_ntlm = false: WinRM Basic authentication over HTTP would send the "+
			"administrator password in clear text (base64), and Windows refuses it by default (winrm/config/service "+
			"Basic = false, AllowUnencrypted = false). Remove use_ntlm = false to use NTLM, whose messages are encrypted over "+
			"HTTP as a stock Windows listener requires, or set https = true for Basic over an HTTPS listener.")
}

// keepRecordedHostKey plans ssh_host_key: the configuration's value, else
// the key recorded in the state (only the configuration changes it), else
// unknown where a connection may record one and null where none will
// (WinRM).
type keepRecordedHostKey struct{}

func (keepRecordedHostKey) Description(context.Context) string {
	return "Keeps the SSH host key recorded at the first connection."
}

func (m keepRecordedHostKey) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (keepRecordedHostKey) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() || !req.PlanValue.IsUnknown() {
		return
	}
	var typ types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, req.Path.ParentPath().AtName("type"), &typ)...)
	switch {
	case !typ.IsUnknown() && typ.ValueString() != string(remote.ProtocolSSH):
		resp.PlanValue = types.StringNull()
	case !req.State.Raw.IsNull() && !req.StateValue.IsNull():
		resp.PlanValue = req.StateValue
	}
}

// vmtoolsTransportValidator refuses, with type = "vmtools", the attributes
// of the network transports: guest operations go through vCenter, so a
// port, TLS settings or SSH keys would be silently ignored otherwise.
type vmtoolsTransportValidator struct{}

// networkOnlyAttributes are the transport attributes vmtools has no use for.
var networkOnlyAttributes = []string{"port", "https", "use_ntlm", "insecure", "ca_certificate", "tls_server_name", "ssh_private_key_wo", "ssh_host_key",
	"https_bootstrap", "winrm_certificate_sha256", "management_cidrs"}

func (vmtoolsTransportValidator) Description(context.Context) string {
	return `with type = "vmtools", none of the WinRM or SSH attributes`
}

func (v vmtoolsTransportValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (vmtoolsTransportValidator) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	typ, _ := attrs["type"].(types.String)
	if typ.IsUnknown() || (!typ.IsNull() && typ.ValueString() != string(remote.ProtocolVMTools)) {
		return
	}
	which := `type = "vmtools"`
	if typ.IsNull() {
		which = `the default transport, type = "vmtools"`
	}
	for _, name := range networkOnlyAttributes {
		if v, ok := attrs[name]; ok && !v.IsNull() {
			resp.Diagnostics.AddAttributeError(req.Path.AtName(name), "Invalid transport attribute for vmtools",
				fmt.Sprintf("%s does not apply to %s: the provider reaches the guest through vCenter's guest operations "+
					"(VMware Tools), with no port, listener, certificate or SSH key of the guest's. Remove %s, or set type = \"winrm\" or \"ssh\" "+
					"to reach the guest over the network.",
					req.Path.AtName(name), which, name))
		}
	}
}

// hostKeyValidator accepts a public key in authorized_keys format.
type hostKeyValidator struct{}

func (hostKeyValidator) Description(context.Context) string {
	return "an SSH public key in authorized_keys format"
}

func (v hostKeyValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (hostKeyValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := remote.ParseHostKey(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid SSH host key",
			req.Path.String()+": "+err.Error()+". Give the guest's public host key as its .pub file has it, for example the content of C:\\ProgramData\\ssh\\ssh_host_ed25519_key.pub.")
	}
}

// transportChanged compares two transports as a golden image's rebuild
// does: the SSH host key recorded at the build is not an input of the image.
func transportChanged(state, plan types.Object) bool {
	if state.IsNull() || plan.IsNull() || state.IsUnknown() || plan.IsUnknown() {
		return !state.Equal(plan)
	}
	a, b := maps.Clone(state.Attributes()), maps.Clone(plan.Attributes())
	for _, recorded := range []string{"ssh_host_key", "winrm_certificate_sha256"} {
		delete(a, recorded)
		delete(b, recorded)
	}
	return !maps.EqualFunc(a, b, attr.Value.Equal)
}

// withHostKey settles ssh_host_key after an apply: the key a connection
// trusted, when the plan left it open; null when nothing recorded one (a
// state must hold no unknown value). A configured key stays as written.
func withHostKey(transport types.Object, key string) types.Object {
	// winrm_certificate_sha256 is settled alike: null unless recorded.
	return withRecorded(withRecorded(transport, "ssh_host_key", key), "winrm_certificate_sha256", "")
}

// withRecorded settles a recorded attribute of the transport (ssh_host_key,
// winrm_certificate_sha256) as withHostKey does.
func withRecorded(transport types.Object, name, value string) types.Object {
	if transport.IsNull() || transport.IsUnknown() {
		return transport
	}
	attrs := maps.Clone(transport.Attributes())
	current, _ := attrs[name].(types.String)
	if !current.IsUnknown() && !current.IsNull() {
		return transport
	}
	if value != "" {
		attrs[name] = types.StringValue(value)
	} else if current.IsUnknown() {
		attrs[name] = types.StringNull()
	} else {
		return transport
	}
	return types.ObjectValueMust(transportAttrTypes, attrs)
}

// addGuestError adds the diagnostic of a failed operation on a guest. A
// refused SSH host key names transport.ssh_host_key and the way to accept a
// legitimately new key; anything else is a plain error.
func addGuestError(diags *diag.Diagnostics, summary string, err error, configured bool, more string) {
	if addCertificateError(diags, summary, err, more) {
		return
	}
	var hk *remote.HostKeyError
	if !errors.As(err, &hk) {
		diags.AddError(summary, err.Error()+more)
		return
	}
	source := "recorded in the state (transport.ssh_host_key) at the first connection"
	fix := "If the guest's keys were legitimately regenerated (a reinstall, deleted key files), verify the new key out of band, " +
		"on the guest's console (Get-Content C:\\ProgramData\\ssh\\ssh_host_ed25519_key.pub), then set transport.ssh_host_key " +
		"to it in the configuration and apply again."
	switch {
	case configured:
		source = "pinned by transport.ssh_host_key in the configuration"
		fix = "If the pinned key is wrong or the guest's keys were legitimately regenerated, verify the guest's key out of band, " +
			"on its console (Get-Content C:\\ProgramData\\ssh\\ssh_host_ed25519_key.pub), and set transport.ssh_host_key to it."
	case !hk.Required:
		source = "presented at this operation's first connection"
	}
	diags.AddAttributeError(path.Root("transport").AtName("ssh_host_key"), summary+": SSH host key mismatch", fmt.Sprintf(
		"The guest at %s presented the SSH host key %s (%s), but the key %s is %s. This is what a man-in-the-middle attack looks like, "+
			"and the connection was refused.\n\n%s%s\n\n%s",
		hk.Address, hk.Got, hk.Presented, hk.Want, source, fix, more, err.Error()))
}

// defaultProtocol is the transport of a null transport.type: the one that
// works with a stock template from a runner on another subnet.
const defaultProtocol = remote.ProtocolVMTools

// transportConfig turns the transport attribute (null: the defaults) and the
// write-only SSH key into the remote.Config of user; the orchestrator fills
// in the guest's address.
func transportConfig(ctx context.Context, transport types.Object, user, password, sshKey string) (remote.Config, diag.Diagnostics) {
	var t transportModel
	var diags diag.Diagnostics
	if !transport.IsNull() && !transport.IsUnknown() {
		diags = transport.As(ctx, &t, basetypes.ObjectAsOptions{})
		t.SSHPrivateKey = types.StringValue(sshKey)
	}
	cfg := remote.Config{
		Protocol:      remote.Protocol(t.Type.ValueString()),
		Port:          int(t.Port.ValueInt64()),
		User:          user,
		Password:      password,
		HTTPS:         t.HTTPS.IsNull() || t.HTTPS.ValueBool(),
		NTLM:          t.UseNTLM.IsNull() || t.UseNTLM.ValueBool(),
		Insecure:      t.Insecure.ValueBool(),
		CACertPEM:     []byte(t.CACertificate.ValueString()),
		TLSServerName: t.TLSServerName.ValueString(),
		PrivateKeyPEM: []byte(t.SSHPrivateKey.ValueString()),
		HostKey:       t.SSHHostKey.ValueString(),
		CertSHA256:    t.WinRMCertSHA256.ValueString(),
	}
	if cfg.Protocol == "" {
		cfg.Protocol = defaultProtocol
	}
	if len(cfg.CACertPEM) == 0 {
		cfg.CACertPEM = nil
	}
	if len(cfg.PrivateKeyPEM) == 0 {
		cfg.PrivateKeyPEM = nil
	}
	if cfg.Protocol == remote.ProtocolSSH && cfg.HostKey == "" {
		// Trust on first use; the key is recorded in the state after apply.
		cfg.HostKeys = &remote.HostKeys{}
	}
	return cfg, diags
}

// configuredHostKey reports whether the configuration sets
// transport.ssh_host_key.
func configuredHostKey(ctx context.Context, config tfsdk.Config) bool {
	var transport types.Object
	if config.GetAttribute(ctx, path.Root("transport"), &transport).HasError() || transport.IsNull() || transport.IsUnknown() {
		return false
	}
	key, _ := transport.Attributes()["ssh_host_key"].(types.String)
	return !key.IsNull()
}

// refuseWinRMHTTPAfterVMTools refuses, at plan, a node joined through
// VMware Tools whose transport becomes WinRM over HTTP: that join removed
// the guest's WinRM HTTP listener and disabled its firewall rules
// (bootstrap's remote-logins-off step), so the apply would find nothing on
// port 5985. A new VM (replace) has the template's listener again, and
// https_bootstrap makes an HTTPS listener over vCenter.
func refuseWinRMHTTPAfterVMTools(ctx context.Context, state, plan types.Object, diags *diag.Diagnostics) {
	if !vmToolsToWinRMHTTP(ctx, state, plan, diags) {
		return
	}
	diags.AddAttributeError(path.Root("transport"), "WinRM over HTTP after a join through VMware Tools",
		`transport: this node was joined with type = "vmtools", and that join removed the guest's WinRM HTTP listener and disabled `+
			`its firewall rules (nothing reaches the node over WinRM then), so WinRM over HTTP (https = false) would find no listener. `+
			`Keep type = "vmtools", use WinRM over HTTPS with https_bootstrap (its listener is made over vCenter), or replace the node `+
			`(terraform apply -replace) to join a new clone over HTTP.`)
}

// vmToolsToWinRMHTTP tells whether a transport block changes from a join
// through VMware Tools (state) to WinRM over HTTP (plan): the change
// refuseWinRMHTTPAfterVMTools refuses on a node and
// warnPoolWinRMHTTPAfterVMTools warns of on a pool. An unknown plan is no
// change yet.
func vmToolsToWinRMHTTP(ctx context.Context, state, plan types.Object, diags *diag.Diagnostics) bool {
	if plan.IsUnknown() {
		return false
	}
	was, d := transportConfig(ctx, state, "", "", "")
	diags.Append(d...)
	now, d := transportConfig(ctx, plan, "", "", "")
	diags.Append(d...)
	return was.Protocol == remote.ProtocolVMTools && now.Protocol == remote.ProtocolWinRM && !now.HTTPS
}

// warnPoolWinRMHTTPAfterVMTools is windows_node_pool's counterpart of
// refuseWinRMHTTPAfterVMTools, and a warning rather than a refusal: a pool
// reaches a member over its transport only while the member joins
// (winpool.Nodes: Create clones and joins; Delete, ForgetNode and
// SetNodeSettings go through vCenter and the Kubernetes API), so the
// members joined through VMware Tools are never dialled over WinRM again,
// and every member made after the change (a scale-up, a roll, a
// replacement) is a new clone with the template's WinRM HTTP listener,
// which its join uses and leaves open. The change works; what it changes is
// what the new members expose, which the plan says.
func warnPoolWinRMHTTPAfterVMTools(ctx context.Context, state, plan types.Object, diags *diag.Diagnostics) {
	if !vmToolsToWinRMHTTP(ctx, state, plan, diags) {
		return
	}
	diags.AddAttributeWarning(path.Root("transport"), "New pool members will keep WinRM over HTTP open",
		`transport: the members joined with type = "vmtools" had their WinRM HTTP listener removed and stay so (the pool does not `+
			`reach them over its transport again). Members made from now on (more replicas, a roll, a replacement) are joined over `+
			`WinRM over HTTP (https = false) and keep its listener on port 5985. Keep type = "vmtools" to keep remote logins off on every `+
			`member, or use WinRM over HTTPS.`)
}
