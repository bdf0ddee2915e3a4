package networking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// antrea: Antrea's Windows agent as antrea-io/antrea docs/windows.md
// recommends for containerd ("Installation as a Pod", manifest
// antrea-windows-with-ovs.yml): one HostProcess DaemonSet whose pods run
// antrea-agent and the OVS daemons from the antrea-windows image, after
// init containers that install the CNI plugin and configuration and the
// OVS driver. antrea-agent takes over kube-proxy's work on Windows
// (AntreaProxy with proxyAll, "kube-proxy should not be deployed on Windows
// Nodes with Antrea"), so the mode runs no kube-proxy. The agent's identity
// is the cluster's own ClusterRole antrea-agent (antrea.yml), bound to the
// mode's ServiceAccount, as the upstream DaemonSet runs as antrea-agent.
type antrea struct{}

func init() { Register(antrea{}) }

// Names and versions of the antrea mode.
const (
	AntreaWindowsDS = "antrea-agent-windows"
	// AntreaWindowsVersion is the release the mode's DaemonSet runs; the
	// cluster's Linux agents must run the same (CheckPlugin).
	AntreaWindowsVersion = "v2.2.0"
	// AntreaWindowsImage is Antrea's Windows image of that release
	// (build/images/Dockerfile.build.windows: antrea-agent, antctl, the
	// antrea and host-local CNI plugins, Install-OVS.ps1 and OVS).
	AntreaWindowsImage = "antrea/antrea-windows:" + AntreaWindowsVersion
	// antreaClusterRole is antrea.yml's ClusterRole for its agents.
	antreaClusterRole = "antrea-agent"
	antreaBinding     = "windows-node-networking:%s:antrea-agent-windows"
	// AntreaNetworkName and AntreaBridge: pkg/agent/util/net_windows.go
	// LocalHNSNetwork, and the default ovsBridge.
	AntreaNetworkName = "antrea-hnsnetwork"
	AntreaBridge      = "br-int"
	antreaCNIConf     = CNIConfDir + `\10-antrea.conflist`
	// The Windows agents' traffic settings when the cluster's are not known
	// (Antrea's defaults); otherwise the cluster's, carried through the
	// mode's attributes (Attributes, Spec.ModeSettings): every node's agent
	// must agree on them.
	antreaWindowsEncap  = "encap"
	antreaWindowsTunnel = "geneve"
)

func (antrea) Name() string { return "antrea" }

func (antrea) Agents() []Agent {
	return []Agent{{Name: "antrea-agent", DaemonSet: AntreaWindowsDS, Selector: agentSelector(AntreaWindowsDS)}}
}

// NeedsClusterCIDR: antrea-agent takes its Node's spec.podCIDR.
func (antrea) NeedsClusterCIDR() bool { return false }

func (antrea) Plugin() string { return PluginAntrea }

var daemonSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}

// Detect: DaemonSet kube-system/antrea-agent, its antrea-agent container's
// image (the release), and ConfigMap antrea-config's antrea-agent.conf.
func (antrea) Detect(ctx context.Context, r ClusterReader) (*Plugin, error) {
	// Asked first through the typed client, so a cluster without Antrea
	// costs no dynamic client; its object is read only when it is there.
	if present, err := r.DaemonSet(ctx, AntreaNamespace, AntreaDaemonSet); err != nil || !present {
		if err != nil {
			return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", AntreaNamespace, AntreaDaemonSet, err)
		}
		return nil, nil
	}
	ds, found, err := r.Object(ctx, daemonSetsGVR, AntreaNamespace, AntreaDaemonSet)
	if err != nil {
		return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", AntreaNamespace, AntreaDaemonSet, err)
	}
	if !found {
		return nil, nil
	}
	p := &Plugin{Name: PluginAntrea, Source: "DaemonSet " + AntreaNamespace + "/" + AntreaDaemonSet}
	data, found, err := r.ConfigMap(ctx, AntreaNamespace, AntreaConfigMap)
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", AntreaNamespace, AntreaConfigMap, err)
	}
	if !found {
		return p, nil
	}
	cfg, err := ParseAntreaAgentConf(data[AntreaAgentConf])
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", AntreaNamespace, AntreaConfigMap, AntreaAgentConf, err)
	}
	cfg.ConfigMap = AntreaNamespace + "/" + AntreaConfigMap
	cfg.Image = antreaAgentImage(ds)
	cfg.Version = AntreaImageVersion(cfg.Image)
	p.Config = cfg
	return p, nil
}

// antreaAgentImage is the image of the antrea-agent container of an
// unstructured DaemonSet.
func antreaAgentImage(ds map[string]any) string {
	spec, _ := ds["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	podSpec, _ := tmpl["spec"].(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	for _, c := range containers {
		m, _ := c.(map[string]any)
		if m["name"] == AntreaAgentName {
			img, _ := m["image"].(string)
			return img
		}
	}
	return ""
}

// Antrea is Antrea's configuration; nil for other plugins.
func (p Plugin) Antrea() *AntreaConfig {
	a, _ := p.Config.(*AntreaConfig)
	return a
}

// CheckPlugin: what Antrea's Windows agent refuses (checkAntreaPlugin: the
// traffic modes it runs, encap and noEncap), the release the mode's Windows
// agents run, and AntreaProxy for noEncap. The traffic mode and tunnel are
// the cluster's: the Windows agents follow them (Attributes).
func (antrea) CheckPlugin(p Plugin, _ func(namespace string) []string) Verdict {
	c := p.Antrea()
	if c == nil {
		return Verdict{Status: VerdictWarn,
			Message: fmt.Sprintf("Antrea detected (%s) without ConfigMap %s/%s: its configuration cannot be checked for Windows.", p.Source, AntreaNamespace, AntreaConfigMap),
			Remedy:  "Install Antrea from its release manifest (antrea.yml), which creates the ConfigMap."}
	}
	v := checkAntreaPlugin(c)
	if v.Status == VerdictFail {
		return v
	}
	switch {
	case c.Version != "" && c.Version != AntreaWindowsVersion:
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("Antrea's Linux agents run %s (%s); the antrea mode's Windows agents run %s, and Antrea's agents must run one release.",
				c.Version, c.Image, AntreaWindowsVersion),
			Remedy: fmt.Sprintf("Run Antrea %s on the cluster, or use cni = %q and install Antrea's Windows DaemonSet of your release.", AntreaWindowsVersion, Default().Name())}
	case strings.EqualFold(c.TrafficEncapMode, "noEncap") && !c.AntreaProxy:
		// docs/noencap-hybrid-modes.md: "The NoEncap and Hybrid traffic
		// modes require Antrea Proxy".
		return Verdict{Status: VerdictFail,
			Message: fmt.Sprintf("Antrea (ConfigMap %s, key %s) sets trafficEncapMode: noEncap with antreaProxy.enable: false; Antrea's noEncap mode requires "+
				"AntreaProxy (antrea-io/antrea docs/noencap-hybrid-modes.md), and its Windows agents run it in kube-proxy's place.", c.ConfigMap, AntreaAgentConf),
			Remedy: fmt.Sprintf("In ConfigMap %s, key %s, set antreaProxy.enable: true, then restart Antrea's agents.", c.ConfigMap, AntreaAgentConf)}
	}
	return v
}

// Artifacts: none; the antrea-windows image carries the agent, the CNI
// plugins and OVS.
func (antrea) Artifacts() []Artifact { return nil }

// HostPrograms: none; the image's programs run from the container's mount.
func (antrea) HostPrograms() []string { return nil }

// HostSetup: the join's antrea-host-setup step, Antrea's host
// prerequisites for its containerized OVS (antrea-host-setup.ps1.tmpl):
// the Hyper-V PowerShell module and TESTSIGNING for the image's
// test-signed OVS driver, with a restart when either was missing.
func (antrea) HostSetup(rebootMarker string) (string, error) {
	return renderScript("antrea-host-setup", map[string]any{"Marker": rebootMarker})
}

// Attributes: the traffic mode and tunnel the Windows agents run, the
// cluster's when its antrea-config was read (CheckPlugin refused what they
// cannot run), else Antrea's defaults.
func (antrea) Attributes(p *Plugin) []Attribute {
	mode, tunnel := antreaWindowsEncap, antreaWindowsTunnel
	if p != nil {
		if c := p.Antrea(); c != nil && antreaTrafficModeSupported(c.TrafficEncapMode) && len(antreaWindowsRefusal(c)) == 0 {
			mode, tunnel = antreaTrafficMode(c.TrafficEncapMode), c.TunnelType
		}
	}
	return []Attribute{
		{Name: "traffic_encap_mode", Kind: AttributeString, String: mode,
			Description: "Antrea's `trafficEncapMode` on the Windows nodes (`encap` or `noEncap`): the cluster's `antrea-config`'s, read when the resource is created."},
		{Name: "tunnel_type", Kind: AttributeString, String: tunnel,
			Description: "Antrea's `tunnelType` on the Windows nodes (`geneve`, `vxlan` or `stt`; unused in `noEncap`): the cluster's `antrea-config`'s, read when the resource is created."},
		{Name: "version", Kind: AttributeString, String: AntreaWindowsVersion,
			Description: "The Antrea release the Windows agents run (image `antrea/antrea-windows`); the cluster's Linux agents must run the same."},
	}
}

// antreaTrafficMode spells a supported traffic mode as Antrea's
// configuration does (encap, noEncap).
func antreaTrafficMode(m string) string {
	for _, known := range AntreaTrafficModes {
		if strings.EqualFold(known, m) {
			return known
		}
	}
	return m
}

func (antrea) Probe() Probe {
	return Probe{PodNetwork: "Antrea's network (OVS bridge " + AntreaBridge + " on HNS network " + AntreaNetworkName + ")"}
}

// CNIConfPath: the agent's install-cni init container writes the node's
// CNI configuration (Install-WindowsCNI.ps1), not the join.
func (antrea) CNIConfPath() string { return "" }

func (antrea) CNIConfig(Node) ([]byte, error) { return nil, nil }

// antreaCNIConfList is antrea-windows' antrea-cni.conflist.
const antreaCNIConfList = `{
    "cniVersion":"0.3.0",
    "name": "antrea",
    "plugins": [
        {
            "type": "antrea",
            "ipam": {
                "type": "host-local"
            },
            "capabilities": {"dns": true}
        }
    ]
}
`

// antreaAgentConf is the Windows agents' antrea-agent.conf: upstream's
// antrea-windows-config with kubeAPIServerOverride set (docs/windows.md:
// required, as proxyAll replaces kube-proxy) and AntreaProxy with proxyAll.
func antreaAgentConf(apiServer, mode, tunnel string) (string, error) {
	server, err := json.Marshal(apiServer)
	if err != nil {
		return "", err
	}
	return "featureGates:\n" +
		"trafficEncapMode: " + mode + "\n" +
		"tunnelType: " + tunnel + "\n" +
		"kubeAPIServerOverride: " + string(server) + "\n" +
		"antreaProxy:\n  enable: true\n  proxyAll: true\n  serviceProxyName: \"\"\n", nil
}

// Objects: the ServiceAccount bound to antrea.yml's ClusterRole antrea-agent,
// one ConfigMap (upstream's antrea-windows-config and antrea-agent-windows
// in one) and the DaemonSet of antrea-windows-with-ovs.yml.
func (m antrea) Objects(s Spec) ([]AgentObjects, error) {
	a := m.Agents()[0]
	const mount = "/var/lib/antrea-windows"
	mode, tunnel := antreaWindowsEncap, antreaWindowsTunnel
	if v := s.ModeSettings["traffic_encap_mode"]; antreaTrafficModeSupported(v) {
		mode = antreaTrafficMode(v)
	}
	if v := s.ModeSettings["tunnel_type"]; v == "geneve" || v == "vxlan" || v == "stt" {
		tunnel = v
	}
	conf, err := antreaAgentConf(s.APIServer, mode, tunnel)
	if err != nil {
		return nil, err
	}
	data := map[string]string{"antrea-agent.conf": conf, "antrea-cni.conflist": antreaCNIConfList}
	for name, tmpl := range map[string]string{
		"Install-WindowsCNI.ps1": "antrea-install-cni", "Install-OVSDriver.ps1": "antrea-install-ovs-driver",
		"Run-AntreaAgent.ps1": "antrea-agent-start", "Run-AntreaOVS.ps1": "antrea-ovs-start",
	} {
		script, err := renderScript(tmpl, map[string]any{"Mount": mount, "CNIBin": CNIBinDir, "CNIConf": CNIConfDir, "CNIConfFile": antreaCNIConf})
		if err != nil {
			return nil, err
		}
		data[name] = script
	}
	hostProcess, root := true, `NT AUTHORITY\SYSTEM`
	podLabels := s.ownedLabels(a.Name)
	for k, v := range a.Selector {
		podLabels[k] = v
	}
	container := func(name, script string) *corev1ac.ContainerApplyConfiguration {
		return corev1ac.Container().WithName(name).WithImage(AntreaWindowsImage).WithImagePullPolicy(corev1.PullIfNotPresent).
			WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
			// Upstream passes -file $env:CONTAINER_SANDBOX_MOUNT_POINT/...,
			// which hcsshim expands in a job container's command line; the
			// mount is joined inside PowerShell instead, as the other modes do.
			WithCommand(`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
				"-Command", "& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT "+psquote.Single(mount+"/"+script)+")").
			WithVolumeMounts(corev1ac.VolumeMount().WithName("antrea-agent-windows").WithMountPath(mount).WithReadOnly(true))
	}
	ds := appsv1ac.DaemonSet(a.DaemonSet, s.Namespace).WithLabels(s.ownedLabels(a.Name)).
		WithSpec(appsv1ac.DaemonSetSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(a.Selector)).
			WithUpdateStrategy(appsv1ac.DaemonSetUpdateStrategy().WithType("RollingUpdate")).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(podLabels).
				WithSpec(corev1ac.PodSpec().
					WithServiceAccountName(a.DaemonSet).
					WithHostNetwork(true).
					WithPriorityClassName("system-node-critical").
					WithNodeSelector(map[string]string{corev1.LabelOSStable: "windows"}).
					WithTolerations(
						corev1ac.Toleration().WithKey("CriticalAddonsOnly").WithOperator(corev1.TolerationOpExists),
						corev1ac.Toleration().WithOperator(corev1.TolerationOpExists).WithEffect(corev1.TaintEffectNoSchedule),
					).
					WithSecurityContext(corev1ac.PodSecurityContext().WithWindowsOptions(
						corev1ac.WindowsSecurityContextOptions().WithHostProcess(hostProcess).WithRunAsUserName(root))).
					WithInitContainers(container("install-cni", "Install-WindowsCNI.ps1"), container("install-ovs-driver", "Install-OVSDriver.ps1")).
					WithContainers(
						container("antrea-agent", "Run-AntreaAgent.ps1").WithEnv(
							fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("NODE_NAME", "spec.nodeName")),
						container("antrea-ovs", "Run-AntreaOVS.ps1")).
					WithVolumes(corev1ac.Volume().WithName("antrea-agent-windows").
						WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(a.DaemonSet))))))
	return []AgentObjects{{
		Agent:          a,
		ServiceAccount: corev1ac.ServiceAccount(a.DaemonSet, s.Namespace).WithLabels(s.ownedLabels(a.Name)),
		ClusterRoleBinding: rbacv1ac.ClusterRoleBinding(fmt.Sprintf(antreaBinding, s.Namespace)).WithLabels(s.ownedLabels(a.Name)).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(antreaClusterRole)).
			WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(a.DaemonSet).WithNamespace(s.Namespace)),
		ConfigMap: corev1ac.ConfigMap(a.DaemonSet, s.Namespace).WithLabels(s.ownedLabels(a.Name)).WithData(data),
		DaemonSet: ds,
	}}, nil
}
