package goldenimage

import "testing"

func TestTemplateInfoWindowsBuild(t *testing.T) {
	if got := (TemplateInfo{WindowsBuildFull: "10.0.20348.2340"}).WindowsBuild(); got != "10.0.20348" {
		t.Errorf("WindowsBuild = %q, want the build without its update revision", got)
	}
	if got := (TemplateInfo{}).WindowsBuild(); got != "" {
		t.Errorf("WindowsBuild of a template that records none = %q", got)
	}
}
