package networking

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Antrea's Linux side as its manifest (build/yamls/antrea.yml of
// antrea-io/antrea) installs it: the agents' configuration in ConfigMap
// kube-system/antrea-config, key antrea-agent.conf, and DaemonSet
// kube-system/antrea-agent whose antrea-agent container's image tag is the
// release.
const (
	AntreaNamespace    = "kube-system"
	AntreaConfigMap    = "antrea-config"
	AntreaAgentConf    = "antrea-agent.conf"
	AntreaDaemonSet    = "antrea-agent"
	AntreaAgentName    = "antrea-agent"
	antreaMinWinPodTag = "v1.10.0"
)

// AntreaConfig is what of the cluster's Antrea decides whether Windows nodes
// can join it: the settings of antrea-agent.conf that are the cluster's, not
// a node's (every node's agent must agree on them to reach the others), and
// the release its Linux agents run.
type AntreaConfig struct {
	// ConfigMap is where the configuration was read ("kube-system/antrea-config").
	ConfigMap string
	// TrafficEncapMode, TunnelType and TrafficEncryptionMode are
	// antrea-agent.conf's, with the defaults of pkg/config/agent/config.go
	// and cmd/antrea-agent/options.go (encap, geneve, none) when unset.
	TrafficEncapMode      string
	TunnelType            string
	TunnelPort            int
	TrafficEncryptionMode string
	// AntreaProxy is antreaProxy.enable (default true).
	AntreaProxy bool
	// Version is the Linux antrea-agent container's image tag ("v2.2.0");
	// "" when the DaemonSet was not read or its image carries no tag.
	Version string
	// Image is that container's image, as the DaemonSet names it.
	Image string
}

// ParseAntreaAgentConf reads antrea-agent.conf as the agent does (YAML into
// pkg/config/agent's AgentConfig; unknown keys are ignored there too).
func ParseAntreaAgentConf(raw string) (*AntreaConfig, error) {
	var doc struct {
		TrafficEncapMode      string `json:"trafficEncapMode"`
		TunnelType            string `json:"tunnelType"`
		TunnelPort            int    `json:"tunnelPort"`
		TrafficEncryptionMode string `json:"trafficEncryptionMode"`
		AntreaProxy           struct {
			Enable *bool `json:"enable"`
		} `json:"antreaProxy"`
	}
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", AntreaAgentConf, err)
	}
	c := &AntreaConfig{
		TrafficEncapMode: orDefault(doc.TrafficEncapMode, "encap"), TunnelType: strings.ToLower(orDefault(doc.TunnelType, "geneve")),
		TunnelPort: doc.TunnelPort, TrafficEncryptionMode: orDefault(doc.TrafficEncryptionMode, "none"), AntreaProxy: true,
	}
	if doc.AntreaProxy.Enable != nil {
		c.AntreaProxy = *doc.AntreaProxy.Enable
	}
	return c, nil
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// AntreaImageVersion is the tag of an image reference ("antrea/antrea-agent-ubuntu:v2.2.0"
// → "v2.2.0"); "" without one.
func AntreaImageVersion(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

// antreaWindowsRefusal is what of c stops a Windows antrea-agent from
// joining the cluster, as "setting: value" for each; nil when nothing does.
// Upstream has no one switch for Windows support: the Windows agent refuses
// to start with any of these (cmd/antrea-agent/options_windows.go,
// checkUnsupportedFeatures: "unsupported features on Windows: {...}"), and
// they are settings every node must share, so the Linux side's decide.
//   - trafficEncapMode networkPolicyOnly (Antrea then only enforces policies
//     over another CNI's network);
//   - tunnelType gre;
//   - trafficEncryptionMode ipsec or wireguard (a Windows node could not
//     decrypt the Linux nodes' traffic, nor they its plaintext).
func antreaWindowsRefusal(c *AntreaConfig) []string {
	var out []string
	if strings.EqualFold(c.TrafficEncapMode, "networkPolicyOnly") {
		out = append(out, "trafficEncapMode: "+c.TrafficEncapMode)
	}
	if c.TunnelType == "gre" {
		out = append(out, "tunnelType: "+c.TunnelType)
	}
	if !strings.EqualFold(c.TrafficEncryptionMode, "none") {
		out = append(out, "trafficEncryptionMode: "+c.TrafficEncryptionMode)
	}
	return out
}

// AntreaTrafficModes are the trafficEncapMode values the antrea mode runs
// Windows nodes in (docs/windows.md of antrea-io/antrea: encap, and noEncap
// with the Linux nodes' MAC annotations). hybrid is accepted by the Windows
// agent upstream but not carried by this provider.
var AntreaTrafficModes = []string{"encap", "noEncap"}

func antreaTrafficModeSupported(mode string) bool {
	for _, m := range AntreaTrafficModes {
		if strings.EqualFold(m, mode) {
			return true
		}
	}
	return false
}

// checkAntreaPlugin judges the cluster's Antrea for Windows nodes.
func checkAntreaPlugin(c *AntreaConfig) Verdict {
	where := fmt.Sprintf("ConfigMap %s, key %s", c.ConfigMap, AntreaAgentConf)
	restart := fmt.Sprintf("kubectl -n %s rollout restart daemonset %s", AntreaNamespace, AntreaDaemonSet)
	if bad := antreaWindowsRefusal(c); len(bad) > 0 {
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("Antrea (%s) sets %s, which Antrea does not support on Windows: its Windows agent stops with "+
				"\"unsupported features on Windows: {%s}\" (antrea-io/antrea cmd/antrea-agent/options_windows.go).",
				where, strings.Join(bad, ", "), antreaUnsupportedNames(bad)),
			Remedy: fmt.Sprintf("In %s, set trafficEncapMode to encap or noEncap, tunnelType to geneve, vxlan or stt and "+
				"trafficEncryptionMode to none, then restart Antrea's agents: %s.", where, restart)}
	}
	if !antreaTrafficModeSupported(c.TrafficEncapMode) {
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("Antrea (%s) sets trafficEncapMode: %s; the antrea mode runs Windows nodes in %s only.",
				where, c.TrafficEncapMode, strings.Join(AntreaTrafficModes, " or ")),
			Remedy: fmt.Sprintf("In %s, set trafficEncapMode to encap or noEncap, then restart Antrea's agents: %s.", where, restart)}
	}
	if c.Version != "" && c.Version != "latest" && antreaVersionBefore(c.Version, antreaMinWinPodTag) {
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("Antrea's agents run %s (DaemonSet %s/%s, image %s); Windows agents as HostProcess pods need Antrea %s or later "+
				"(antrea-io/antrea docs/windows.md, \"Installation as a Pod\").", c.Version, AntreaNamespace, AntreaDaemonSet, c.Image, antreaMinWinPodTag),
			Remedy: "Upgrade Antrea on the cluster to v2.0 or later before adding Windows nodes."}
	}
	msg := fmt.Sprintf("Antrea (%s) uses trafficEncapMode %s with tunnelType %s, which its Windows agent supports.", where, c.TrafficEncapMode, c.TunnelType)
	if c.Version == "" || c.Version == "latest" {
		return Verdict{Status: VerdictWarn, Message: msg + fmt.Sprintf(" Its release is unknown (DaemonSet %s/%s runs %q), so the Windows agents cannot be matched to it.",
			AntreaNamespace, AntreaDaemonSet, c.Image),
			Remedy: "Run Antrea's agents from a tagged release (antrea/antrea-agent-ubuntu:v2.x.y)."}
	}
	return Verdict{Status: VerdictPass, Message: msg + " Release " + c.Version + "."}
}

// antreaUnsupportedNames renders refusals as the Windows agent words them
// ("TrafficEncapMode: networkPolicyOnly").
func antreaUnsupportedNames(bad []string) string {
	out := make([]string, len(bad))
	for i, b := range bad {
		out[i] = strings.ToUpper(b[:1]) + b[1:]
	}
	return strings.Join(out, ", ")
}

// antreaVersionBefore compares "vX.Y.Z" tags; a tag it cannot read is not
// before anything.
func antreaVersionBefore(v, min string) bool {
	a, okA := parseTag(v)
	b, okB := parseTag(min)
	if !okA || !okB {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func parseTag(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
