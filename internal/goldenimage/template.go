package goldenimage

import "github.com/wincluster/terraform-provider-windows/internal/winversion"

// WindowsBuild is the template's Windows build as nodes cloned from it carry
// it in their node.kubernetes.io/windows-build label (10.0.20348, without the
// update revision); "" when the template does not record its build (it was
// not built by this provider), which leaves the windows-build check out.
func (t TemplateInfo) WindowsBuild() string { return winversion.TrimUBR(t.WindowsBuildFull) }

// RecordedUpdates are the KBs a golden image installed, as its template's
// record (the manifest in extraConfig) lists them; every clone carries the
// record, so a node's VM tells the updates of the image it was made from.
// nil for a VM not made from a golden image, or from one without updates.
func RecordedUpdates(extraConfig map[string]string) []string {
	return InstalledUpdates(extraConfig[keyManifest])
}

// RecordedBuild is the build with its update revision a golden image
// recorded (10.0.20348.4466), which its clones carry too.
func RecordedBuild(extraConfig map[string]string) string { return extraConfig[keyWindowsBuild] }
