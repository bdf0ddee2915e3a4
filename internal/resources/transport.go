package resources

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// transportModel is how the provider reaches a guest: WinRM over HTTPS with
// NTLM unless told otherwise.
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
}

var transportAttrTypes = map[string]attr.Type{
	"type": types.StringType, "port": types.Int64Type, "https": types.BoolType, "use_ntlm": types.BoolType,
	"insecure": types.BoolType, "ca_certificate": types.StringType, "tls_server_name": types.StringType,
	"ssh_private_key_wo": types.StringType, "ssh_host_key": types.StringType,
}

// transportSchema is the transport attribute; modifiers are its plan
// modifiers (a golden image is rebuilt when it changes, a node is not).
func transportSchema(modifiers ...planmodifier.Object) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:      true,
		PlanModifiers: modifiers,
		MarkdownDescription: "How the provider reaches the guest. Defaults to WinRM over HTTPS (port 5986) with NTLM authentication and " +
			"certificate verification against `ca_certificate` (or the system roots).",
		Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`winrm` (the default) or `ssh`.",
				Validators:          []validator.String{stringvalidator.OneOf("winrm", "ssh")},
			},
			"port": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Port: defaults to 5986 for WinRM over HTTPS, 5985 for WinRM over HTTP, 22 for SSH.",
				Validators:          []validator.Int64{int64validator.Between(1, 65535)},
			},
			"https": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "WinRM over HTTPS. Defaults to `true`; plain HTTP (`false`) only for isolated lab networks.",
			},
			"use_ntlm": schema.BoolAttribute{
				Optional:            true,
				MarkdownDescription: "Authenticate to WinRM with NTLM (the default, and what Windows accepts out of the box for local accounts) instead of Basic.",
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
				Optional: true,
				MarkdownDescription: "The guest's SSH host key (`ssh-ed25519 AAAA...`) to pin. Without it the key seen first is trusted for the " +
					"rest of the operation and any change fails loudly.",
			},
		},
	}
}

// remoteConfig turns the transport settings into a remote.Config for host.
func (t *transportModel) remoteConfig(host, user, password string) remote.Config {
	if t == nil {
		t = &transportModel{}
	}
	cfg := remote.Config{
		Protocol:      remote.Protocol(t.Type.ValueString()),
		Host:          host,
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
	}
	if cfg.Protocol == "" {
		cfg.Protocol = remote.ProtocolWinRM
	}
	if len(cfg.CACertPEM) == 0 {
		cfg.CACertPEM = nil
	}
	if len(cfg.PrivateKeyPEM) == 0 {
		cfg.PrivateKeyPEM = nil
	}
	if cfg.Protocol == remote.ProtocolSSH && cfg.HostKey == "" {
		cfg.KnownHosts = &remote.MemoryHostKeys{}
	}
	return cfg
}
