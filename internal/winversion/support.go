package winversion

import (
	"fmt"
	"slices"
	"time"
)

// Support: whether a Windows Server release is one Kubernetes supports as a
// node OS for a cluster's version, and one Microsoft still services.

// Lifecycle is Microsoft's Fixed Lifecycle Policy dates of a release: after
// ExtendedEnd it gets no security updates (no Patch Tuesday cumulative
// update to put into an image).
type Lifecycle struct {
	Start, MainstreamEnd, ExtendedEnd time.Time
	Source                            string
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Lifecycles by Release.Version. Sources: Microsoft Lifecycle, one page per
// product.
var Lifecycles = map[string]Lifecycle{
	"2019": {Start: day("2018-11-13"), MainstreamEnd: day("2024-01-09"), ExtendedEnd: day("2029-01-09"),
		Source: "https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2019"},
	"2022": {Start: day("2021-08-18"), MainstreamEnd: day("2026-10-13"), ExtendedEnd: day("2031-10-14"),
		Source: "https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2022"},
	"2025": {Start: day("2024-11-01"), MainstreamEnd: day("2029-11-13"), ExtendedEnd: day("2034-11-14"),
		Source: "https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2025"},
}

// KubernetesWindowsSupportSource is the page that lists, for a Kubernetes
// version, the Windows Server releases it supports for nodes and Pods
// ("Windows OS version compatibility").
const KubernetesWindowsSupportSource = "https://kubernetes.io/docs/concepts/windows/intro/#windows-os-version-support"

// kubernetesMatrix: from a Kubernetes minor version on, the Windows Server
// LTSC releases the page lists. The page as it reads for v1.36 (the version
// this provider's defaults and the sandbox use) lists Windows Server 2022 and
// Windows Server 2025; its v1.22 to v1.2x editions listed 2019 and 2022 (with
// SAC releases, which this provider does not build). Minors below the first
// row are not judged.
var kubernetesMatrix = []struct {
	FromMinor int
	Releases  []string
}{
	{FromMinor: 36, Releases: []string{"2022", "2025"}},
}

// KubernetesSupports reports whether Kubernetes 1.<minor> supports the
// release as a node OS, and whether the table knows that minor at all.
func KubernetesSupports(release Release, minor int) (supported, known bool) {
	for i := len(kubernetesMatrix) - 1; i >= 0; i-- {
		if minor >= kubernetesMatrix[i].FromMinor {
			return slices.Contains(kubernetesMatrix[i].Releases, release.Version), true
		}
	}
	return false, false
}

// SupportWarnings are the reasons a release is a poor node OS for
// Kubernetes 1.<minor> on the day now: outside Kubernetes' supported
// releases, or past Microsoft's extended support (no more security
// updates), each naming its source. None when it is fine or not known.
func SupportWarnings(release Release, minor int, now time.Time) []string {
	var out []string
	if ok, known := KubernetesSupports(release, minor); known && !ok {
		var list []string
		for i := len(kubernetesMatrix) - 1; i >= 0; i-- {
			if minor >= kubernetesMatrix[i].FromMinor {
				list = kubernetesMatrix[i].Releases
				break
			}
		}
		out = append(out, fmt.Sprintf("Windows Server %s is not among the releases Kubernetes 1.%d supports for Windows nodes (Windows Server %s; %s).",
			release.Version, minor, joinAnd(list), KubernetesWindowsSupportSource))
	}
	if lc, ok := Lifecycles[release.Version]; ok && !now.Before(lc.ExtendedEnd) {
		out = append(out, fmt.Sprintf("Windows Server %s left Microsoft's extended support on %s: it gets no security updates (%s).",
			release.Version, lc.ExtendedEnd.Format("2006-01-02"), lc.Source))
	}
	return out
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return fmt.Sprintf("%s and %s", joinComma(s[:len(s)-1]), s[len(s)-1])
}

func joinComma(s []string) string {
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}

// LifecycleNote says where the release stands in Microsoft's lifecycle on
// the day now, with the dates and the source: "" for a release the table
// does not know.
func LifecycleNote(release Release, now time.Time) string {
	lc, ok := Lifecycles[release.Version]
	if !ok {
		return ""
	}
	mainstream := "mainstream support until " + lc.MainstreamEnd.Format("2006-01-02")
	if !now.Before(lc.MainstreamEnd) {
		mainstream = "mainstream support ended " + lc.MainstreamEnd.Format("2006-01-02")
	}
	extended := "extended support (security updates) until " + lc.ExtendedEnd.Format("2006-01-02")
	if !now.Before(lc.ExtendedEnd) {
		extended = "extended support ended " + lc.ExtendedEnd.Format("2006-01-02")
	}
	return fmt.Sprintf("Microsoft's lifecycle of Windows Server %s: %s, %s (%s).", release.Version, mainstream, extended, lc.Source)
}

// ServerMinor reads the minor version of an API server's git version
// ("v1.36.3" -> 36).
func ServerMinor(gitVersion string) (int, error) {
	var major, minor int
	if _, err := fmt.Sscanf(gitVersion, "v%d.%d", &major, &minor); err != nil || major != 1 {
		return 0, fmt.Errorf("%q is not a Kubernetes 1.x version", gitVersion)
	}
	return minor, nil
}
