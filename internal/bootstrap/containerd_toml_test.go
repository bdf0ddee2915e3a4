package bootstrap

import (
	"strings"
	"testing"

	tomlv1 "github.com/pelletier/go-toml"
	tomlv2 "github.com/pelletier/go-toml/v2"
)

// TestContainerdConfigEscapes: a sandbox image holding TOML's quotes, a
// backslash or a line break (ImageSteps refuses such a reference; this is
// the second line) stays one string value, read back whole by both
// libraries containerd reads its configuration with (go-toml v1 for
// containerd 1.7's version 2 file, v2 for containerd 2's version 3), and
// adds no key.
func TestContainerdConfigEscapes(t *testing.T) {
	for _, pause := range []string{
		"registry.k8s.io/pause:3.10.1",
		"x\"\n[plugins.'evil']\n  y = \"z",
		"x'\r\n[evil]\\",
	} {
		v2 := ContainerdConfig(pause, "2.2.1")
		var doc map[string]any
		if err := tomlv2.Unmarshal([]byte(v2), &doc); err != nil {
			t.Fatalf("%q: version 3 file does not parse: %v\n%s", pause, err, v2)
		}
		images := doc["plugins"].(map[string]any)["io.containerd.cri.v1.images"].(map[string]any)
		if got := images["pinned_images"].(map[string]any)["sandbox"]; got != pause {
			t.Errorf("version 3 file: sandbox = %q, want %q", got, pause)
		}
		if n := len(doc["plugins"].(map[string]any)); n != 2 {
			t.Errorf("%q: version 3 file has %d plugins sections:\n%s", pause, n, v2)
		}

		v1 := ContainerdConfig(pause, "1.7.27")
		tree, err := tomlv1.Load(v1)
		if err != nil {
			t.Fatalf("%q: version 2 file does not parse: %v\n%s", pause, err, v1)
		}
		if got := tree.GetPath([]string{"plugins", "io.containerd.grpc.v1.cri", "sandbox_image"}); got != pause {
			t.Errorf("version 2 file: sandbox_image = %q, want %q", got, pause)
		}
		if keys := tree.Get("plugins").(*tomlv1.Tree).Keys(); len(keys) != 1 || strings.Contains(v1, "\n[evil]") {
			t.Errorf("%q: version 2 file has plugins %v:\n%s", pause, keys, v1)
		}
	}
}
