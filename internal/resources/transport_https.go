package resources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

// Per-clone WinRM HTTPS trust: transport.https_bootstrap = "vmtools" has the
// provider create each clone's HTTPS listener over vCenter's guest
// operations, with a key made on the clone (guest.CreateHTTPSListener), and
// record the certificate's SHA-256 in transport.winrm_certificate_sha256,
// which every later connection must match, as ssh_host_key does for SSH.

// fixCertificate is the way to accept a guest's new certificate, checked
// over a channel that authenticates the guest.
const fixCertificate = "If the guest's listener was legitimately given another certificate, read its SHA-256 over a channel that " +
	"authenticates the guest, on its console or through vCenter's guest operations (PowerCLI's Invoke-VMScript):\n\n" +
	"  $l = Get-WSManInstance -ResourceURI winrm/config/Listener -Enumerate | Where-Object Transport -eq 'HTTPS'\n" +
	"  (Get-FileHash -Algorithm SHA256 -InputStream ([IO.MemoryStream]::new((Get-Item \"Cert:\\LocalMachine\\My\\$($l.CertificateThumbprint)\").RawData))).Hash\n\n" +
	"and set transport.winrm_certificate_sha256 to it in the configuration; or replace the node " +
	"(terraform apply -replace), whose new clone makes a new listener and key."

func httpsBootstrapAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "`vmtools`: the provider itself creates the guest's WinRM HTTPS listener, with a key made on that clone, so a stock " +
			"template (no HTTPS listener) is enough and no clone shares a key with another. Before the first WinRM connection it runs, over vCenter's " +
			"guest operations (verified TLS to vCenter and the guest's administrator password: nothing on the network path is trusted), a step that " +
			"makes a self-signed certificate in `Cert:\\LocalMachine\\My` with a non-exportable key (`New-SelfSignedCertificate`), opens TCP 5986 in " +
			"the guest's firewall to `management_cidrs` and binds the HTTPS listener to it (`New-WSManInstance`); it records the certificate's SHA-256 in " +
			"`winrm_certificate_sha256`, and every WinRM connection from then on must present exactly that certificate. Needs `type = \"winrm\"` " +
			"over HTTPS, the vCenter privileges of `type = \"vmtools\"` and VMware Tools in the guest; `ca_certificate`, `insecure` and " +
			"`tls_server_name` do not apply. A guest that already has an HTTPS listener (made on its template and cloned with its key) is refused, " +
			"naming it. `windows_node` only.",
		Validators: []validator.String{stringvalidator.OneOf(string(remote.ProtocolVMTools))},
	}
}

// managementCIDRsAttribute is whom the firewall rule of the listener
// https_bootstrap creates admits to TCP 5986.
func managementCIDRsAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Optional: true, ElementType: types.StringType,
		Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(), listvalidator.ValueStringsAre(addressOrCIDRValidator{})},
		MarkdownDescription: "With `https_bootstrap = \"vmtools\"`: the addresses or CIDRs (`10.0.5.0/24`, `192.0.2.7`) the guest's firewall " +
			"admits to TCP 5986, the listener the provider creates; every other address is dropped. Defaults to the one address the provider " +
			"connects from, as its host's routing picks it for the guest's address: right when Terraform runs on the management network. " +
			"Behind NAT (a Terraform Cloud agent or a runner in another network) the guest sees the NAT's address instead: set it here, or the " +
			"first WinRM connection times out. With `type = \"vmtools\"` nothing needs 5986 and no rule is made.",
	}
}

// addressOrCIDRValidator accepts an IP address or a CIDR.
type addressOrCIDRValidator struct{}

func (addressOrCIDRValidator) Description(context.Context) string { return "an IP address or a CIDR" }

func (v addressOrCIDRValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (addressOrCIDRValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	a := req.ConfigValue.ValueString()
	if net.ParseIP(a) != nil {
		return
	}
	if _, _, err := net.ParseCIDR(a); err == nil {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid management address",
		fmt.Sprintf("%q is neither an IP address nor a CIDR: write one address (192.0.2.7) or a network (10.0.5.0/24).", a))
}

func winrmCertificateAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true, Computed: true,
		PlanModifiers: []planmodifier.String{keepRecordedCertificate{}},
		Validators:    []validator.String{certificateSHA256Validator{}},
		MarkdownDescription: "SHA-256 of the guest's WinRM HTTPS certificate (64 hex digits; colons allowed), pinned: every WinRM HTTPS connection " +
			"must present exactly that certificate, with no CA, name or validity check (the certificate is the guest's own, its key on the guest " +
			"only, so it identifies the guest; the name in it is what the guest wrote, and an address may change). With `https_bootstrap` it is " +
			"recorded here when the provider creates the listener; set it to accept a guest's new certificate after checking it over an " +
			"authenticated channel, or, without `https_bootstrap`, to pin a listener's certificate you know. Removing it from the configuration " +
			"keeps the recorded one.",
	}
}

// keepRecordedCertificate plans winrm_certificate_sha256 as
// keepRecordedHostKey plans ssh_host_key: the configuration's value, else
// the state's, else unknown where https_bootstrap will record one and null
// where nothing will.
type keepRecordedCertificate struct{}

func (keepRecordedCertificate) Description(context.Context) string {
	return "Keeps the WinRM HTTPS certificate recorded when the provider created the listener."
}

func (m keepRecordedCertificate) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (keepRecordedCertificate) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() || !req.PlanValue.IsUnknown() {
		return
	}
	var bootstrapVia types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, req.Path.ParentPath().AtName("https_bootstrap"), &bootstrapVia)...)
	switch {
	case !req.State.Raw.IsNull() && !req.StateValue.IsNull():
		resp.PlanValue = req.StateValue
	case !bootstrapVia.IsUnknown() && bootstrapVia.IsNull():
		resp.PlanValue = types.StringNull()
	}
}

type certificateSHA256Validator struct{}

func (certificateSHA256Validator) Description(context.Context) string {
	return "a SHA-256 fingerprint: 64 hexadecimal digits, colons allowed"
}

func (v certificateSHA256Validator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (certificateSHA256Validator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := remote.ParseCertificateSHA256(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid certificate fingerprint", req.Path.String()+": "+err.Error()+".")
	}
}

// httpsTrustValidator refuses what contradicts a pinned or bootstrapped
// WinRM HTTPS certificate: another transport, plain HTTP, and the CA and
// name settings a pin replaces (they would be silently ignored); and
// https_bootstrap where the resource refuses it (refused says why).
type httpsTrustValidator struct{ refused string }

func (httpsTrustValidator) Description(context.Context) string {
	return "https_bootstrap and winrm_certificate_sha256 need type = \"winrm\" over HTTPS and replace ca_certificate, insecure and tls_server_name"
}

func (v httpsTrustValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v httpsTrustValidator) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	typ, _ := attrs["type"].(types.String)
	https, _ := attrs["https"].(types.Bool)
	if cidrs, ok := attrs["management_cidrs"]; ok && !cidrs.IsNull() && attrs["https_bootstrap"].IsNull() && !typ.IsNull() && !typ.IsUnknown() && typ.ValueString() != string(remote.ProtocolVMTools) {
		resp.Diagnostics.AddAttributeError(req.Path.AtName("management_cidrs"), "management_cidrs without https_bootstrap",
			fmt.Sprintf("%s scopes the firewall rule of the WinRM HTTPS listener the provider creates, which it does only with "+
				"https_bootstrap = \"vmtools\"; a listener of the template has its own rule. Set https_bootstrap = \"vmtools\", or remove management_cidrs.",
				req.Path.AtName("management_cidrs")))
	}
	for _, name := range []string{"https_bootstrap", "winrm_certificate_sha256"} {
		if attrs[name].IsNull() {
			continue
		}
		at := req.Path.AtName(name)
		if name == "https_bootstrap" && v.refused != "" {
			resp.Diagnostics.AddAttributeError(at, "https_bootstrap is not supported here", at.String()+": "+v.refused+".")
			continue
		}
		if typ.IsNull() || (!typ.IsUnknown() && typ.ValueString() != string(remote.ProtocolWinRM)) {
			continue // vmtoolsTransportValidator names it for vmtools
		}
		if !https.IsNull() && !https.IsUnknown() && !https.ValueBool() {
			resp.Diagnostics.AddAttributeError(at, "Invalid transport attribute for WinRM over HTTP",
				fmt.Sprintf("%s concerns the WinRM HTTPS listener's certificate, but %s sets https = false. Remove https = false, or remove %s.", at, req.Path, name))
		}
		for _, other := range []string{"ca_certificate", "insecure", "tls_server_name"} {
			if !attrs[other].IsNull() {
				resp.Diagnostics.AddAttributeError(req.Path.AtName(other), "Conflicting certificate verification",
					fmt.Sprintf("%s does not apply with %s: the guest's certificate is pinned by its SHA-256, with no CA or name check. Remove %s.",
						req.Path.AtName(other), at, other))
			}
		}
	}
}

// httpsBootstrap reports whether transport asks the provider to create the
// guest's WinRM HTTPS listener.
// managementCIDRs are transport.management_cidrs (nil: the default).
func managementCIDRs(ctx context.Context, transport types.Object) []string {
	if transport.IsNull() || transport.IsUnknown() {
		return nil
	}
	var t transportModel
	if transport.As(ctx, &t, basetypes.ObjectAsOptions{}).HasError() || t.ManagementCIDRs.IsNull() || t.ManagementCIDRs.IsUnknown() {
		return nil
	}
	var out []string
	if t.ManagementCIDRs.ElementsAs(ctx, &out, false).HasError() {
		return nil
	}
	return out
}

func httpsBootstrap(ctx context.Context, transport types.Object) bool {
	if transport.IsNull() || transport.IsUnknown() {
		return false
	}
	var t transportModel
	if transport.As(ctx, &t, basetypes.ObjectAsOptions{}).HasError() {
		return false
	}
	return t.HTTPSBootstrap.ValueString() == string(remote.ProtocolVMTools)
}

// addCertificateError adds the diagnostic of a refused WinRM HTTPS
// certificate, or of a guest whose template carried an HTTPS listener, and
// reports whether err was one.
func addCertificateError(diags *diag.Diagnostics, summary string, err error, more string) bool {
	var pin *remote.CertificatePinError
	if errors.As(err, &pin) {
		diags.AddAttributeError(path.Root("transport").AtName("winrm_certificate_sha256"), summary+": WinRM HTTPS certificate mismatch", fmt.Sprintf(
			"The guest at %s presented a WinRM HTTPS certificate with SHA-256 %s (%s), but the certificate pinned in transport.winrm_certificate_sha256 "+
				"is %s. This is what a man-in-the-middle attack looks like, and the connection was refused.\n\n%s%s\n\n%s",
			pin.Address, pin.Got, pin.Subject, pin.Want, fixCertificate, more, err.Error()))
		return true
	}
	if err != nil && strings.Contains(err.Error(), bootstrap.SharedCertificateMarker) {
		diags.AddAttributeError(path.Root("transport").AtName("https_bootstrap"), summary+": the template has a WinRM HTTPS certificate", fmt.Sprintf(
			"https_bootstrap creates the guest's own HTTPS listener, but the guest already had one when it was cloned: a certificate made on the "+
				"template (a shared template certificate), whose private key every clone and every copy of the template holds, so it proves "+
				"nothing about which machine answers. The provider did not pin it.\n\nFix: remove the HTTPS listener and its certificate from the "+
				"template (the commands are in the step's output below), or clone the nodes from a template without one (a stock Windows Server, "+
				"or a windows_golden_image built from one).%s\n\n%s", more, err.Error()))
		return true
	}
	return false
}
