package provider_test

import (
	"io/fs"
	"os"
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
// docs' snippets and the composed configurations with vmware/vsphere and
// hashicorp/kubernetes) and every HCL snippet of README.md and templates/
// with HCL's own parser and checks every windows_* resource and data source
// it declares against this provider's schema: every attribute it sets (and
// the keys of nested attribute objects) exists and is not read-only, every
// Required attribute and every required block is set (so an example applies
// as written), and every windows_* attribute it references exists. Other
// providers' blocks are parsed but not checked: their schemas are not
// available here (neither vmware/vsphere nor hashicorp/kubernetes can be
// downloaded or built on the machines that test this provider).
func TestExamplesMatchTheSchema(t *testing.T) {
	schemas := providerSchemas(t)
	sources := exampleSources(t)
	checked, snippets := 0, 0
	for _, src := range sources {
		// A parser of its own: a parser returns the file it parsed first
		// for every later snippet of the same Markdown file.
		f, diags := hclparse.NewParser().ParseHCL(src.text, src.name)
		if diags.HasErrors() {
			t.Errorf("%s: %s", src.name, diags.Error())
			continue
		}
		if src.snippet {
			snippets++
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
				t.Errorf("%s: %s %q is not in the provider", src.name, kind, typ)
				continue
			}
			checked++
			checkBody(t, src.name, typ, block.Body, s.Block)
			checkRequired(t, src.name, typ, block.Body, s.Block)
		}
		// References to windows_* attributes anywhere in the file.
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			e, ok := n.(hclsyntax.Expression)
			if !ok {
				return nil
			}
			for _, tr := range e.Variables() {
				checkReference(t, src.name, tr, schemas)
			}
			return nil
		})
	}
	if checked == 0 {
		t.Fatal("no windows_* block found in the examples")
	}
	if snippets < 2 {
		t.Fatalf("found %d HCL snippets in README.md and templates/: the extraction is broken", snippets)
	}
}

// exampleSource is one example file, or one fenced HCL snippet of a
// Markdown file (padded with blank lines, so that line numbers are the
// Markdown file's).
type exampleSource struct {
	name    string
	text    []byte
	snippet bool
}

func exampleSources(t *testing.T) []exampleSource {
	t.Helper()
	var sources []exampleSource
	root := filepath.Join("..", "..", "examples")
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sources = append(sources, exampleSource{name: p, text: b})
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(sources) < 20 {
		t.Fatalf("found %d examples under %s", len(sources), root)
	}
	markdown := []string{filepath.Join("..", "..", "README.md")}
	if err := filepath.WalkDir(filepath.Join("..", "..", "templates"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tmpl") {
			markdown = append(markdown, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range markdown {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, markdownSnippets(p, string(b))...)
	}
	return sources
}

// markdownSnippets returns the ```hcl and ```terraform blocks of a Markdown
// file.
func markdownSnippets(name, text string) []exampleSource {
	var out []exampleSource
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if fence != "```hcl" && fence != "```terraform" {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		// Blank lines before the snippet keep the Markdown file's line numbers.
		code := strings.Repeat("\n", start) + strings.Join(lines[start:end], "\n") + "\n"
		out = append(out, exampleSource{name: name, text: []byte(code), snippet: true})
		i = end
	}
	return out
}

// checkRequired fails for every Required attribute and every block with
// MinItems > 0 that body leaves out, and likewise inside nested attribute
// objects and nested blocks.
func checkRequired(t *testing.T, file, typ string, body *hclsyntax.Body, schema *tfprotov6.SchemaBlock) {
	t.Helper()
	for _, a := range schema.Attributes {
		set, ok := body.Attributes[a.Name]
		if a.Required && !ok {
			t.Errorf("%s:%d: %s leaves out the required argument %q", file, body.SrcRange.Start.Line, typ, a.Name)
			continue
		}
		if ok && a.NestedType != nil {
			checkRequiredNested(t, file, typ+"."+a.Name, set.Expr, a.NestedType)
		}
	}
	for _, b := range schema.BlockTypes {
		n := 0
		for _, nb := range body.Blocks {
			if nb.Type == b.TypeName {
				n++
				checkRequired(t, file, typ+"."+b.TypeName, nb.Body, b.Block)
			}
		}
		if b.MinItems > 0 && n < int(b.MinItems) {
			t.Errorf("%s:%d: %s has %d %q blocks, needs at least %d", file, body.SrcRange.Start.Line, typ, n, b.TypeName, b.MinItems)
		}
	}
}

// checkRequiredNested checks the objects of a nested attribute written as an
// object or a list/set of objects; values built otherwise (variables, for
// expressions) are left to Terraform.
func checkRequiredNested(t *testing.T, file, where string, expr hclsyntax.Expression, nested *tfprotov6.SchemaObject) {
	t.Helper()
	var objects []*hclsyntax.ObjectConsExpr
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		if nested.Nesting == tfprotov6.SchemaObjectNestingModeMap {
			for _, item := range e.Items {
				if o, ok := item.ValueExpr.(*hclsyntax.ObjectConsExpr); ok {
					objects = append(objects, o)
				}
			}
		} else {
			objects = append(objects, e)
		}
	case *hclsyntax.TupleConsExpr:
		for _, el := range e.Exprs {
			if o, ok := el.(*hclsyntax.ObjectConsExpr); ok {
				objects = append(objects, o)
			}
		}
	}
	for _, o := range objects {
		keys := map[string]bool{}
		for _, item := range o.Items {
			if key, diags := item.KeyExpr.Value(nil); !diags.HasErrors() && key.IsKnown() && !key.IsNull() {
				keys[key.AsString()] = true
			}
		}
		for _, a := range nested.Attributes {
			if a.Required && !keys[a.Name] {
				t.Errorf("%s:%d: %s leaves out the required argument %q", file, o.SrcRange.Start.Line, where, a.Name)
			}
		}
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
