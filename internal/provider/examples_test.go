package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/zclconf/go-cty/cty"

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
			// A snippet that says it leaves arguments out ("# ..." in the
			// block: the docs show the part they explain) is checked for
			// what it sets only.
			if r := block.Body.SrcRange; src.snippet && strings.Contains(string(src.text[r.Start.Byte:r.End.Byte]), "# ...") {
				continue
			}
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
	line    int    // of a snippet: its first line in the Markdown file
	code    string // of a snippet: its text, without the fence's indentation
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
		indent := lines[i][:strings.Index(lines[i], "```")]
		var code []string
		for _, l := range lines[start:end] {
			code = append(code, strings.TrimPrefix(l, indent))
		}
		text := strings.Join(code, "\n") + "\n"
		// Blank lines before the snippet keep the Markdown file's line numbers.
		out = append(out, exampleSource{name: name, text: []byte(strings.Repeat("\n", start) + text), snippet: true,
			line: start + 1, code: text})
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
		// A map of objects: its keys are the user's, its values' keys the
		// schema's.
		objects := []*hclsyntax.ObjectConsExpr{obj}
		if sa.NestedType.Nesting == tfprotov6.SchemaObjectNestingModeMap {
			objects = nil
			for _, item := range obj.Items {
				if o, ok := item.ValueExpr.(*hclsyntax.ObjectConsExpr); ok {
					objects = append(objects, o)
				}
			}
		}
		nested := map[string]bool{}
		for _, na := range sa.NestedType.Attributes {
			nested[na.Name] = true
		}
		for _, o := range objects {
			for _, item := range o.Items {
				key, diags := item.KeyExpr.Value(nil)
				if diags.HasErrors() || !key.IsKnown() || key.IsNull() {
					continue
				}
				if k := key.AsString(); !nested[k] {
					t.Errorf("%s:%d: %s.%s has no attribute %q", file, item.KeyExpr.Range().Start.Line, typ, name, k)
				}
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

// terraformCLI is the CLI the acceptance tests use (TF_ACC_TERRAFORM_PATH),
// else terraform or tofu from PATH.
func terraformCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no terraform or tofu on PATH and no TF_ACC_TERRAFORM_PATH: make testacc sets it")
	return ""
}

// cliEnv is the environment of the CLI: no checkpoint calls, an empty CLI
// configuration (a missing one makes every command warn), no plugin cache.
func cliEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	rc := filepath.Join(t.TempDir(), "terraformrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k == "TF_CLI_CONFIG_FILE" || k == "TF_PLUGIN_CACHE_DIR" || k == "TF_REATTACH_PROVIDERS" ||
			strings.HasPrefix(k, "TF_LOG") {
			continue
		}
		env = append(env, e)
	}
	return append(append(env, "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1"), extra...)
}

// TestExamplesFormatted runs `terraform fmt -check` over examples/ and over
// every HCL snippet of README.md and templates/: what a user copies is what
// `terraform fmt` would write.
func TestExamplesFormatted(t *testing.T) {
	cli := terraformCLI(t)
	env := cliEnv(t)
	cmd := exec.Command(cli, "fmt", "-check", "-recursive", "-diff", "-no-color", filepath.Join("..", "..", "examples"))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("terraform fmt -check examples: %v\n%s", err, out)
	}
	n := 0
	for _, src := range exampleSources(t) {
		if !src.snippet {
			continue
		}
		n++
		cmd := exec.Command(cli, "fmt", "-no-color", "-")
		cmd.Env = env
		cmd.Stdin = strings.NewReader(src.code)
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%s:%d: terraform fmt: %v", src.name, src.line, err)
			continue
		}
		if string(out) != src.code {
			t.Errorf("%s:%d: the snippet is not as terraform fmt writes it:\n%s", src.name, src.line, out)
		}
	}
	if n < 2 {
		t.Fatalf("formatted %d snippets", n)
	}
}

// TestExamplesValidate runs `terraform init` and `terraform validate` on
// every example that uses this provider only and is complete in itself
// (every variable, resource and data source it references declared): each
// file alone, each directory whole, and each import example with the
// resource.tf next to it. The provider is served in-process, as the
// acceptance tests serve it, so no build or registry is needed. Import by
// identity needs Terraform 1.12+ (or OpenTofu): with an older CLI those are
// left out, and the test says so. The rest (with vmware/vsphere or
// hashicorp/kubernetes blocks, or fragments referencing objects declared in
// another example) are checked by TestExamplesMatchTheSchema only.
func TestExamplesValidate(t *testing.T) {
	cli := terraformCLI(t)
	identity := cliHasImportByIdentity(t, cli)
	units := exampleUnits(t)
	validated := map[string]bool{}
	for _, u := range units {
		why := u.skip()
		if why == "" && u.identityImport && !identity {
			why = "import by identity: this CLI is older than Terraform 1.12"
		}
		if why != "" {
			t.Logf("not validated: %s: %s", u.name, why)
			continue
		}
		validated[u.name] = true
		t.Run(u.name, func(t *testing.T) { validateUnit(t, cli, u) })
	}
	t.Logf("validated %d examples", len(validated))
	for _, must := range []string{"examples/quickstart", "examples/provider/provider.tf", "examples/data-sources/windows_cluster/data-source.tf",
		"examples/resources/windows_runtime_class/resource.tf", "examples/resources/windows_runtime_class/import-by-string-id.tf+resource.tf"} {
		if !validated[must] {
			t.Errorf("%s was not validated: it should be complete and use this provider only", must)
		}
	}
}

// exampleUnit is a set of example files validated together.
type exampleUnit struct {
	name           string
	dir            string   // the files' directory: its other files (manifests) are copied too
	files          []string // .tf files
	body           []*hclsyntax.Body
	identityImport bool
}

func exampleUnits(t *testing.T) []exampleUnit {
	t.Helper()
	byDir := map[string][]string{}
	root := filepath.Join("..", "..")
	if err := filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var units []exampleUnit
	add := func(name, dir string, files ...string) {
		u := exampleUnit{name: name, dir: dir, files: files}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			hf, diags := hclparse.NewParser().ParseHCL(b, f)
			if diags.HasErrors() {
				t.Fatalf("%s: %s", f, diags.Error())
			}
			u.body = append(u.body, hf.Body.(*hclsyntax.Body))
			if strings.Contains(filepath.Base(f), "identity") {
				u.identityImport = true
			}
		}
		units = append(units, u)
	}
	dirs := slices.Sorted(maps.Keys(byDir))
	for _, dir := range dirs {
		files := byDir[dir]
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		for _, f := range files {
			add(rel+"/"+filepath.Base(f), dir, f)
		}
		// The directory as one unit, without the import examples: each
		// imports the same address another way (the docs show them as
		// alternatives), so together they are duplicate imports. Each is
		// validated with resource.tf below.
		var whole []string
		for _, f := range files {
			if !strings.HasPrefix(filepath.Base(f), "import-") {
				whole = append(whole, f)
			}
		}
		if len(whole) > 1 {
			add(rel, dir, whole...)
		}
		resource := filepath.Join(dir, "resource.tf")
		if slices.Contains(files, resource) {
			for _, f := range files {
				if strings.HasPrefix(filepath.Base(f), "import-") {
					add(rel+"/"+filepath.Base(f)+"+resource.tf", dir, f, resource)
				}
			}
		}
	}
	return units
}

// skip says why u cannot be validated here, or "".
func (u exampleUnit) skip() string {
	declared := map[string]bool{}
	addresses := map[string]bool{}
	var refs []string
	for _, body := range u.body {
		for _, b := range body.Blocks {
			var addr string
			switch b.Type {
			case "resource", "data", "ephemeral":
				if !strings.HasPrefix(b.Labels[0], "windows_") {
					return "uses " + b.Labels[0] + ", of another provider"
				}
				addr = strings.Join(b.Labels, ".")
				if b.Type != "resource" {
					addr = b.Type + "." + addr
				}
				// A provider configuration by alias must be declared too.
				if p, ok := b.Body.Attributes["provider"]; ok {
					if tr, diags := hcl.AbsTraversalForExpr(p.Expr); !diags.HasErrors() && len(tr) == 2 {
						if alias, ok := tr[1].(hcl.TraverseAttr); ok {
							refs = append(refs, "provider."+tr.RootName()+"."+alias.Name)
						}
					}
				}
			case "variable":
				addr = "var." + b.Labels[0]
			case "output":
				addr = "output." + b.Labels[0]
			case "module":
				return "calls a module"
			case "provider":
				if b.Labels[0] != "windows" {
					return "configures the provider " + b.Labels[0]
				}
				addr = "provider." + b.Labels[0]
				// A configuration of its own for what a cluster installs
				// once (an administrator's identity) is another address.
				if alias, ok := b.Body.Attributes["alias"]; ok {
					if v, diags := alias.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
						addr += "." + v.AsString()
					}
				}
			case "locals":
				for name := range b.Body.Attributes {
					declared["local."+name] = true
				}
			case "terraform":
				for _, rp := range b.Body.Blocks {
					if rp.Type == "required_providers" && len(rp.Body.Attributes) != 1 {
						return "requires other providers"
					}
				}
			}
			if addr != "" {
				if addresses[addr] {
					return addr + " is declared twice (alternatives of one another)"
				}
				addresses[addr] = true
				declared[addr] = true
			}
		}
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			if e, ok := n.(hclsyntax.Expression); ok {
				for _, tr := range e.Variables() {
					if r := referencedObject(tr); r != "" {
						refs = append(refs, r)
					}
				}
			}
			return nil
		})
	}
	for _, r := range refs {
		if !declared[r] {
			return "references " + r + ", declared in no file of it"
		}
	}
	return ""
}

// referencedObject is the object a traversal names (var.x, local.x,
// data.t.n, t.n), or "" for count, each, self, path and the like.
func referencedObject(tr hcl.Traversal) string {
	var names []string
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			names = append(names, s.Name)
		case hcl.TraverseAttr:
			names = append(names, s.Name)
		}
		if len(names) == 3 {
			break
		}
	}
	switch {
	case len(names) >= 2 && (names[0] == "var" || names[0] == "local"):
		return names[0] + "." + names[1]
	case len(names) >= 3 && names[0] == "data":
		return strings.Join(names[:3], ".")
	case len(names) >= 2 && strings.Contains(names[0], "_"):
		return names[0] + "." + names[1]
	}
	return ""
}

func cliHasImportByIdentity(t *testing.T, cli string) bool {
	t.Helper()
	if strings.Contains(filepath.Base(cli), "tofu") {
		return true // OpenTofu 1.12, which make builds, has it
	}
	cmd := exec.Command(cli, "version", "-json")
	cmd.Env = cliEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", cli, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s version -json: %v", cli, err)
	}
	ver, err := version.NewVersion(v.Version)
	if err != nil {
		t.Fatalf("%s version: %v", cli, err)
	}
	return ver.GreaterThanOrEqual(version.Must(version.NewVersion("1.12.0")))
}

func validateUnit(t *testing.T, cli string, u exampleUnit) {
	dir := t.TempDir()
	entries, err := os.ReadDir(u.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // manifests and other files the example reads
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".tf") {
			copyFile(t, filepath.Join(u.dir, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	for _, f := range u.files {
		copyFile(t, f, filepath.Join(dir, filepath.Base(f)))
	}
	reattach := serveProvider(t)
	env := cliEnv(t, "TF_REATTACH_PROVIDERS="+reattach)
	run := func(args ...string) []byte {
		cmd := exec.Command(cli, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "validate" {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(cli), strings.Join(args, " "), err, out)
		}
		return out
	}
	run("init", "-input=false", "-backend=false", "-no-color")
	out := run("validate", "-json", "-no-color")
	var res struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Detail   string `json:"detail"`
			Range    *struct {
				Filename string `json:"filename"`
				Start    struct {
					Line int `json:"line"`
				} `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("validate -json: %v\n%s", err, out)
	}
	for _, d := range res.Diagnostics {
		where := u.name
		if d.Range != nil {
			where = fmt.Sprintf("%s:%d", d.Range.Filename, d.Range.Start.Line)
		}
		t.Errorf("%s: %s: %s: %s", where, d.Severity, d.Summary, d.Detail) // warnings too: a user sees them
	}
	if !res.Valid && len(res.Diagnostics) == 0 {
		t.Errorf("%s: invalid, without a diagnostic\n%s", u.name, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveProvider serves the provider in this process as Terraform's reattach
// mode expects, until the test ends, and returns TF_REATTACH_PROVIDERS for
// the addresses the examples give it (implied hashicorp/windows, and
// wincluster/windows) under either CLI's registry host.
func serveProvider(t *testing.T) string {
	t.Helper()
	// The in-process provider logs to this process's stderr, at TRACE
	// unless told otherwise; Terraform is not there to filter it.
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		t.Setenv(v, "OFF")
	}
	ctx, cancel := context.WithCancel(context.Background())
	configs := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go func() {
		_ = tf6server.Serve("registry.terraform.io/wincluster/windows", providerserver.NewProtocol6(provider.New("test")()),
			tf6server.WithDebug(ctx, configs, closed), tf6server.WithGoPluginLogger(hclog.NewNullLogger()))
	}()
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-configs:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider did not start serving")
	}
	rc := tfexec.ReattachConfig{Protocol: string(cfg.Protocol), ProtocolVersion: cfg.ProtocolVersion, Pid: cfg.Pid, Test: cfg.Test,
		Addr: tfexec.ReattachConfigAddr{Network: cfg.Addr.Network(), String: cfg.Addr.String()}}
	info := tfexec.ReattachInfo{}
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		for _, ns := range []string{"hashicorp", "wincluster"} {
			info[host+"/"+ns+"/windows"] = rc
		}
	}
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
