package kube

import (
	"bytes"
	"embed"
	"fmt"
	"net"
	"sort"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// Node networking modes: what windows_node_networking installs for the
// Windows nodes of one cluster. Each is an entry of networkingModes, so a
// new CNI (Calico, Antrea) is a new entry with its own agents, not a change
// to the resource.
const (
	// NetworkingFlannel: flannel's VXLAN overlay (VNI 4096, port 4789).
	// kube-proxy and flanneld run as HostProcess DaemonSets with
	// ServiceAccounts of their own.
	NetworkingFlannel = "flannel"
	// NetworkingNone: the cluster's own CNI (Calico, Antrea) installs its
	// Windows agent and kube-proxy itself; the provider installs nothing.
	NetworkingNone = "none"
)

// DefaultHostProcessImage is the image the agents' HostProcess containers
// start from: Microsoft's HostProcess base image, an empty layer (the
// programs run are the host's own, which the golden image verified), prepulled
// into the image so air-gapped sites need only a registry mirror.
// https://github.com/microsoft/windows-host-process-containers-base-image
const DefaultHostProcessImage = "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"

// Labels every object the networking resource owns carries; the last one is
// how Delete and import find them.
const (
	LabelPartOf        = "app.kubernetes.io/part-of"
	LabelComponent     = "app.kubernetes.io/component"
	NetworkingPartOf   = "windows-node-networking"
	labelAgentSelector = "windows.wincluster.io/agent"
)

// Paths on the Windows host that the agents and the join agree on.
const (
	hostKubeProxyExe = `C:\k\kube-proxy.exe`
	hostFlanneldExe  = `C:\k\flanneld.exe`
	hostCNIBinDir    = `C:\opt\cni\bin`
	// FlannelNetworkName is the HNS network flannel's VXLAN backend creates
	// on Windows ("flannel.<VNI>"), which kube-proxy's winkernel proxier and
	// the CNI configuration name.
	FlannelNetworkName = "flannel.4096"
)

// NetworkingSpec is what windows_node_networking installs.
type NetworkingSpec struct {
	Namespace        string
	Mode             string // NetworkingFlannel or NetworkingNone
	HostProcessImage string
	// APIServer is the URL the agents reach the API server at: the
	// discovered endpoint, never the kubernetes Service VIP (that VIP only
	// works once kube-proxy runs on the node, which is what kube-proxy is
	// starting to do).
	APIServer   string
	ClusterCIDR string // the pod network flannel hands out subnets from
	ServiceCIDR string
}

// Agent is a node agent a mode runs on every Windows node: one DaemonSet
// with its own ServiceAccount.
type Agent struct {
	// Name is what messages call it: "kube-proxy", "flannel".
	Name      string
	DaemonSet string
	// Selector selects the agent's pods (the DaemonSet's selector).
	Selector map[string]string
}

// networkingMode is one entry of the mode table.
type networkingMode struct {
	// agents are the DaemonSets the mode runs on every Windows node.
	agents func(s NetworkingSpec) ([]agentObjects, error)
	// needs names the cluster facts the mode needs, for validation.
	needsClusterCIDR bool
}

var networkingModes = map[string]networkingMode{
	NetworkingFlannel: {agents: flannelAgents, needsClusterCIDR: true},
	NetworkingNone:    {agents: func(NetworkingSpec) ([]agentObjects, error) { return nil, nil }},
}

// NetworkingModes lists the modes, sorted, for validators and docs.
func NetworkingModes() []string {
	out := make([]string, 0, len(networkingModes))
	for m := range networkingModes {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// agentObjects is everything one agent needs: its identity, its RBAC, its
// configuration and its DaemonSet.
type agentObjects struct {
	agent              Agent
	serviceAccount     *corev1ac.ServiceAccountApplyConfiguration
	clusterRole        *rbacv1ac.ClusterRoleApplyConfiguration // nil when it binds a role that exists (system:node-proxier)
	clusterRoleBinding *rbacv1ac.ClusterRoleBindingApplyConfiguration
	configMap          *corev1ac.ConfigMapApplyConfiguration
	daemonSet          *appsv1ac.DaemonSetApplyConfiguration
}

// NetworkingObjects is the rendered set of objects of a spec.
type NetworkingObjects struct {
	Spec   NetworkingSpec
	agents []agentObjects
}

// Agents are the node agents of the spec's mode.
func (o *NetworkingObjects) Agents() []Agent {
	out := make([]Agent, 0, len(o.agents))
	for _, a := range o.agents {
		out = append(out, a.agent)
	}
	return out
}

// Validate reports the first problem of a spec.
func (s NetworkingSpec) Validate() error {
	mode, ok := networkingModes[s.Mode]
	switch {
	case !ok:
		return fmt.Errorf("unknown CNI mode %q (one of %s)", s.Mode, strings.Join(NetworkingModes(), ", "))
	case s.Namespace == "":
		return fmt.Errorf("no namespace")
	case s.Mode == NetworkingNone:
		return nil
	case !strings.HasPrefix(s.APIServer, "https://"):
		return fmt.Errorf("API server %q is not an https URL", s.APIServer)
	case s.HostProcessImage == "":
		return fmt.Errorf("no HostProcess image")
	}
	if mode.needsClusterCIDR {
		if _, _, err := net.ParseCIDR(s.ClusterCIDR); err != nil {
			return fmt.Errorf("%s needs the cluster (pod) CIDR: %q is not a CIDR", s.Mode, s.ClusterCIDR)
		}
		if _, _, err := net.ParseCIDR(s.ServiceCIDR); err != nil {
			return fmt.Errorf("%s needs the service CIDR: %q is not a CIDR", s.Mode, s.ServiceCIDR)
		}
	}
	return nil
}

// Render builds the objects of a spec.
func (s NetworkingSpec) Render() (*NetworkingObjects, error) {
	if s.HostProcessImage == "" {
		s.HostProcessImage = DefaultHostProcessImage
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	agents, err := networkingModes[s.Mode].agents(s)
	if err != nil {
		return nil, err
	}
	return &NetworkingObjects{Spec: s, agents: agents}, nil
}

// FlannelCNIConfig is the CNI configuration list a flannel-mode node uses
// (written by the join to C:\etc\cni\net.d\10-flannel.conflist): the
// flannel CNI plugin (flannel-io/cni-plugin, Windows release) delegating to
// win-overlay (containernetworking/plugins) on the flannel.4096 network,
// with the capabilities containerd fills in at runtime (portMappings for
// hostPort, dns for the pod's search domains) and the policies flannel's
// Windows guide uses: no NAT towards the pod and service networks, and the
// service CIDR routed through the overlay (ROUTE with NeedEncap), so that
// service traffic reaches kube-proxy's load balancers.
// https://github.com/flannel-io/flannel/blob/master/Documentation/kubernetes.md (Windows),
// https://github.com/kubernetes-sigs/sig-windows-tools/blob/master/hostprocess/flannel/flanneld/flannel-overlay.yml
func FlannelCNIConfig(clusterCIDR, serviceCIDR string, dns []string, domain string) map[string]any {
	return map[string]any{
		"cniVersion": "0.3.0",
		"name":       FlannelNetworkName,
		"plugins": []any{map[string]any{
			"type":         "flannel",
			"capabilities": map[string]any{"portMappings": true, "dns": true},
			"delegate": map[string]any{
				"type": "win-overlay",
				// win-overlay needs flannel's VXLAN MAC prefix
				// (flannel-io/cni-plugin README, Windows support; flannel
				// pkg/backend/vxlan/vxlan_windows.go default MacPrefix).
				"endpointMacPrefix": "0E-2A",
				"dns":               map[string]any{"Nameservers": dns, "Search": []string{"svc." + domain, domain}},
				"policies": []any{
					map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{
						"Type": "OutBoundNAT", "ExceptionList": []string{clusterCIDR, serviceCIDR}}},
					map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{
						"Type": "ROUTE", "DestinationPrefix": serviceCIDR, "NeedEncap": true}},
				},
			},
		}},
	}
}

//go:embed templates/*.ps1.tmpl
var scriptFS embed.FS

var scripts = template.Must(template.New("").Funcs(template.FuncMap{
	"ps": psquote.Single,
}).ParseFS(scriptFS, "templates/*.ps1.tmpl"))

func renderScript(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := scripts.ExecuteTemplate(&b, name+".ps1.tmpl", data); err != nil {
		return "", fmt.Errorf("rendering %s: %w", name, err)
	}
	return b.String(), nil
}

// mountPlaceholder stands for $env:CONTAINER_SANDBOX_MOUNT_POINT in the
// agents' kubeconfig: client-go does not expand it, so each start script
// replaces it before use (as upstream's start.ps1 does for /var, see
// kubernetes/kubernetes#104490).
const mountPlaceholder = "CONTAINER_SANDBOX_MOUNT_POINT"

// saDir is where Kubernetes projects a pod's ServiceAccount token and CA;
// in a HostProcess container it is under the container's mount point.
const saDir = `/var/run/secrets/kubernetes.io/serviceaccount`

// agentKubeconfig points an agent at the API server with its pod's
// ServiceAccount token (a file the kubelet rotates: client-go re-reads
// tokenFile) and the cluster CA of the same projected volume.
func agentKubeconfig(server string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: mountPlaceholder + saDir + "/ca.crt"}
	cfg.AuthInfos["agent"] = &clientcmdapi.AuthInfo{TokenFile: mountPlaceholder + saDir + "/token"}
	cfg.Contexts["agent"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "agent"}
	cfg.CurrentContext = "agent"
	b, err := clientcmd.Write(*cfg)
	return string(b), err
}

func ownedLabels(component string) map[string]string {
	return map[string]string{LabelManagedBy: FieldManager, LabelPartOf: NetworkingPartOf, LabelComponent: component}
}

// hostProcessDaemonSet is an agent's DaemonSet: a HostProcess pod (stable
// since v1.26) as NT AUTHORITY\SYSTEM on the host network of every Windows
// node, tolerating every NoSchedule and NoExecute taint (the os=windows
// taint users set, and node.kubernetes.io/not-ready, which DaemonSets do not
// tolerate by default for NoSchedule: a flannel-mode node is not Ready until
// its agents ran), as system-node-critical, running the start script from
// its ConfigMap with powershell.exe of the host.
// https://kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod/
func hostProcessDaemonSet(s NetworkingSpec, a Agent, serviceAccount, configMap, script string, env []*corev1ac.EnvVarApplyConfiguration) *appsv1ac.DaemonSetApplyConfiguration {
	hostProcess, root := true, `NT AUTHORITY\SYSTEM`
	podLabels := ownedLabels(a.Name)
	for k, v := range a.Selector {
		podLabels[k] = v
	}
	mount := "/etc/" + configMap
	cmd := "& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT " + psquote.Single(mount+"/"+script) + ")"
	return appsv1ac.DaemonSet(a.DaemonSet, s.Namespace).WithLabels(ownedLabels(a.Name)).
		WithSpec(appsv1ac.DaemonSetSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(a.Selector)).
			WithUpdateStrategy(appsv1ac.DaemonSetUpdateStrategy().WithType("RollingUpdate")).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(podLabels).
				WithSpec(corev1ac.PodSpec().
					WithServiceAccountName(serviceAccount).
					WithHostNetwork(true).
					WithPriorityClassName("system-node-critical").
					WithNodeSelector(map[string]string{LabelOS: "windows"}).
					WithTolerations(
						corev1ac.Toleration().WithOperator(corev1.TolerationOpExists).WithEffect(corev1.TaintEffectNoSchedule),
						corev1ac.Toleration().WithOperator(corev1.TolerationOpExists).WithEffect(corev1.TaintEffectNoExecute),
						corev1ac.Toleration().WithKey("CriticalAddonsOnly").WithOperator(corev1.TolerationOpExists),
					).
					WithSecurityContext(corev1ac.PodSecurityContext().WithWindowsOptions(
						corev1ac.WindowsSecurityContextOptions().WithHostProcess(hostProcess).WithRunAsUserName(root))).
					WithContainers(corev1ac.Container().WithName(a.Name).WithImage(s.HostProcessImage).
						WithImagePullPolicy(corev1.PullIfNotPresent).
						// The last lines of a failed run become the
						// container's termination message, which windows_node
						// shows when an agent does not turn Ready (pods/log
						// needs the kubelet's server, not always reachable).
						WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
						// By absolute path: the base image sets no PATH (its
						// README adds one in the Dockerfile), and powershell.exe
						// is not in System32 itself.
						WithCommand(`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", cmd).
						WithEnv(env...).
						WithVolumeMounts(corev1ac.VolumeMount().WithName("config").WithMountPath(mount).WithReadOnly(true))).
					WithVolumes(corev1ac.Volume().WithName("config").
						WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(configMap))))))
}

func fieldEnv(name, path string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(path)))
	// (apiVersion as the server defaults it, so what we apply is what we read back.)
}

// Names of the flannel mode's objects.
const (
	KubeProxyWindows = "kube-proxy-windows"
	FlannelWindows   = "kube-flannel-windows"
	FlannelWindowsDS = "kube-flannel-ds-windows"
	// Cluster-wide names carry the namespace: one networking per cluster is
	// the design, but two (a test, a migration) must not take over each
	// other's bindings.
	kubeProxyBinding       = "windows-node-networking:%s:kube-proxy-windows"
	flannelClusterRoleName = "windows-node-networking:%s:flannel-windows"
	// nodeProxierRole is the role kubeadm binds its Linux kube-proxy to
	// (ClusterRoleBinding kubeadm:node-proxier): list/watch endpointslices,
	// services and nodes, create events.
	nodeProxierRole = "system:node-proxier"
)

// flannelAgents are kube-proxy (winkernel, overlay) and flanneld.
func flannelAgents(s NetworkingSpec) ([]agentObjects, error) {
	kubeconfig, err := agentKubeconfig(s.APIServer)
	if err != nil {
		return nil, err
	}
	proxyScript, err := renderScript("kube-proxy-start", map[string]any{
		"Exe": hostKubeProxyExe, "Network": FlannelNetworkName, "ClusterCIDR": s.ClusterCIDR,
		"Placeholder": mountPlaceholder, "Mount": "/etc/" + KubeProxyWindows, "CNIBin": hostCNIBinDir,
	})
	if err != nil {
		return nil, err
	}
	netConf := fmt.Sprintf(`{"Network": %q, "Backend": {"Type": "vxlan", "VNI": %d, "Port": %d}}`, s.ClusterCIDR, WindowsVXLANVNI, WindowsVXLANPort)
	flannelScript, err := renderScript("flanneld-start", map[string]any{
		"Exe": hostFlanneldExe, "Placeholder": mountPlaceholder, "Mount": "/etc/" + FlannelWindows,
	})
	if err != nil {
		return nil, err
	}

	agents := ModeAgents(NetworkingFlannel)
	proxy, flannel := agents[0], agents[1]
	sa := func(name, component string) *corev1ac.ServiceAccountApplyConfiguration {
		return corev1ac.ServiceAccount(name, s.Namespace).WithLabels(ownedLabels(component))
	}
	binding := func(name, role, subject, component string) *rbacv1ac.ClusterRoleBindingApplyConfiguration {
		return rbacv1ac.ClusterRoleBinding(name).WithLabels(ownedLabels(component)).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(role)).
			WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(subject).WithNamespace(s.Namespace))
	}
	return []agentObjects{
		{
			agent:              proxy,
			serviceAccount:     sa(KubeProxyWindows, proxy.Name),
			clusterRoleBinding: binding(fmt.Sprintf(kubeProxyBinding, s.Namespace), nodeProxierRole, KubeProxyWindows, proxy.Name),
			configMap: corev1ac.ConfigMap(KubeProxyWindows, s.Namespace).WithLabels(ownedLabels(proxy.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "start.ps1": proxyScript}),
			daemonSet: hostProcessDaemonSet(s, proxy, KubeProxyWindows, KubeProxyWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				fieldEnv("NODE_NAME", "spec.nodeName"),
				// winkernel reads the network's name from KUBE_NETWORK when
				// --network-name is empty (pkg/proxy/winkernel/proxier.go);
				// the script passes both.
				corev1ac.EnvVar().WithName("KUBE_NETWORK").WithValue(FlannelNetworkName),
			}),
		},
		{
			agent:          flannel,
			serviceAccount: sa(FlannelWindows, flannel.Name),
			// flannel's own ClusterRole (kube-flannel.yml of
			// flannel-io/flannel): its pod, and nodes to list and watch
			// (the kube subnet manager reads every node's subnet lease) and
			// patch the status of (its own lease annotations).
			clusterRole: rbacv1ac.ClusterRole(fmt.Sprintf(flannelClusterRoleName, s.Namespace)).WithLabels(ownedLabels(flannel.Name)).WithRules(
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("pods").WithVerbs("get"),
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes").WithVerbs("get", "list", "watch"),
				rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes/status").WithVerbs("patch"),
			),
			clusterRoleBinding: binding(fmt.Sprintf(flannelClusterRoleName, s.Namespace), fmt.Sprintf(flannelClusterRoleName, s.Namespace), FlannelWindows, flannel.Name),
			configMap: corev1ac.ConfigMap(FlannelWindows, s.Namespace).WithLabels(ownedLabels(flannel.Name)).
				WithData(map[string]string{"kubeconfig.conf": kubeconfig, "net-conf.json": netConf, "start.ps1": flannelScript}),
			daemonSet: hostProcessDaemonSet(s, flannel, FlannelWindows, FlannelWindows, "start.ps1", []*corev1ac.EnvVarApplyConfiguration{
				// The kube subnet manager finds its Node through its pod
				// (POD_NAME/POD_NAMESPACE) or NODE_NAME (flannel
				// pkg/subnet/kube/kube.go): the downward API gives all three
				// to the process, which a service's environment never had.
				fieldEnv("POD_NAME", "metadata.name"),
				fieldEnv("POD_NAMESPACE", "metadata.namespace"),
				fieldEnv("NODE_NAME", "spec.nodeName"),
				fieldEnv("HOST_IP", "status.hostIP"),
			}),
		},
	}, nil
}

// KubeProxyBindingName is the ClusterRoleBinding of kube-proxy-windows in a
// namespace.
func KubeProxyBindingName(namespace string) string { return fmt.Sprintf(kubeProxyBinding, namespace) }

// ModeAgents are the node agents a mode runs, without rendering its objects:
// what a node waits for.
func ModeAgents(mode string) []Agent {
	switch mode {
	case NetworkingFlannel:
		return []Agent{
			{Name: "kube-proxy", DaemonSet: KubeProxyWindows, Selector: map[string]string{labelAgentSelector: KubeProxyWindows}},
			{Name: "flannel", DaemonSet: FlannelWindowsDS, Selector: map[string]string{labelAgentSelector: FlannelWindowsDS}},
		}
	}
	return nil
}

// CNICheck is the readiness check of the cluster's network plugin alone,
// for windows_node_networking's plan.
func (cl *Cluster) CNICheck() Check { return cl.checkCNI() }
