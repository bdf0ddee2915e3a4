package kube

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// maxKubeletLag is how many minor versions a kubelet may be older than the
// API server (Kubernetes version skew policy since 1.28); it may never be newer.
const maxKubeletLag = 3

// minWindowsBuild is Windows Server 2019, the oldest release with
// containerd support, which Kubernetes requires for Windows nodes.
const minWindowsBuild = 17763

// checkVersionSkew compares the kubelet version about to be installed with
// the API server's.
func checkVersionSkew(kubelet, server string) Check {
	c := Check{ID: CheckVersionSkew}
	kv, err := utilversion.ParseGeneric(kubelet)
	if err != nil {
		c.Status, c.Message = StatusFail, fmt.Sprintf("The kubelet version %q is not a Kubernetes version.", kubelet)
		c.Remedy = "Set kubernetes_version to a release such as v1.36.3."
		return c
	}
	sv, err := utilversion.ParseGeneric(server)
	if err != nil {
		c.Status, c.Message = StatusWarn, fmt.Sprintf("The API server reports version %q, which is not a Kubernetes version: the version skew cannot be checked.", server)
		return c
	}
	oldest := fmt.Sprintf("v%d.%d", sv.Major(), max(int(sv.Minor())-maxKubeletLag, 0))
	newest := fmt.Sprintf("v%d.%d", sv.Major(), sv.Minor())
	remedy := fmt.Sprintf("Set kubernetes_version to a %s.x release (any of %s to %s works), or upgrade the control plane first.", newest, oldest, newest)
	lag := int(sv.Minor()) - int(kv.Minor())
	switch {
	case kv.Major() != sv.Major() || lag < 0:
		c.Status, c.Remedy = StatusFail, remedy
		c.Message = fmt.Sprintf("The kubelet %s would be newer than the API server %s; a kubelet must never be newer than the API server.", kubelet, server)
	case lag > maxKubeletLag:
		c.Status, c.Remedy = StatusFail, remedy
		c.Message = fmt.Sprintf("The kubelet %s would be %d minor versions older than the API server %s; at most %d are supported.", kubelet, lag, server, maxKubeletLag)
	case lag == 0:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("The kubelet %s matches the API server %s.", kubelet, server)
	default:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("The kubelet %s is %d minor version(s) older than the API server %s, within the supported skew of %d.", kubelet, lag, server, maxKubeletLag)
	}
	return c
}

// checkWindowsBuild compares the build of the nodes about to be added with
// Kubernetes' minimum and with the existing Windows nodes. Mixed builds work,
// but a Windows container only runs on a host of its own build, so each
// workload must then select its build.
func checkWindowsBuild(build string, nodes []WindowsNode) Check {
	c := Check{ID: CheckWindowsBuild}
	number, err := winversion.BuildNumber(build)
	if err != nil {
		c.Status, c.Message = StatusFail, fmt.Sprintf("%q is not a Windows build.", build)
		c.Remedy = "Set windows_build to the node.kubernetes.io/windows-build label value, for example 10.0.20348."
		return c
	}
	name := "an unlisted release"
	if r, ok := winversion.ByBuild(build); ok {
		name = "Windows Server " + r.Version
	}
	var others []string
	for _, n := range nodes {
		if n.Build != winversion.TrimUBR(build) {
			b := n.Build
			if b == "" {
				b = "unknown build"
			}
			others = append(others, fmt.Sprintf("%s (%s)", n.Name, b))
		}
	}
	switch {
	case number < minWindowsBuild:
		c.Status = StatusFail
		c.Message = fmt.Sprintf("Windows build %s is older than Windows Server 2019 (10.0.%d), the oldest release Kubernetes supports for Windows nodes.", build, minWindowsBuild)
		c.Remedy = "Build the nodes from Windows Server 2019 (10.0.17763), 2022 (10.0.20348) or 2025 (10.0.26100)."
	case len(others) > 0:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("Windows build %s (%s) differs from existing Windows nodes: %s. A Windows container only runs on a host of the same build.",
			build, name, listNames(others))
		c.Remedy = fmt.Sprintf("Give each Windows workload the runtimeClassName of a windows_runtime_class per build (windows_build = %q for the new nodes), "+
			"or a nodeSelector on node.kubernetes.io/windows-build.", build)
	case len(nodes) == 0:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("Windows build %s (%s); there are no Windows nodes yet.", build, name)
	default:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("Windows build %s (%s) matches all %d existing Windows nodes.", build, name, len(nodes))
	}
	return c
}
