package kube_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestProbeAdmission holds the provider's role to what the network probe
// needs in its namespace, against the sandbox's API server, as the
// everyday identity: the probe's own NodePort Service, pod and
// EndpointSlice are admitted; every escape the issue found (another image,
// a Linux pod, a command or other args, nodeName, host namespaces, added
// capabilities, a host port, a toleration of every taint, HostProcess, a
// Service with a selector, an EndpointSlice to an address outside the pod
// network) is refused by the policy it names, and a pod in another
// namespace by the missing permission. The manifest admits exactly
// kube.ProbeImage.
func TestProbeAdmission(t *testing.T) {
	if !strings.Contains(string(rbac.Manifest), "'"+kube.ProbeImage+"'") {
		t.Fatalf("the probe's admission policy does not admit kube.ProbeImage %s", kube.ProbeImage)
	}
	s, _ := cluster(t)
	ctx := t.Context()
	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	labels := map[string]string{"app.kubernetes.io/name": "network-probe", "app.kubernetes.io/managed-by": "terraform-provider-windows"}
	no, yes := false, true
	// pod is the probe's pod as runProbePod makes it; edit changes it.
	pod := func(name string, edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no,
			OS:           &corev1.PodOS{Name: corev1.Windows},
			NodeSelector: map[string]string{"kubernetes.io/hostname": "nowhere-" + suffix},
			Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
			Containers:   []corev1.Container{{Name: "c", Image: kube.ProbeImage, Args: []string{"connect", "10.244.0.10:53", "--timeout=10s"}}}}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	pods := provider.CoreV1().Pods(rbac.Namespace)
	svcs := provider.CoreV1().Services(rbac.Namespace)
	slices := provider.DiscoveryV1().EndpointSlices(rbac.Namespace)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if _, err := pods.Create(ctx, pod("network-probe-ok-"+suffix, nil), dryRun); err != nil {
		t.Errorf("the probe's own pod: %v", err)
	}
	nodePort := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "network-probe-ok-" + suffix, Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolTCP}}}}
	if _, err := svcs.Create(ctx, nodePort, dryRun); err != nil {
		t.Errorf("the probe's own NodePort Service: %v", err)
	}
	slice := func(addressType discoveryv1.AddressType, address string) *discoveryv1.EndpointSlice {
		l := map[string]string{discoveryv1.LabelServiceName: nodePort.Name}
		for k, v := range labels {
			l[k] = v
		}
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: nodePort.Name, Labels: l}, AddressType: addressType,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{address}}}}
	}
	// The sandbox's pod network (kubeadm-config networking.podSubnet) is 10.244.0.0/16.
	if _, err := slices.Create(ctx, slice(discoveryv1.AddressTypeIPv4, "10.244.1.7"), dryRun); err != nil {
		t.Errorf("the probe's own EndpointSlice, to a pod address: %v", err)
	}

	refused := func(what, policy string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+policy+"'") {
			t.Errorf("%s: %v, want a refusal by %s", what, err, policy)
		}
	}
	podEscapes := map[string]func(*corev1.Pod){
		"the image by tag alone":   func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.k8s.io/e2e-test-images/agnhost:2.53" },
		"a Linux pod":              func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Linux} },
		"no spec.os":               func(p *corev1.Pod) { p.Spec.OS = nil },
		"a command":                func(p *corev1.Pod) { p.Spec.Containers[0].Command = []string{"/bin/sh", "-c"} },
		"other args (a shell)":     func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"exec", "--", "sh"} },
		"spec.nodeName":            func(p *corev1.Pod) { p.Spec.NodeName = "tpw-control-plane" },
		"the host's PID namespace": func(p *corev1.Pod) { p.Spec.HostPID = true },
		"the host's IPC namespace": func(p *corev1.Pod) { p.Spec.HostIPC = true },
		"the host's network":       func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"an added capability": func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		},
		"a privileged container": func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		},
		"a host port": func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 10250, HostPort: 10250}}
		},
		"a toleration of every taint": func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
		},
		"HostProcess": func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}
		},
		"a priority class":     func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" },
		"no hostname selector": func(p *corev1.Pod) { p.Spec.NodeSelector = nil },
		"unlabelled":           func(p *corev1.Pod) { p.Labels = nil },
	}
	// The API server's validation of a Windows pod (spec.os.name windows,
	// which the policy requires) refuses host namespaces, capabilities and
	// privileged containers before any admission; Pod Security admission
	// (the namespace enforces baseline) runs before the admission policies:
	// of what either forbids, any may be the one to refuse.
	earlier := map[string]bool{"the host's PID namespace": true, "the host's IPC namespace": true, "the host's network": true,
		"an added capability": true, "a privileged container": true, "a host port": true, "HostProcess": true}
	for what, edit := range podEscapes {
		_, err := pods.Create(ctx, pod("network-probe-x-"+suffix, edit), dryRun)
		if earlier[what] && (apierrors.IsForbidden(err) && strings.Contains(err.Error(), `violates PodSecurity "baseline:latest"`) ||
			apierrors.IsInvalid(err) && strings.Contains(err.Error(), "cannot be set for a windows pod")) {
			continue
		}
		refused("a pod with "+what, rbac.PolicyProbe, err)
	}
	other := pod("network-probe-ns-"+suffix, nil)
	if _, err := provider.CoreV1().Pods("default").Create(ctx, other, dryRun); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "cannot create resource \"pods\"") {
		t.Errorf("a probe pod in another namespace: %v, want Forbidden by RBAC", err)
	}
	selected := nodePort.DeepCopy()
	selected.Name, selected.Spec.Selector = "network-probe-sel-"+suffix, map[string]string{"app": "web"}
	_, err = svcs.Create(ctx, selected, dryRun)
	refused("a Service with a selector", rbac.PolicyProbe, err)
	// Loopback and link-local addresses (169.254.169.254) the API server's
	// validation refuses itself; the policy refuses the rest outside the
	// pod network.
	for _, a := range []string{"127.0.0.1", "169.254.169.254"} {
		if _, err := slices.Create(ctx, slice(discoveryv1.AddressTypeIPv4, a), dryRun); !apierrors.IsInvalid(err) {
			t.Errorf("an EndpointSlice to %s: %v, want Invalid", a, err)
		}
	}
	for what, sl := range map[string]*discoveryv1.EndpointSlice{
		"vCenter's address (CVE-2021-25740)": slice(discoveryv1.AddressTypeIPv4, "10.0.0.10"),
		"a Service's ClusterIP":              slice(discoveryv1.AddressTypeIPv4, "10.96.0.1"),
		"an FQDN":                            slice(discoveryv1.AddressTypeFQDN, "vcenter.example.com"),
	} {
		_, err := slices.Create(ctx, sl, dryRun)
		refused("an EndpointSlice to "+what, rbac.PolicyProbeEndpoints, err)
	}
}
