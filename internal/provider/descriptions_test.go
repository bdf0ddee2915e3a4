package provider_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// maxDescription bounds the description at the top of a resource's,
// data source's or list resource's page (and in the Registry's front
// matter): one or two sentences. What the object does at length belongs in
// the "How it works" section of its template (templates/), after Example
// Usage, as Terraform's own providers' pages keep it.
const maxDescription = 400

// TestDescriptionsAreShort: every object's description is a sentence or two,
// so a page opens with what the object is and then its example.
func TestDescriptionsAreShort(t *testing.T) {
	ctx := context.Background()
	p := provider.New("test")()
	check := func(kind, name, description string) {
		t.Helper()
		if description == "" {
			t.Errorf("%s %s has no description", kind, name)
		}
		if len(description) > maxDescription {
			t.Errorf("%s %s: its description runs to %d characters (at most %d): keep one or two sentences and move "+
				"the rest to the \"How it works\" section of its template:\n%s", kind, name, len(description), maxDescription, description)
		}
	}
	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "windows"}, &meta)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		check("resource", meta.TypeName, s.Schema.MarkdownDescription)
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var meta datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "windows"}, &meta)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		check("data source", meta.TypeName, s.Schema.MarkdownDescription)
	}
	lister, ok := p.(interface {
		ListResources(context.Context) []func() list.ListResource
	})
	if !ok {
		t.Fatal("the provider has no list resources")
	}
	for _, newList := range lister.ListResources(ctx) {
		l := newList()
		var meta resource.MetadataResponse
		l.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "windows"}, &meta)
		var s list.ListResourceSchemaResponse
		l.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &s)
		check("list resource", meta.TypeName, s.Schema.MarkdownDescription)
	}
}
