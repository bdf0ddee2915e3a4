package kube

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// WindowsSelector is the node selector of a RuntimeClass that sends pods to
// Windows nodes: kubernetes.io/os=windows, the CPU architecture and, when
// build is set, the Windows build (node.kubernetes.io/windows-build, the
// label windows_node sets from the guest), with extra entries merged over
// them.
func WindowsSelector(build, arch string, extra map[string]string) map[string]string {
	selector := map[string]string{LabelOS: "windows", corev1.LabelArchStable: arch}
	if build != "" {
		selector[LabelWindowsBuild] = build
	}
	maps.Copy(selector, extra)
	return selector
}

// SplitWindowsSelector reads a node selector back into what WindowsSelector
// makes it from: the build and architecture ("" when it names none) and the
// other entries (nil when there are none).
func SplitWindowsSelector(selector map[string]string) (build, arch string, extra map[string]string) {
	for k, v := range selector {
		switch {
		case k == LabelWindowsBuild:
			build = v
		case k == corev1.LabelArchStable:
			arch = v
		case k == LabelOS && v == "windows":
		default:
			if extra == nil {
				extra = map[string]string{}
			}
			extra[k] = v
		}
	}
	return build, arch, extra
}
