package networking

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// artifactName is a key of windows_golden_image's network_artifacts.<mode>.
var artifactName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkArtifacts: a mode's downloads have names the image's schema can
// key, land at absolute Windows paths, and cover every host program of the
// mode that no other part of the image installs (kube-proxy, the
// containernetworking plugins).
func checkArtifacts(t *testing.T, m Mode) {
	t.Helper()
	installed := map[string]bool{}
	for _, a := range m.Artifacts() {
		if !artifactName.MatchString(a.Name) {
			t.Errorf("artifact %q: not a lower-case identifier", a.Name)
		}
		if !windowsPath.MatchString(a.InstallAs) || a.Description == "" {
			t.Errorf("artifact %s: InstallAs %q is not an absolute Windows path, or no description", a.Name, a.InstallAs)
		}
		if installed[a.InstallAs] {
			t.Errorf("artifact %s: %s installed twice", a.Name, a.InstallAs)
		}
		installed[a.InstallAs] = true
		if a.Required && !slices.Contains(m.HostPrograms(), a.InstallAs) {
			t.Errorf("artifact %s is required but %s is not among the mode's HostPrograms", a.Name, a.InstallAs)
		}
	}
	for _, p := range m.HostPrograms() {
		if !installed[p] && p != KubeProxyExe && !strings.HasPrefix(p, CNIBinDir+`\`) {
			t.Errorf("host program %s: no artifact installs it", p)
		}
	}
}

// checkAttributes: the computed attributes have names and kinds that do
// not change with the plugin (the schema asks with nil).
func checkAttributes(t *testing.T, m Mode) {
	t.Helper()
	schemaAttrs := m.Attributes(nil)
	for _, a := range schemaAttrs {
		if !artifactName.MatchString(a.Name) || a.Description == "" {
			t.Errorf("attribute %q: not a lower-case identifier, or no description", a.Name)
		}
	}
	p := &Plugin{Name: m.Plugin()}
	got := m.Attributes(p)
	if len(got) != len(schemaAttrs) {
		t.Fatalf("Attributes(nil) lists %d, Attributes(plugin) %d", len(schemaAttrs), len(got))
	}
	for i := range got {
		if got[i].Name != schemaAttrs[i].Name || got[i].Kind != schemaAttrs[i].Kind {
			t.Errorf("attribute %d: %s (%d) with a plugin, %s (%d) for the schema", i, got[i].Name, got[i].Kind, schemaAttrs[i].Name, schemaAttrs[i].Kind)
		}
	}
}

// emptyCluster holds nothing: every object is absent.
type emptyCluster struct{}

func (emptyCluster) ConfigMap(context.Context, string, string) (map[string]string, bool, error) {
	return nil, false, nil
}
func (emptyCluster) DaemonSet(context.Context, string, string) (bool, error) { return false, nil }
func (emptyCluster) Object(context.Context, schema.GroupVersionResource, string, string) (map[string]any, bool, error) {
	return nil, false, nil
}
func (emptyCluster) Objects(context.Context, schema.GroupVersionResource) ([]map[string]any, bool, error) {
	return nil, false, nil
}

// TestUnitDetectEmpty: a cluster with no plugin's objects is unknown, and
// every mode that extends a plugin finds nothing there.
func TestUnitDetectEmpty(t *testing.T) {
	p, err := Detect(context.Background(), emptyCluster{})
	if err != nil || p.Name != PluginUnknown {
		t.Fatalf("Detect(empty) = %+v, %v; want %s", p, err, PluginUnknown)
	}
	if v := CheckPlugin(*p, func(string) []string { return nil }); v.Status != VerdictWarn {
		t.Errorf("CheckPlugin(unknown) = %+v, want a warning", v)
	}
}

// TestUnitHostDirs: the directories modes declare are absolute Windows
// paths below a folder at C:\ (the image protects that folder), and the
// package's list holds every one of them.
func TestUnitHostDirs(t *testing.T) {
	all := HostDirs()
	for _, m := range Modes() {
		h, ok := m.(HostDirsMode)
		if !ok {
			continue
		}
		for _, d := range h.HostDirs() {
			if !windowsPath.MatchString(d) || strings.HasSuffix(d, `\`) {
				t.Errorf("%s: host directory %q is not an absolute Windows path", m.Name(), d)
			}
			if !slices.Contains(all, d) {
				t.Errorf("%s: HostDirs() lacks %s", m.Name(), d)
			}
		}
	}
	if len(all) == 0 {
		t.Errorf("no mode declares a host directory; flannel keeps its kubeconfigs under C:\\var\\lib")
	}
}
