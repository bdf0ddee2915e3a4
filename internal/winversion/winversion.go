// Package winversion maps Windows Server releases to the build numbers that
// Kubernetes uses to keep Windows pods on hosts that can run them.
//
// A Windows container only runs on a host of the same build (process
// isolation), so the build is what node labels, RuntimeClasses and golden
// images agree on: the `node.kubernetes.io/windows-build` label carries
// "major.minor.build" (for example "10.0.20348"), never the UBR patch level.
package winversion

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Release is one Windows Server release that Kubernetes supports as a node OS.
type Release struct {
	// Version is the canonical name users type: "2019", "2022", "2025".
	Version string
	// Aliases are the other names the same release goes by (servicing channel
	// names and image tags such as "1809" or "ltsc2022").
	Aliases []string
	// Build is the value of the node.kubernetes.io/windows-build label.
	Build string
	// GuestID is the vSphere guest OS identifier of the release.
	GuestID string
	// ImageTag is the tag of the matching mcr.microsoft.com base images.
	ImageTag string
}

// Releases lists the releases in ascending order. Windows Server 2016 is left
// out on purpose: containerd and Kubernetes no longer support it.
var Releases = []Release{
	{Version: "2019", Aliases: []string{"1809", "ltsc2019"}, Build: "10.0.17763", GuestID: "windows2019srv_64Guest", ImageTag: "ltsc2019"},
	{Version: "2022", Aliases: []string{"21h2", "ltsc2022"}, Build: "10.0.20348", GuestID: "windows2019srvNext_64Guest", ImageTag: "ltsc2022"},
	{Version: "2025", Aliases: []string{"24h2", "ltsc2025"}, Build: "10.0.26100", GuestID: "windows2022srvNext_64Guest", ImageTag: "ltsc2025"},
}

// buildPattern is the shape of the windows-build label value.
var buildPattern = regexp.MustCompile(`^10\.0\.[0-9]{5}$`)

// Versions returns every accepted version name, canonical names first, for
// validators and error messages.
func Versions() []string {
	var names []string
	for _, r := range Releases {
		names = append(names, r.Version)
	}
	for _, r := range Releases {
		names = append(names, r.Aliases...)
	}
	return names
}

// ByVersion finds the release for a version name or alias (case-insensitive).
func ByVersion(version string) (Release, error) {
	v := strings.ToLower(strings.TrimSpace(version))
	for _, r := range Releases {
		if r.Version == v || slices.Contains(r.Aliases, v) {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("unknown Windows Server version %q: accepted values are %s", version, strings.Join(Versions(), ", "))
}

// ByBuild finds the release of a build. The build may carry a UBR suffix
// ("10.0.20348.2340"), which is ignored.
func ByBuild(build string) (Release, bool) {
	b := TrimUBR(build)
	for _, r := range Releases {
		if r.Build == b {
			return r, true
		}
	}
	return Release{}, false
}

// ValidateBuild checks that build has the shape of a windows-build label
// value: "10.0." followed by a five-digit build number.
func ValidateBuild(build string) error {
	if !buildPattern.MatchString(build) {
		return fmt.Errorf("%q is not a Windows build: expected 10.0.<build>, for example %s (Windows Server 2022)", build, Releases[1].Build)
	}
	return nil
}

// TrimUBR drops the update build revision from "major.minor.build.UBR".
func TrimUBR(build string) string {
	parts := strings.Split(build, ".")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, ".")
}

// BuildNumber returns the third component of a build string as an integer
// ("10.0.20348" -> 20348).
func BuildNumber(build string) (int, error) {
	parts := strings.Split(build, ".")
	if len(parts) < 3 {
		return 0, fmt.Errorf("%q is not a Windows build", build)
	}
	return strconv.Atoi(parts[2])
}
