package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_drainHonoursPDB: a Windows Deployment on the only Windows
// node, with a PodDisruptionBudget that allows no disruption, stops the
// destroy within its delete timeout with an error naming the budget; the
// node stays (cordoned) in the cluster and the state. Once the budget is
// gone the destroy drains and removes the node.
func TestAccNode_drainHonoursPDB(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("pdb")
	config := acctest.NodeConfig(image, []string{node}, `  timeouts {
    delete = "10s"
  }
`)
	var ns string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					k := acctest.Kube(t)
					ns = createNamespace(t, k, "pdb")
					ctx := context.Background()
					d := deployment("web", 2, corev1.PodSpec{
						NodeSelector: map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/hostname": node},
						Tolerations:  []corev1.Toleration{osWindowsToleration},
					})
					if _, err := k.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
						return err
					}
					pdb := &policyv1.PodDisruptionBudget{
						ObjectMeta: metav1.ObjectMeta{Name: "web"},
						Spec: policyv1.PodDisruptionBudgetSpec{
							MinAvailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 2},
							Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
						},
					}
					if _, err := k.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
						return err
					}
					// The disruption controller has seen both pods healthy.
					return acctest.Eventually(60*time.Second, "the budget sees 2 healthy pods", func(ctx context.Context) (bool, error) {
						p, err := k.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
						if err != nil {
							return false, err
						}
						return p.Status.CurrentHealthy == 2 && p.Status.ExpectedPods == 2, fmt.Errorf("status %+v", p.Status)
					})
				},
			},
			{
				// The 10 s delete timeout ends the drain, not the 10 m drain
				// timeout, and the error says which.
				Config:  config,
				Destroy: true,
				ExpectError: acctest.Wrapped(`(?s)deleting Windows node \(` + node + `\).*draining Node "` + node + `": interrupted \(context deadline exceeded\) before the drain timeout of 10m0s.*` +
					`PodDisruptionBudget pdb-[0-9]+/web \(minAvailable 2, 2 of 2 healthy, 0 disruptions allowed\) allows no disruption`),
			},
			{
				// The failed destroy kept the node: still in the cluster,
				// cordoned, its pods still running.
				PreConfig: func() {
					k := acctest.Kube(t)
					n, err := k.FindNode(context.Background(), node)
					if err != nil {
						t.Fatalf("the failed destroy removed the Node: %v", err)
					}
					if !n.Spec.Unschedulable {
						t.Errorf("the Node is not cordoned after the failed drain")
					}
					if id, err := acctest.VMAt(t, node); err != nil || id == "" {
						t.Fatalf("the failed destroy removed the VM (err %v)", err)
					}
					if err := k.PolicyV1().PodDisruptionBudgets(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:  config,
				Destroy: true,
			},
		},
	})
}
