package resources

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

func TestTransportConfig(t *testing.T) {
	ctx := context.Background()
	cfg, diags := transportConfig(ctx, types.ObjectNull(transportAttrTypes), "Administrator", "pw", "")
	if diags.HasError() || cfg.Protocol != remote.ProtocolVMTools || cfg.User != "Administrator" ||
		cfg.Password != "pw" || cfg.PrivateKeyPEM != nil || cfg.HostKeys != nil {
		t.Errorf("no transport: %+v, %v; want vmtools, the default", cfg, diags)
	}
	attrs := nullTransportAttrs()
	attrs["type"] = types.StringValue("winrm")
	cfg, diags = transportConfig(ctx, types.ObjectValueMust(transportAttrTypes, attrs), "Administrator", "pw", "")
	if diags.HasError() || cfg.Protocol != remote.ProtocolWinRM || !cfg.HTTPS || !cfg.NTLM || cfg.Insecure {
		t.Errorf("winrm: %+v, %v; want WinRM over HTTPS with NTLM", cfg, diags)
	}
	attrs["type"] = types.StringValue("ssh")
	ssh := types.ObjectValueMust(transportAttrTypes, attrs)
	cfg, diags = transportConfig(ctx, ssh, "Administrator", "pw", "PEM")
	if diags.HasError() || cfg.Protocol != remote.ProtocolSSH || string(cfg.PrivateKeyPEM) != "PEM" || cfg.HostKeys == nil {
		t.Errorf("ssh without a host key: %+v, %v; want the write-only key and trust on first use", cfg, diags)
	}
	attrs["ssh_host_key"] = types.StringValue("ssh-ed25519 AAAA")
	cfg, _ = transportConfig(ctx, types.ObjectValueMust(transportAttrTypes, attrs), "Administrator", "pw", "")
	if cfg.HostKey != "ssh-ed25519 AAAA" || cfg.HostKeys != nil || cfg.PrivateKeyPEM != nil {
		t.Errorf("ssh with a pinned host key: %+v", cfg)
	}
}

// Basic over HTTP is refused at plan; NTLM over HTTP, Basic over HTTPS, SSH
// and values not known until apply are not.
func TestPlainHTTPValidator(t *testing.T) {
	obj := func(typ string, https, ntlm attr.Value) types.Object {
		attrs := nullTransportAttrs()
		if typ != "" {
			attrs["type"] = types.StringValue(typ)
		}
		attrs["https"], attrs["use_ntlm"] = https, ntlm
		return types.ObjectValueMust(transportAttrTypes, attrs)
	}
	f, tr, null, unknown := types.BoolValue(false), types.BoolValue(true), types.BoolNull(), types.BoolUnknown()
	for _, tc := range []struct {
		name   string
		value  types.Object
		refuse bool
	}{
		{"basic-http-winrm", obj("winrm", f, f), true},
		{"ntlm-http", obj("winrm", f, tr), false},
		{"ntlm-http-default", obj("winrm", f, null), false},
		{"basic-https", obj("winrm", tr, f), false},
		{"basic-https-default", obj("winrm", null, f), false},
		{"ssh", obj("ssh", f, f), false},
		{"default-type", obj("", f, f), false}, // vmtools: vmtoolsTransportValidator refuses both
		{"unknown", obj("winrm", f, unknown), false},
		{"null", types.ObjectNull(transportAttrTypes), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := validator.ObjectRequest{Path: path.Root("transport"), ConfigValue: tc.value}
			var resp validator.ObjectResponse
			plainHTTPValidator{}.ValidateObject(context.Background(), req, &resp)
			if resp.Diagnostics.HasError() != tc.refuse {
				t.Fatalf("refused %v, want %v: %v", resp.Diagnostics.HasError(), tc.refuse, resp.Diagnostics)
			}
			if tc.refuse {
				d := resp.Diagnostics.Errors()[0]
				if !strings.Contains(d.Detail(), "clear text") || !strings.Contains(d.Detail(), "Basic = false") {
					t.Fatalf("detail lacks the reason: %s", d.Detail())
				}
			}
		})
	}
}

// TestVMToolsTransportValidator: with type = "vmtools" every attribute of
// the network transports is an error naming it; without them, none.
func TestVMToolsTransportValidator(t *testing.T) {
	nullAttrs := nullTransportAttrs
	validate := func(attrs map[string]attr.Value) []string {
		req := validator.ObjectRequest{Path: path.Root("transport"), ConfigValue: types.ObjectValueMust(transportAttrTypes, attrs)}
		var resp validator.ObjectResponse
		vmtoolsTransportValidator{}.ValidateObject(context.Background(), req, &resp)
		var paths []string
		for _, d := range resp.Diagnostics.Errors() {
			if wp, ok := d.(diag.DiagnosticWithPath); ok {
				paths = append(paths, wp.Path().String())
			}
		}
		return paths
	}
	attrs := nullAttrs()
	attrs["type"] = types.StringValue("vmtools")
	if got := validate(attrs); len(got) != 0 {
		t.Errorf("vmtools alone: errors at %v", got)
	}
	set := map[string]attr.Value{
		"port": types.Int64Value(5986), "https": types.BoolValue(true), "use_ntlm": types.BoolValue(true),
		"insecure": types.BoolValue(false), "ca_certificate": types.StringValue("PEM"), "tls_server_name": types.StringValue("n"),
		"ssh_private_key_wo": types.StringValue("KEY"), "ssh_host_key": types.StringValue("ssh-ed25519 AAAA"),
	}
	for name, v := range set {
		a := maps.Clone(attrs)
		a[name] = v
		if got := validate(a); len(got) != 1 || got[0] != "transport."+name {
			t.Errorf("vmtools with %s: errors at %v, want transport.%s", name, got, name)
		}
		a["type"] = types.StringNull() // the default is vmtools
		if got := validate(a); len(got) != 1 || got[0] != "transport."+name {
			t.Errorf("the default type with %s: errors at %v, want transport.%s", name, got, name)
		}
		a["type"] = types.StringValue("winrm")
		if got := validate(a); len(got) != 0 {
			t.Errorf("winrm with %s: errors at %v", name, got)
		}
	}
	// vmtools builds a vmtools remote.Config.
	cfg, diags := transportConfig(context.Background(), types.ObjectValueMust(transportAttrTypes, attrs), "Administrator", "pw", "")
	if diags.HasError() || cfg.Protocol != remote.ProtocolVMTools || cfg.HostKeys != nil {
		t.Errorf("vmtools: %+v, %v", cfg, diags)
	}
}

// nullTransportAttrs is a transport whose every attribute is null.
func nullTransportAttrs() map[string]attr.Value {
	attrs := map[string]attr.Value{}
	for name, typ := range transportAttrTypes {
		switch typ := typ.(type) {
		case types.ListType:
			attrs[name] = types.ListNull(typ.ElemType)
		default:
			switch typ {
			case types.Int64Type:
				attrs[name] = types.Int64Null()
			case types.BoolType:
				attrs[name] = types.BoolNull()
			default:
				attrs[name] = types.StringNull()
			}
		}
	}
	return attrs
}

// TestManagementCIDRs: management_cidrs scopes the listener the provider
// creates, so it is refused at plan with a network transport that has
// none (a template's listener), and by vmtools, which needs no 5986.
func TestManagementCIDRs(t *testing.T) {
	cidrs := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("10.0.5.0/24")})
	validate := func(v validator.Object, attrs map[string]attr.Value) []string {
		req := validator.ObjectRequest{Path: path.Root("transport"), ConfigValue: types.ObjectValueMust(transportAttrTypes, attrs)}
		var resp validator.ObjectResponse
		v.ValidateObject(context.Background(), req, &resp)
		var paths []string
		for _, d := range resp.Diagnostics.Errors() {
			if wp, ok := d.(diag.DiagnosticWithPath); ok {
				paths = append(paths, wp.Path().String())
			}
		}
		return paths
	}
	attrs := nullTransportAttrs()
	attrs["type"], attrs["management_cidrs"] = types.StringValue("winrm"), cidrs
	if got := validate(httpsTrustValidator{}, attrs); len(got) != 1 || got[0] != "transport.management_cidrs" {
		t.Errorf("winrm without https_bootstrap: errors at %v, want transport.management_cidrs", got)
	}
	attrs["https_bootstrap"] = types.StringValue("vmtools")
	if got := validate(httpsTrustValidator{}, attrs); len(got) != 0 {
		t.Errorf("winrm with https_bootstrap: errors at %v", got)
	}
	vm := nullTransportAttrs()
	vm["type"], vm["management_cidrs"] = types.StringValue("vmtools"), cidrs
	if got := validate(vmtoolsTransportValidator{}, vm); len(got) != 1 || got[0] != "transport.management_cidrs" {
		t.Errorf("vmtools: errors at %v, want transport.management_cidrs", got)
	}
	for value, ok := range map[string]bool{"10.0.5.0/24": true, "192.0.2.7": true, "fd00::/64": true, "any": false, "10.0.5.0/33": false, "": false} {
		var resp validator.StringResponse
		addressOrCIDRValidator{}.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("x"), ConfigValue: types.StringValue(value)}, &resp)
		if resp.Diagnostics.HasError() == ok {
			t.Errorf("%q: errors %v, want accepted %v", value, resp.Diagnostics, ok)
		}
	}
	if got := managementCIDRs(context.Background(), types.ObjectValueMust(transportAttrTypes, attrs)); len(got) != 1 || got[0] != "10.0.5.0/24" {
		t.Errorf("managementCIDRs = %v", got)
	}
}

// A node joined through VMware Tools lost its WinRM HTTP listener: a plan
// that reaches it over WinRM HTTP is refused naming transport; HTTPS, SSH,
// vmtools again and a node joined over WinRM are not. A pool never dials a
// joined member again, so the same change is a warning there, not an error.
func TestRefuseWinRMHTTPAfterVMTools(t *testing.T) {
	ctx := context.Background()
	obj := func(typ string, https attr.Value) types.Object {
		attrs := nullTransportAttrs()
		if typ != "" {
			attrs["type"] = types.StringValue(typ)
		}
		attrs["https"] = https
		return types.ObjectValueMust(transportAttrTypes, attrs)
	}
	f, null := types.BoolValue(false), types.BoolNull()
	vmtools, winrmHTTP := types.ObjectNull(transportAttrTypes), obj("winrm", f)
	for _, tc := range []struct {
		name        string
		state, plan types.Object
		wantRefusal bool
	}{
		{"default vmtools to WinRM HTTP", vmtools, winrmHTTP, true},
		{"explicit vmtools to WinRM HTTP", obj("vmtools", null), winrmHTTP, true},
		{"vmtools to WinRM HTTPS", vmtools, obj("winrm", null), false},
		{"vmtools to SSH", vmtools, obj("ssh", null), false},
		{"vmtools kept", vmtools, obj("vmtools", null), false},
		{"WinRM HTTP kept", winrmHTTP, winrmHTTP, false},
		{"unknown at plan", vmtools, types.ObjectUnknown(transportAttrTypes), false},
	} {
		var diags diag.Diagnostics
		refuseWinRMHTTPAfterVMTools(ctx, tc.state, tc.plan, &diags)
		if diags.HasError() != tc.wantRefusal {
			t.Errorf("%s: refused = %v (%v), want %v", tc.name, diags.HasError(), diags, tc.wantRefusal)
			continue
		}
		if tc.wantRefusal && !strings.Contains(diags[0].Detail(), "transport:") {
			t.Errorf("%s: the error does not name the attribute: %s", tc.name, diags[0].Detail())
		}
		var pool diag.Diagnostics
		warnPoolWinRMHTTPAfterVMTools(ctx, tc.state, tc.plan, &pool)
		if pool.HasError() || (pool.WarningsCount() == 1) != tc.wantRefusal || len(pool) > 1 {
			t.Errorf("%s: the pool's plan says %v, want one warning: %v", tc.name, pool, tc.wantRefusal)
			continue
		}
		if tc.wantRefusal && !strings.Contains(pool[0].Detail(), "transport:") || tc.wantRefusal && !strings.Contains(pool[0].Detail(), "5985") {
			t.Errorf("%s: the pool's warning does not name the attribute and the port: %s", tc.name, pool[0].Detail())
		}
	}
}
