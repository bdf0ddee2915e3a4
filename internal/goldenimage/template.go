package goldenimage

import "github.com/wincluster/terraform-provider-windows/internal/winversion"

// WindowsBuild is the template's Windows build as nodes cloned from it carry
// it in their node.kubernetes.io/windows-build label (10.0.20348, without the
// update revision); "" when the template does not record its build (it was
// not built by this provider), which leaves the windows-build check out.
func (t TemplateInfo) WindowsBuild() string { return winversion.TrimUBR(t.WindowsBuildFull) }
