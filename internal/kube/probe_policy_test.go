package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestProbeAdmission holds the provider's role to what the network probe
// needs in its namespace, against the sandbox's API server: the probe's own
// NodePort Service and pod are admitted; a pod of another image, a
// HostProcess pod, a Service with a selector, and unlabelled objects are
// refused by the terraform-provider-windows-probe policy. The manifest
// admits exactly kube.ProbeImage.
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
	no := false
	pod := func(name, image string, hostProcess bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: &no,
			NodeSelector: map[string]string{"kubernetes.io/hostname": "nowhere-" + suffix},
			Containers:   []corev1.Container{{Name: "c", Image: image, Args: []string{"connect", "10.0.0.1:53"}}}}}
		if hostProcess {
			yes := true
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}
		}
		return p
	}
	pods := provider.CoreV1().Pods(rbac.Namespace)
	svcs := provider.CoreV1().Services(rbac.Namespace)
	del := func(f func(context.Context, string, metav1.DeleteOptions) error, name string) {
		t.Cleanup(func() { _ = f(context.Background(), name, metav1.DeleteOptions{}) })
	}
	if _, err := pods.Create(ctx, pod("network-probe-ok-"+suffix, kube.ProbeImage, false), metav1.CreateOptions{}); err != nil {
		t.Errorf("the probe's own pod: %v", err)
	}
	del(pods.Delete, "network-probe-ok-"+suffix)
	nodePort := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "network-probe-ok-" + suffix, Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolTCP}}}}
	if _, err := svcs.Create(ctx, nodePort, metav1.CreateOptions{}); err != nil {
		t.Errorf("the probe's own NodePort Service: %v", err)
	}
	del(svcs.Delete, nodePort.Name)

	refused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || err == nil || !strings.Contains(err.Error(), "terraform-provider-windows-probe") {
			t.Errorf("%s: %v, want a refusal by terraform-provider-windows-probe", what, err)
		}
	}
	_, err = pods.Create(ctx, pod("network-probe-img-"+suffix, "registry.k8s.io/e2e-test-images/agnhost:2.53", false), metav1.CreateOptions{})
	refused("a pod of the image by tag alone", err)
	del(pods.Delete, "network-probe-img-"+suffix)
	_, err = pods.Create(ctx, pod("network-probe-hpc-"+suffix, kube.ProbeImage, true), metav1.CreateOptions{})
	refused("a HostProcess pod", err)
	del(pods.Delete, "network-probe-hpc-"+suffix)
	unlabelled := pod("other-"+suffix, kube.ProbeImage, false)
	unlabelled.Labels = nil
	_, err = pods.Create(ctx, unlabelled, metav1.CreateOptions{})
	refused("an unlabelled pod", err)
	del(pods.Delete, unlabelled.Name)
	selected := nodePort.DeepCopy()
	selected.Name, selected.Spec.Selector = "network-probe-sel-"+suffix, map[string]string{"app": "web"}
	_, err = svcs.Create(ctx, selected, metav1.CreateOptions{})
	refused("a Service with a selector", err)
	del(svcs.Delete, selected.Name)
}
