package provider_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// TestIdentitySchemas: every managed resource has an identity (import by
// identity, Terraform 1.12+), with the attributes an import needs marked
// required, and windows_node has a list resource (terraform query,
// Terraform 1.14+) — asked of the provider server as a CLI asks.
func TestIdentitySchemas(t *testing.T) {
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(provider.New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if e := acctest.Errors(schemas.Diagnostics); e != "" {
		t.Fatal(e)
	}
	ids, err := server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if e := acctest.Errors(ids.Diagnostics); e != "" {
		t.Fatal(e)
	}
	want := map[string]struct{ required, optional []string }{
		"windows_runtime_class":         {required: []string{"name"}},
		"windows_gmsa_credential_spec":  {required: []string{"name"}},
		"windows_node":                  {required: []string{"instance_uuid"}},
		"windows_node_pool":             {required: []string{"name_prefix"}},
		"windows_golden_image":          {required: []string{"id"}},
		"windows_node_networking":       {required: []string{"namespace"}},
		"windows_linux_daemonset_guard": {required: []string{"namespace"}, optional: []string{"names"}},
	}
	for typ := range schemas.ResourceSchemas {
		if _, ok := want[typ]; !ok {
			t.Errorf("resource %s: no expectation for its identity; add it here", typ)
		}
	}
	for typ, w := range want {
		s, ok := ids.IdentitySchemas[typ]
		if !ok {
			t.Errorf("%s has no identity schema", typ)
			continue
		}
		var required, optional []string
		for _, a := range s.IdentityAttributes {
			if a.RequiredForImport {
				required = append(required, a.Name)
			}
			if a.OptionalForImport {
				optional = append(optional, a.Name)
			}
			if a.Description == "" {
				t.Errorf("%s identity attribute %s has no description", typ, a.Name)
			}
		}
		slices.Sort(required)
		slices.Sort(optional)
		if !slices.Equal(required, w.required) || !slices.Equal(optional, w.optional) {
			t.Errorf("%s identity: required %v optional %v, want %v and %v", typ, required, optional, w.required, w.optional)
		}
	}

	list, ok := schemas.ListResourceSchemas["windows_node"]
	if !ok {
		t.Fatalf("no list resource windows_node; list resources: %v", keys(schemas.ListResourceSchemas))
	}
	if len(schemas.ListResourceSchemas) != 1 {
		t.Errorf("list resources %v, want only windows_node", keys(schemas.ListResourceSchemas))
	}
	var attrs []string
	for _, a := range list.Block.Attributes {
		attrs = append(attrs, a.Name)
		if !a.Optional {
			t.Errorf("list config attribute %s is not optional: a bare list block must list every node", a.Name)
		}
	}
	slices.Sort(attrs)
	if want := []string{"folder", "include_unjoined", "name_prefix"}; !slices.Equal(attrs, want) {
		t.Errorf("list config attributes %v, want %v", attrs, want)
	}
	meta, err := server.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.ListResources) != 1 || meta.ListResources[0].TypeName != "windows_node" {
		t.Errorf("GetMetadata list resources %+v, want windows_node", meta.ListResources)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
