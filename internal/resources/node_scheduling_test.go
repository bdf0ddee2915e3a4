package resources_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_scheduling creates three nodes from one image and a
// RuntimeClass for its build; the real scheduler places a Windows
// Deployment (runtimeClassName only: the RuntimeClass brings the node
// selector and toleration) on them, where the simulated kubelets run its
// pods, and keeps a Linux Deployment off them.
func TestAccNode_scheduling(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	nodes := []string{acctest.NodeName("sch"), acctest.NodeName("sch"), acctest.NodeName("sch")}
	rc := acctest.Name("win-rc")
	config := acctest.NodeConfig(image, nodes, "") + fmt.Sprintf(`
resource "windows_runtime_class" "rc" {
  provider = windows.admin
  name          = %q
  windows_build = windows_golden_image.test.windows_build
}
`, rc)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(s *terraform.State) error {
				if err := acctest.CheckNodesReady(t, nodes...)(s); err != nil {
					return err
				}
				k := acctest.Kube(t)
				ns := createNamespace(t, k, "sched")
				ctx := context.Background()
				win := deployment("web", 3, corev1.PodSpec{RuntimeClassName: ptr.To(rc)})
				// The same, spelled out as the Kubernetes Windows guide does.
				explicit := deployment("iis", 3, corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"},
					Tolerations:  []corev1.Toleration{osWindowsToleration},
				})
				linux := deployment("linux", 2, corev1.PodSpec{})
				for _, d := range []*appsv1.Deployment{win, explicit, linux} {
					if _, err := k.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
						return err
					}
				}
				// Every Windows pod Running on one of our nodes.
				var placed []string
				err := acctest.Eventually(90*time.Second, "6 Windows pods Running on the Windows nodes", func(ctx context.Context) (bool, error) {
					pods, err := k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app in (web,iis)"})
					if err != nil {
						return false, err
					}
					placed = placed[:0]
					for _, p := range pods.Items {
						if p.Status.Phase != corev1.PodRunning {
							return false, fmt.Errorf("pod %s is %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
						}
						if !slices.Contains(nodes, p.Spec.NodeName) {
							return false, fmt.Errorf("pod %s runs on %q, not one of %v", p.Name, p.Spec.NodeName, nodes)
						}
						placed = append(placed, p.Spec.NodeName)
					}
					return len(placed) == 6, nil
				})
				if err != nil {
					return err
				}
				t.Logf("Windows pods placed on %v", placed)
				if slices.Sort(placed); len(slices.Compact(placed)) < 2 {
					return fmt.Errorf("the scheduler put every Windows pod on %v: the nodes are not all schedulable", placed)
				}
				// The scheduler has tried the Linux pods and found no node:
				// the os=windows:NoSchedule taint keeps them off.
				return acctest.Eventually(60*time.Second, "Linux pods unschedulable", func(ctx context.Context) (bool, error) {
					pods, err := k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=linux"})
					if err != nil {
						return false, err
					}
					if len(pods.Items) != 2 {
						return false, fmt.Errorf("%d Linux pods", len(pods.Items))
					}
					for _, p := range pods.Items {
						if slices.Contains(nodes, p.Spec.NodeName) {
							return false, fmt.Errorf("Linux pod %s was placed on Windows node %s", p.Name, p.Spec.NodeName)
						}
						if !unschedulable(&p) {
							return false, fmt.Errorf("Linux pod %s: phase %s, node %q, conditions %v", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
						}
					}
					return true, nil
				})
			},
		}},
	})
}

func deployment(app string, replicas int32, spec corev1.PodSpec) *appsv1.Deployment {
	spec.Containers = []corev1.Container{{Name: app, Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}}
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return p.Spec.NodeName == ""
		}
	}
	return false
}
