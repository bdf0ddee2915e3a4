package imageref

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, ref := range []string{
		"registry.k8s.io/pause:3.10.1",
		"mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b",
		"registry.example.com:5000/mirror/pause@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b",
		"docker.io/library/busybox:1.36",
	} {
		if err := Validate("pause_image", ref); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	for ref, want := range map[string]string{
		// What would break out of containerd's TOML string, or its line.
		`registry.k8s.io/pause:3.10"` + "\n" + `[plugins.x]`: "is not a container image reference",
		`registry.k8s.io/pause:3.10'`:                        "is not a container image reference",
		`registry.k8s.io/pause:3.10\u0022`:                   "is not a container image reference",
		"Registry.k8s.io/Pause:3.10":                         "is not a container image reference",
		"":                                                   "is not a container image reference",
		"pause:3.10":                                         `short name: write it out in full, as "docker.io/library/pause:3.10"`,
		"registry.k8s.io/pause":                              "names no tag or digest",
		"registry.k8s.io/pause@sha256:abc":                   "is not a container image reference",
	} {
		err := Validate("pause_image", ref)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "pause_image ") {
			t.Errorf("%q: %v, want an error naming pause_image with %q", ref, err, want)
		}
	}
	if !Pinned("registry.k8s.io/pause:3.10@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b") || Pinned("registry.k8s.io/pause:3.10") {
		t.Error("Pinned")
	}
}
