package winnode

import "maps"

// NodeLabels are the labels a node's Node carries: the configured ones and
// the Windows build read from the guest (LabelWindowsBuild), which pods and
// RuntimeClasses select on and which a configured label cannot override.
func NodeLabels(labels map[string]string, build string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	if build != "" {
		out[LabelWindowsBuild] = build
	}
	return out
}
