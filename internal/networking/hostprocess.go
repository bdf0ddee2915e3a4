package networking

import (
	"bytes"
	"embed"
	"fmt"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/internal/psquote"
)

// What modes whose agents run as HostProcess pods share: the image, the
// labels, the DaemonSet, the agents' kubeconfig and their start scripts.

// DefaultHostProcessImage is the image the agents' HostProcess containers
// start from: Microsoft's HostProcess base image, an empty layer (the
// programs run are the host's own, which the golden image verified), prepulled
// into the image so air-gapped sites need only a registry mirror.
// https://github.com/microsoft/windows-host-process-containers-base-image
// Pinned by the digest mcr.microsoft.com serves for the tag v1.0.0, as
// Microsoft's own HostProcess agents pin it (Azure/azure-container-networking's
// Dockerfiles, which record `skopeo inspect ... --format "{{.Name}}@{{.Digest}}"`
// of the tag): a mirror that serves other content under the tag is refused
// by containerd rather than run as SYSTEM on every Windows node.
const DefaultHostProcessImage = "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0@sha256:b4c9637e032f667c52d1eccfa31ad8c63f1b035e8639f3f48a510536bf34032b"

// Labels of the agents' objects: the component (the agent's name) on
// every object, and the agent's selector on its pods.
const (
	LabelComponent     = "app.kubernetes.io/component"
	labelAgentSelector = "windows.wincluster.io/agent"
)

// agentSelector selects the pods of the agent whose DaemonSet is ds.
func agentSelector(ds string) map[string]string { return map[string]string{labelAgentSelector: ds} }

// ownedLabels are the spec's labels with the component's.
func (s Spec) ownedLabels(component string) map[string]string {
	out := map[string]string{LabelComponent: component}
	for k, v := range s.Labels {
		out[k] = v
	}
	return out
}

//go:embed templates/*.ps1.tmpl
var scriptFS embed.FS

var scripts = template.Must(template.New("").Funcs(template.FuncMap{
	"ps": psquote.Single,
}).ParseFS(scriptFS, "templates/*.ps1.tmpl"))

// renderScript renders templates/<name>.ps1.tmpl.
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

// hostProcessDaemonSet is an agent's DaemonSet: a HostProcess pod (stable
// since v1.26) as NT AUTHORITY\SYSTEM on the host network of every Windows
// node, tolerating every NoSchedule and NoExecute taint (the os=windows
// taint users set, and node.kubernetes.io/not-ready, which DaemonSets do not
// tolerate by default for NoSchedule: a node is not Ready until its
// network agents ran), as system-node-critical, running the start script
// from its ConfigMap with powershell.exe of the host.
// https://kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod/
func hostProcessDaemonSet(s Spec, a Agent, serviceAccount, configMap, script string, env []*corev1ac.EnvVarApplyConfiguration) *appsv1ac.DaemonSetApplyConfiguration {
	hostProcess, root := true, `NT AUTHORITY\SYSTEM`
	podLabels := s.ownedLabels(a.Name)
	for k, v := range a.Selector {
		podLabels[k] = v
	}
	mount := "/etc/" + configMap
	cmd := "& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT " + psquote.Single(mount+"/"+script) + ")"
	return appsv1ac.DaemonSet(a.DaemonSet, s.Namespace).WithLabels(s.ownedLabels(a.Name)).
		WithSpec(appsv1ac.DaemonSetSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(a.Selector)).
			WithUpdateStrategy(appsv1ac.DaemonSetUpdateStrategy().WithType("RollingUpdate")).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(podLabels).
				WithSpec(corev1ac.PodSpec().
					WithServiceAccountName(serviceAccount).
					WithHostNetwork(true).
					WithPriorityClassName("system-node-critical").
					WithNodeSelector(map[string]string{corev1.LabelOSStable: "windows"}).
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

// fieldEnv is an environment variable from the downward API (apiVersion as
// the server defaults it, so what is applied is what is read back).
func fieldEnv(name, path string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(path)))
}
