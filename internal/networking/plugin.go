package networking

import (
	"fmt"
	"strings"
)

// Network plugins the cluster's discovery recognises on its Linux nodes.
const (
	PluginFlannel = "flannel"
	PluginCalico  = "calico"
	PluginAntrea  = "antrea"
	PluginUnknown = "unknown"
)

// Plugin is the network plugin the cluster runs, as discovery recognised it.
type Plugin struct {
	// Name is one of PluginFlannel, PluginCalico, PluginAntrea or PluginUnknown.
	Name string
	// Source names the object the plugin was recognised by.
	Source string
	// Flannel is flannel's configuration; nil for other plugins.
	Flannel *FlannelConfig
	// Calico is Calico's configuration; nil for other plugins, or when its
	// resources could not be read (then only its presence is reported).
	Calico *CalicoConfig
}

// Verdict statuses, as the readiness checks report them.
const (
	VerdictPass = "pass"
	VerdictWarn = "warn"
	VerdictFail = "fail"
)

// Verdict is whether the cluster's plugin can carry Windows nodes: what was
// found and, when something must change, exactly what.
type Verdict struct {
	Status  string
	Message string
	Remedy  string
}

// CheckPlugin judges the cluster's network plugin for Windows nodes.
// daemonSets lists the DaemonSets of a namespace, for the restart command a
// remedy names.
func CheckPlugin(p Plugin, daemonSets func(namespace string) []string) Verdict {
	switch p.Name {
	case PluginFlannel:
		return checkFlannelPlugin(p.Flannel, daemonSets)
	case PluginCalico:
		if p.Calico != nil {
			return checkCalicoPlugin(p.Calico)
		}
		return Verdict{Status: VerdictPass,
			Message: fmt.Sprintf("%s detected (%s); install its Windows components on the Windows nodes.", titleCase(p.Name), p.Source)}
	case PluginAntrea:
		return Verdict{Status: VerdictPass,
			Message: fmt.Sprintf("%s detected (%s); install its Windows components on the Windows nodes.", titleCase(p.Name), p.Source)}
	}
	return Verdict{Status: VerdictWarn,
		Message: "No flannel (ConfigMap kube-flannel-cfg), Calico (DaemonSet calico-node) or Antrea (DaemonSet antrea-agent) found: " +
			"the network plugin is unknown, so its Windows support cannot be checked.",
		Remedy: "Install a network plugin with Windows support before adding Windows nodes: flannel with the vxlan backend " +
			"(VNI 4096, Port 4789), Calico or Antrea. If yours supports Windows, skip this check (\"cni\")."}
}

// CheckMode is the plan's judgement of a mode against the cluster's plugin:
// the problems that stop a windows_node_networking of that mode, none when
// the mode extends no plugin or the cluster's suits it. v is CheckPlugin's
// verdict on p.
func CheckMode(m Mode, p Plugin, v Verdict) []Problem {
	want := m.Plugin()
	switch {
	case want == "":
		return nil
	case p.Name != want && p.Name != PluginUnknown:
		return []Problem{{Summary: "The cluster runs another network plugin",
			Detail: fmt.Sprintf("The cluster runs %s (%s), not %s: set cni = %q and install %s's Windows components (see the resource's documentation).",
				p.Name, p.Source, want, Default().Name(), p.Name)}}
	case v.Status == VerdictFail:
		return []Problem{{Summary: fmt.Sprintf("The cluster's %s cannot carry Windows nodes", want), Detail: v.Message + "\n\n" + v.Remedy}}
	}
	return nil
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
