// Command docschema completes the provider schema that `terraform providers
// schema -json` wrote with what the CLIs used here leave out: resource
// identity schemas (Terraform 1.12 and later print them) and list resource
// schemas (1.14 and later). It asks the provider server itself, as those
// CLIs would, so that tfplugindocs documents identities and list resources
// whichever CLI ran `make docs`. What the CLI did print is kept as it is.
//
//	go run ./tools/docschema build/schema/schema.json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: docschema <schema.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "docschema:", err)
		os.Exit(1)
	}
}

func run(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var providers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(doc["provider_schemas"], &providers); err != nil || len(providers) != 1 {
		return fmt.Errorf("%s: expected the schema of one provider (err %v)", file, err)
	}
	identities, lists, err := fromServer()
	if err != nil {
		return err
	}
	for name, p := range providers {
		if err := add(p, "resource_identity_schemas", identities); err != nil {
			return err
		}
		if err := add(p, "list_resource_schemas", lists); err != nil {
			return err
		}
		providers[name] = p
	}
	if doc["provider_schemas"], err = json.Marshal(providers); err != nil {
		return err
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

// add sets key unless the CLI printed it.
func add(p map[string]json.RawMessage, key string, v any) error {
	if _, ok := p[key]; ok {
		return nil
	}
	b, err := json.Marshal(v)
	p[key] = b
	return err
}

func fromServer() (map[string]*tfjson.IdentitySchema, map[string]*tfjson.Schema, error) {
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(provider.New("docs")())()
	if err != nil {
		return nil, nil, err
	}
	ids, err := server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		return nil, nil, err
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, nil, err
	}
	for _, d := range append(ids.Diagnostics, schemas.Diagnostics...) {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return nil, nil, fmt.Errorf("%s: %s", d.Summary, d.Detail)
		}
	}
	identities := map[string]*tfjson.IdentitySchema{}
	for typ, s := range ids.IdentitySchemas {
		js := &tfjson.IdentitySchema{Version: uint64(s.Version), Attributes: map[string]*tfjson.IdentityAttribute{}}
		for _, a := range s.IdentityAttributes {
			t, err := ctyType(a.Type)
			if err != nil {
				return nil, nil, fmt.Errorf("%s identity %s: %w", typ, a.Name, err)
			}
			js.Attributes[a.Name] = &tfjson.IdentityAttribute{IdentityType: t, Description: a.Description,
				RequiredForImport: a.RequiredForImport, OptionalForImport: a.OptionalForImport}
		}
		identities[typ] = js
	}
	lists := map[string]*tfjson.Schema{}
	for typ, s := range schemas.ListResourceSchemas {
		b, err := block(s.Block)
		if err != nil {
			return nil, nil, fmt.Errorf("list resource %s: %w", typ, err)
		}
		lists[typ] = &tfjson.Schema{Version: uint64(s.Version), Block: b}
	}
	return identities, lists, nil
}

// block converts a list block's schema: attributes of plain types, which is
// all list configurations here use.
func block(b *tfprotov6.SchemaBlock) (*tfjson.SchemaBlock, error) {
	out := &tfjson.SchemaBlock{Attributes: map[string]*tfjson.SchemaAttribute{},
		Description: b.Description, DescriptionKind: kind(b.DescriptionKind), Deprecated: b.Deprecated}
	if len(b.BlockTypes) > 0 {
		return nil, fmt.Errorf("nested blocks are not converted")
	}
	for _, a := range b.Attributes {
		if a.NestedType != nil {
			return nil, fmt.Errorf("attribute %s: nested attributes are not converted", a.Name)
		}
		t, err := ctyType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		out.Attributes[a.Name] = &tfjson.SchemaAttribute{AttributeType: t, Description: a.Description,
			DescriptionKind: kind(a.DescriptionKind), Deprecated: a.Deprecated, Required: a.Required,
			Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}
	}
	return out, nil
}

func kind(k tfprotov6.StringKind) tfjson.SchemaDescriptionKind {
	if k == tfprotov6.StringKindMarkdown {
		return tfjson.SchemaDescriptionKindMarkdown
	}
	return tfjson.SchemaDescriptionKindPlain
}

// ctyType converts through the JSON type notation both libraries share.
func ctyType(t tftypes.Type) (cty.Type, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return cty.NilType, err
	}
	return ctyjson.UnmarshalType(b)
}
