package bootstrap

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wincluster/terraform-provider-windows/internal/imageref"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// hostileImageConfig puts v into every value of an image build that comes
// from the configuration: an additional executable's URL, destination,
// archive member and install path, a prepulled image (when it is one:
// imageref refuses anything else), the SSH key.
func hostileImageConfig(v string) ImageConfig {
	cfg := testImageConfig()
	a := Artifact{Name: "additional-9", URL: "https://example.com/" + v + ".tgz", SHA256: strings.Repeat("cd", 32),
		Path: `C:\k\` + v, ExtractTo: `C:\k\` + v + `-dir`, Member: "m" + v, InstallAs: `C:\k\` + v + `.exe`}
	if a.Validate() != nil {
		a.URL = "https://example.com/a.tgz" // a URL the plan refuses: the paths still carry v
	}
	cfg.Additional = append(cfg.Additional, a)
	img := "example.com/" + v + ":1"
	if imageref.Validate("prepull_images", img) != nil {
		img = "example.com/a:1" // an image the plan (and ImageSteps) refuses
	}
	cfg.PrepullImages = append(cfg.PrepullImages, img)
	cfg.SSHAuthorizedKey = "ssh-ed25519 AAAA " + v
	return cfg
}

// shape is a script's syntax tree with every string literal reduced to its
// kind: two scripts of one shape run the same statements and commands.
func shape(n *pwsh.Node, b *strings.Builder) {
	b.WriteString(n.Kind)
	if n.Kind == "string_literal" {
		b.WriteString(";")
		return
	}
	if len(n.Kids) == 0 && n.Kind != "verbatim_string_characters" {
		b.WriteString("=" + n.Text)
	}
	b.WriteString("(")
	for _, k := range n.Kids {
		shape(k, b)
	}
	b.WriteString(")")
}

func stepShapes(t testing.TB, steps []Step) []string {
	var out []string
	for _, s := range steps {
		parsed, err := pwsh.Parse(s.Script)
		if err != nil {
			t.Fatalf("step %s does not parse: %v\n%s", s.Name, err, s.Script)
		}
		var b strings.Builder
		shape(parsed.Root, &b)
		out = append(out, s.Name+": "+b.String())
	}
	return out
}

// FuzzImageStepsQuoting: whatever a configured value holds (quotes of every
// kind PowerShell knows, $(...), backticks, line breaks), the image steps
// parse, and into the same statements and commands as with a plain value:
// the value stays inside its string literals. A URL the plan refuses
// (Artifact.Validate) or image (imageref.Validate) is left out; the paths
// and key still carry v.
func FuzzImageStepsQuoting(f *testing.F) {
	for _, s := range []string{"x", "it's", "x'; Start-Process calc; '", "x\u2019; Start-Process calc; \u2019",
		"x\u201d; calc; \u201c", "$(calc)", "`n", "a\r\nStart-Process calc\r\n#", "'@\n", "\u2019@"} {
		f.Add(s)
	}
	base := stepShapes(f, mustImageSteps(f, hostileImageConfig("x")))
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			t.Skip() // see FuzzSingleQuote (internal/sandbox/winsim/pwsh)
		}
		steps, err := ImageSteps(hostileImageConfig(v))
		if err != nil {
			t.Fatal(err)
		}
		got := stepShapes(t, steps)
		for i := range base {
			if got[i] != base[i] {
				t.Fatalf("with %q the step's statements change:\n%s\nwant\n%s", v, got[i], base[i])
			}
		}
	})
}

func mustImageSteps(t testing.TB, cfg ImageConfig) []Step {
	t.Helper()
	steps, err := ImageSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}
