package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// Protocol drives the provider through the plugin protocol (tfprotov6), the
// calls a CLI makes, for features the CLIs on this machine lack: import by
// identity (Terraform 1.12 and later) and list resources (`terraform query`,
// 1.14 and later); Terraform 1.11 and OpenTofu 1.12 send neither. The
// provider is configured as a configuration without a provider block would
// configure it: from the environment, which Main points at the sandbox.
type Protocol struct {
	t          *testing.T
	Server     tfprotov6.ProviderServer
	Schemas    *tfprotov6.GetProviderSchemaResponse
	Identities *tfprotov6.GetResourceIdentitySchemasResponse
}

// NewProtocol serves a fresh provider and configures it.
func NewProtocol(t *testing.T) *Protocol {
	t.Helper()
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(provider.New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	p := &Protocol{t: t, Server: server}
	if p.Schemas, err = server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	p.mustSucceed("GetProviderSchema", p.Schemas.Diagnostics)
	if p.Identities, err = server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{}); err != nil {
		t.Fatal(err)
	}
	p.mustSucceed("GetResourceIdentitySchemas", p.Identities.Diagnostics)
	config := p.dynamic(p.Schemas.Provider.ValueType(), emptyBlock(p.Schemas.Provider.Block))
	resp, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.14.0", Config: config})
	if err != nil {
		t.Fatal(err)
	}
	p.mustSucceed("ConfigureProvider", resp.Diagnostics)
	return p
}

// Imported is a resource as ImportResourceState and the ReadResource that
// follows it (as the CLI runs them) return it.
type Imported struct {
	State, Identity tftypes.Value
	Private         []byte
	Diagnostics     []*tfprotov6.Diagnostic
}

// Import imports a resource by its import ID (identity nil) or by identity
// (id ""), then reads it, as `terraform plan` with an import block does.
// Diagnostics of either call are returned, not fatal.
func (p *Protocol) Import(typ, id string, identity map[string]tftypes.Value) Imported {
	p.t.Helper()
	ctx := context.Background()
	req := &tfprotov6.ImportResourceStateRequest{TypeName: typ, ID: id}
	if identity != nil {
		req.Identity = &tfprotov6.ResourceIdentityData{IdentityData: p.dynamic(p.IdentityType(typ), identity)}
	}
	resp, err := p.Server.ImportResourceState(ctx, req)
	if err != nil {
		p.t.Fatal(err)
	}
	if hasError(resp.Diagnostics) {
		return Imported{Diagnostics: resp.Diagnostics}
	}
	if len(resp.ImportedResources) != 1 {
		p.t.Fatalf("ImportResourceState %s returned %d resources, want 1", typ, len(resp.ImportedResources))
	}
	imp := resp.ImportedResources[0]
	out := Imported{State: p.value(p.ResourceType(typ), imp.State), Private: imp.Private, Diagnostics: resp.Diagnostics}
	if imp.Identity != nil {
		out.Identity = p.value(p.IdentityType(typ), imp.Identity.IdentityData)
	}
	read := p.Read(typ, out.State, out.Private, &out.Identity)
	read.Diagnostics = append(out.Diagnostics, read.Diagnostics...)
	return read
}

// Read refreshes a resource. identity nil is a CLI older than Terraform 1.12,
// which sends none.
func (p *Protocol) Read(typ string, state tftypes.Value, private []byte, identity *tftypes.Value) Imported {
	p.t.Helper()
	req := &tfprotov6.ReadResourceRequest{TypeName: typ, CurrentState: p.dynamic(p.ResourceType(typ), state), Private: private}
	if identity != nil {
		req.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: p.dynamic(p.IdentityType(typ), *identity)}
	}
	resp, err := p.Server.ReadResource(context.Background(), req)
	if err != nil {
		p.t.Fatal(err)
	}
	out := Imported{Private: resp.Private, Diagnostics: resp.Diagnostics}
	if hasError(resp.Diagnostics) {
		return out
	}
	out.State = p.value(p.ResourceType(typ), resp.NewState)
	if resp.NewIdentity != nil {
		out.Identity = p.value(p.IdentityType(typ), resp.NewIdentity.IdentityData)
	}
	return out
}

// ListResult is one result of ListResource.
type ListResult struct {
	DisplayName        string
	Identity, Resource tftypes.Value
	Diagnostics        []*tfprotov6.Diagnostic
}

// List runs a list resource as `terraform query` does, with the given list
// block config (attributes not given are null).
func (p *Protocol) List(typ string, config map[string]tftypes.Value, includeResource bool, limit int64) []ListResult {
	p.t.Helper()
	schema, ok := p.Schemas.ListResourceSchemas[typ]
	if !ok {
		p.t.Fatalf("no list resource %s", typ)
	}
	values := emptyBlock(schema.Block)
	for k, v := range config {
		values[k] = v
	}
	lister, ok := p.Server.(tfprotov6.ListResourceServer)
	if !ok {
		p.t.Fatalf("the provider server does not serve list resources")
	}
	vr, err := lister.ValidateListResourceConfig(context.Background(), &tfprotov6.ValidateListResourceConfigRequest{
		TypeName: typ, Config: p.dynamic(schema.ValueType(), values),
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if hasError(vr.Diagnostics) {
		return []ListResult{{Diagnostics: vr.Diagnostics}}
	}
	stream, err := lister.ListResource(context.Background(), &tfprotov6.ListResourceRequest{
		TypeName: typ, Config: p.dynamic(schema.ValueType(), values), IncludeResource: includeResource, Limit: limit,
	})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []ListResult
	for r := range stream.Results {
		res := ListResult{DisplayName: r.DisplayName, Diagnostics: r.Diagnostics}
		if r.Identity != nil {
			res.Identity = p.value(p.IdentityType(typ), r.Identity.IdentityData)
		}
		if r.Resource != nil {
			res.Resource = p.value(p.ResourceType(typ), r.Resource)
		}
		out = append(out, res)
	}
	return out
}

// ResourceType is the state type of a managed resource.
func (p *Protocol) ResourceType(typ string) tftypes.Type {
	s, ok := p.Schemas.ResourceSchemas[typ]
	if !ok {
		p.t.Fatalf("no resource %s", typ)
	}
	return s.ValueType()
}

// IdentityType is the identity type of a managed resource.
func (p *Protocol) IdentityType(typ string) tftypes.Type {
	s, ok := p.Identities.IdentitySchemas[typ]
	if !ok {
		p.t.Fatalf("resource %s has no identity schema", typ)
	}
	return s.ValueType()
}

// Object builds an object value of the given type from Go values (string,
// bool, []string; nil for null); attributes not given are null.
func Object(typ tftypes.Type, attrs map[string]any) map[string]tftypes.Value {
	obj := typ.(tftypes.Object)
	out := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		switch x := attrs[name].(type) {
		case nil:
			out[name] = tftypes.NewValue(at, nil)
		case []string:
			elems := make([]tftypes.Value, 0, len(x))
			for _, s := range x {
				elems = append(elems, tftypes.NewValue(tftypes.String, s))
			}
			out[name] = tftypes.NewValue(at, elems)
		default:
			out[name] = tftypes.NewValue(at, x)
		}
	}
	return out
}

// Attr returns a string, bool or number attribute of an object value as
// text ("" when null or absent).
func Attr(v tftypes.Value, name string) string {
	var attrs map[string]tftypes.Value
	if v.IsNull() || v.As(&attrs) != nil {
		return ""
	}
	a, ok := attrs[name]
	if !ok || !a.IsKnown() || a.IsNull() {
		return ""
	}
	var s string
	var b bool
	var n big.Float
	switch {
	case a.As(&s) == nil:
		return s
	case a.As(&b) == nil:
		return strconv.FormatBool(b)
	case a.As(&n) == nil:
		return n.String()
	}
	return ""
}

// Errors returns the error diagnostics as text ("" for none).
func Errors(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			fmt.Fprintf(&b, "%s: %s\n", d.Summary, d.Detail)
		}
	}
	return b.String()
}

func hasError(diags []*tfprotov6.Diagnostic) bool { return Errors(diags) != "" }

func (p *Protocol) mustSucceed(call string, diags []*tfprotov6.Diagnostic) {
	p.t.Helper()
	if e := Errors(diags); e != "" {
		p.t.Fatalf("%s: %s", call, e)
	}
}

func (p *Protocol) dynamic(typ tftypes.Type, v any) *tfprotov6.DynamicValue {
	p.t.Helper()
	val, ok := v.(tftypes.Value)
	if !ok {
		val = tftypes.NewValue(typ, v)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, val)
	if err != nil {
		p.t.Fatal(err)
	}
	return &dv
}

func (p *Protocol) value(typ tftypes.Type, dv *tfprotov6.DynamicValue) tftypes.Value {
	p.t.Helper()
	if dv == nil {
		return tftypes.NewValue(typ, nil)
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// emptyBlock is a block as a configuration that does not mention it sends
// it: attributes and single blocks null, repeated blocks empty.
func emptyBlock(b *tfprotov6.SchemaBlock) map[string]tftypes.Value {
	out := map[string]tftypes.Value{}
	for _, a := range b.Attributes {
		out[a.Name] = tftypes.NewValue(a.ValueType(), nil)
	}
	for _, nb := range b.BlockTypes {
		switch nb.Nesting {
		case tfprotov6.SchemaNestedBlockNestingModeList, tfprotov6.SchemaNestedBlockNestingModeSet:
			out[nb.TypeName] = tftypes.NewValue(nb.ValueType(), []tftypes.Value{})
		default:
			out[nb.TypeName] = tftypes.NewValue(nb.ValueType(), nil)
		}
	}
	return out
}

// SkipWithoutIdentityImport is a TestStep.SkipFunc for steps that import by
// identity (`import { identity = {...} }`) through the CLI under test: that
// needs Terraform 1.12 or later, or OpenTofu 1.12 or later (which added the
// import block's identity argument). Terraform 1.11 skips them; the
// protocol-level tests cover the provider's side for every CLI.
func SkipWithoutIdentityImport() (bool, error) {
	v, err := cliVersion()
	if err != nil {
		return false, err
	}
	return v.LessThan(version.Must(version.NewVersion("1.12.0"))), nil
}

// cliVersion is the version of the CLI the acceptance tests drive, as it
// reports it (OpenTofu reports its own version under the same key).
func cliVersion() (*version.Version, error) {
	out, err := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), "version", "-json").Output()
	if err != nil {
		return nil, fmt.Errorf("asking the CLI its version: %w", err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("reading the CLI's version: %w", err)
	}
	return version.NewVersion(v.Version)
}

// RequiredProviders is the terraform block the test framework adds to a
// step's configuration, for a step it does not add it to: an import step by
// identity with a Config of its own is run as written, and without the block
// OpenTofu resolves "windows" to registry.opentofu.org/hashicorp/windows
// instead of the provider the test process serves (terraform-plugin-testing
// v1.16 testing_new_import_state.go skips mergedConfig there).
func RequiredProviders() string {
	ns := os.Getenv("TF_ACC_PROVIDER_NAMESPACE")
	if ns == "" {
		ns = "hashicorp"
	}
	return fmt.Sprintf("terraform {\n  required_providers {\n    windows = {\n      source = %q\n    }\n  }\n}\n\n", "registry.terraform.io/"+ns+"/windows")
}
