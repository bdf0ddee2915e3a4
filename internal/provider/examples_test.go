package provider_test

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// TestExamplesMatchTheSchema parses every example (examples/**/*.tf, the
// docs' snippets and the composed configurations with hashicorp/vsphere and
// hashicorp/kubernetes) with HCL's own parser and checks every windows_*
// resource and data source it declares, every attribute it sets (and the
// keys of nested attribute objects), and every windows_* attribute it
// references against this provider's schema. Other providers' blocks are
// parsed but not checked: their schemas are not available here (neither
// hashicorp/vsphere nor hashicorp/kubernetes can be downloaded or built on
// the machines that test this provider).
func TestExamplesMatchTheSchema(t *testing.T) {
	schemas := providerSchemas(t)
	var files []string
	root := filepath.Join("..", "..", "examples")
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found %d examples under %s", len(files), root)
	}
	parser := hclparse.NewParser()
	checked := 0
	for _, file := range files {
		f, diags := parser.ParseHCLFile(file)
		if diags.HasErrors() {
			t.Errorf("%s: %s", file, diags.Error())
			continue
		}
		body := f.Body.(*hclsyntax.Body)
		for _, block := range body.Blocks {
			var kind string
			switch block.Type {
			case "resource":
				kind = "resource"
			case "data":
				kind = "data source"
			default:
				continue
			}
			typ := block.Labels[0]
			if !strings.HasPrefix(typ, "windows_") {
				continue
			}
			s, ok := schemas[kind][typ]
			if !ok {
				t.Errorf("%s: %s %q is not in the provider", file, kind, typ)
				continue
			}
			checked++
			checkBody(t, file, typ, block.Body, s.Block)
		}
		// References to windows_* attributes anywhere in the file.
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			e, ok := n.(hclsyntax.Expression)
			if !ok {
				return nil
			}
			for _, tr := range e.Variables() {
				checkReference(t, file, tr, schemas)
			}
			return nil
		})
	}
	if checked == 0 {
		t.Fatal("no windows_* block found in the examples")
	}
}

var metaArguments = []string{"count", "for_each", "depends_on", "provider", "lifecycle", "provisioner", "connection"}

func checkBody(t *testing.T, file, typ string, body *hclsyntax.Body, schema *tfprotov6.SchemaBlock) {
	t.Helper()
	attrs := map[string]*tfprotov6.SchemaAttribute{}
	for _, a := range schema.Attributes {
		attrs[a.Name] = a
	}
	for name, a := range body.Attributes {
		if slices.Contains(metaArguments, name) {
			continue
		}
		sa, ok := attrs[name]
		if !ok {
			t.Errorf("%s:%d: %s has no attribute %q", file, a.SrcRange.Start.Line, typ, name)
			continue
		}
		if sa.Computed && !sa.Optional && !sa.Required {
			t.Errorf("%s:%d: %s.%s is read-only", file, a.SrcRange.Start.Line, typ, name)
		}
		obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
		if !ok || sa.NestedType == nil {
			continue
		}
		nested := map[string]bool{}
		for _, na := range sa.NestedType.Attributes {
			nested[na.Name] = true
		}
		for _, item := range obj.Items {
			key, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() || !key.IsKnown() || key.IsNull() {
				continue
			}
			if k := key.AsString(); !nested[k] {
				t.Errorf("%s:%d: %s.%s has no attribute %q", file, item.KeyExpr.Range().Start.Line, typ, name, k)
			}
		}
	}
	for _, b := range body.Blocks {
		if !slices.Contains(metaArguments, b.Type) && b.Type != "timeouts" {
			t.Errorf("%s:%d: %s has no block %q", file, b.TypeRange.Start.Line, typ, b.Type)
		}
	}
}

// checkReference checks windows_<type>.<name>.<attr> and
// data.windows_<type>.<name>.<attr>.
func checkReference(t *testing.T, file string, tr hcl.Traversal, schemas map[string]map[string]*tfprotov6.Schema) {
	t.Helper()
	kind, steps := "resource", []string{tr.RootName()}
	for _, s := range tr[1:] {
		switch s := s.(type) {
		case hcl.TraverseAttr:
			steps = append(steps, s.Name)
		case hcl.TraverseIndex, hcl.TraverseSplat:
			// count.index, [*]: the attribute follows
		default:
			return
		}
	}
	if steps[0] == "data" {
		kind, steps = "data source", steps[1:]
	}
	if len(steps) < 3 || !strings.HasPrefix(steps[0], "windows_") {
		return
	}
	s, ok := schemas[kind][steps[0]]
	if !ok {
		t.Errorf("%s:%d: reference to %s %q, which the provider does not have", file, tr.SourceRange().Start.Line, kind, steps[0])
		return
	}
	for _, a := range s.Block.Attributes {
		if a.Name == steps[2] {
			return
		}
	}
	t.Errorf("%s:%d: reference to %s.%s, which %s does not have", file, tr.SourceRange().Start.Line, steps[0], steps[2], steps[0])
}

func providerSchemas(t *testing.T) map[string]map[string]*tfprotov6.Schema {
	t.Helper()
	srv := providerserver.NewProtocol6(provider.New("test")())()
	res, err := srv.GetProviderSchema(t.Context(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Fatalf("provider schema: %s: %s", d.Summary, d.Detail)
	}
	return map[string]map[string]*tfprotov6.Schema{"resource": res.ResourceSchemas, "data source": res.DataSourceSchemas}
}
