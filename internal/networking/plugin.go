package networking

import (
	"context"
	"fmt"
	"slices"
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
	// PodNetworks are the pod networks the plugin hands out subnets from,
	// as its configuration says (flannel's net-conf.json Network), and
	// PodNetworksSource names that setting; empty when it does not say.
	PodNetworks       []string
	PodNetworksSource string
	// Config is the plugin's configuration as the mode that extends it
	// parsed it (*FlannelConfig for flannel); only that mode reads it.
	Config any
}

// Flannel is flannel's configuration; nil for other plugins.
func (p Plugin) Flannel() *FlannelConfig {
	f, _ := p.Config.(*FlannelConfig)
	return f
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

// otherPlugins are plugins discovery recognises that no mode extends yet:
// their Windows parts are the user's to install (cni = "none").
var otherPlugins = []struct{ name, namespace, daemonSet string }{
	{PluginCalico, "calico-system", "calico-node"},
	{PluginCalico, "kube-system", "calico-node"},
	{PluginAntrea, "kube-system", "antrea-agent"},
}

// Detect recognises the cluster's network plugin: each mode's (Detect, in
// the modes' order), then the plugins no mode extends, else PluginUnknown.
func Detect(ctx context.Context, r ClusterReader) (*Plugin, error) {
	extended := map[string]bool{}
	for _, m := range Modes() {
		if m.Plugin() == "" {
			continue
		}
		extended[m.Plugin()] = true
		p, err := m.Detect(ctx, r)
		if err != nil || p != nil {
			return p, err
		}
	}
	for _, cand := range otherPlugins {
		if extended[cand.name] {
			continue
		}
		found, err := r.DaemonSet(ctx, cand.namespace, cand.daemonSet)
		if err != nil {
			return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", cand.namespace, cand.daemonSet, err)
		}
		if found {
			return &Plugin{Name: cand.name, Source: "DaemonSet " + cand.namespace + "/" + cand.daemonSet}, nil
		}
	}
	return &Plugin{Name: PluginUnknown}, nil
}

// modeFor is the mode that extends plugin; nil when none does.
func modeFor(plugin string) Mode {
	for _, m := range Modes() {
		if m.Plugin() == plugin {
			return m
		}
	}
	return nil
}

// CheckPlugin judges the cluster's network plugin for Windows nodes: the
// mode that extends it judges (Mode.CheckPlugin). daemonSets lists the
// DaemonSets of a namespace, for the restart command a remedy names.
func CheckPlugin(p Plugin, daemonSets func(namespace string) []string) Verdict {
	if m := modeFor(p.Name); m != nil {
		return m.CheckPlugin(p, daemonSets)
	}
	if p.Name != PluginUnknown && p.Name != "" {
		return Verdict{Status: VerdictPass,
			Message: fmt.Sprintf("%s detected (%s); install its Windows components on the Windows nodes (cni = %q).", titleCase(p.Name), p.Source, Default().Name())}
	}
	var known []string
	for _, m := range Modes() {
		if m.Plugin() != "" {
			known = append(known, m.Plugin())
		}
	}
	for _, o := range otherPlugins {
		if !slices.Contains(known, o.name) {
			known = append(known, o.name)
		}
	}
	return Verdict{Status: VerdictWarn,
		Message: "None of the network plugins discovery recognises (" + strings.Join(known, ", ") + ") was found: " +
			"the network plugin is unknown, so its Windows support cannot be checked.",
		Remedy: "Install a network plugin with Windows support before adding Windows nodes (" + strings.Join(known, ", ") +
			"). If yours supports Windows, skip this check (\"cni\")."}
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
