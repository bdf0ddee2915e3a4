package resources_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_readinessChecks: a Linux DaemonSet with no OS selector that
// tolerates every taint would put its pods on the new Windows node, so the
// plan stops with the check's ID and remedy; skip_checks lets the user
// through. (The template is known at plan time from the second step on,
// which the checks need: the image is built in the first.)
func TestAccNode_readinessChecks(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := nodeName("chk")
	var ns string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNodesDestroyed(t),
		Steps: []resource.TestStep{
			{Config: goldenImageConfig(image, nil)},
			{
				PreConfig: func() {
					k := acctest.Kube(t)
					ns = createNamespace(t, k, "chk")
					labels := map[string]string{"app": "log-agent"}
					ds := &appsv1.DaemonSet{
						ObjectMeta: metav1.ObjectMeta{Name: "log-agent"},
						Spec: appsv1.DaemonSetSpec{
							Selector: &metav1.LabelSelector{MatchLabels: labels},
							Template: corev1.PodTemplateSpec{
								ObjectMeta: metav1.ObjectMeta{Labels: labels},
								Spec: corev1.PodSpec{
									Containers:  []corev1.Container{{Name: "agent", Image: "registry.k8s.io/pause:3.10"}},
									Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
								},
							},
						},
					}
					if _, err := k.AppsV1().DaemonSets(ns).Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					// Gone before the next test plans a node (a namespace
					// being deleted still holds it for a while).
					t.Cleanup(func() {
						_ = k.AppsV1().DaemonSets(ns).Delete(context.Background(), "log-agent", metav1.DeleteOptions{})
						if err := eventually(30*time.Second, "the DaemonSet deleted", func(ctx context.Context) (bool, error) {
							_, err := k.AppsV1().DaemonSets(ns).Get(ctx, "log-agent", metav1.GetOptions{})
							return apierrors.IsNotFound(err), err
						}); err != nil {
							t.Error(err)
						}
					})
				},
				Config:   nodeConfig(image, []string{node}, ""),
				PlanOnly: true,
				ExpectError: wrapped(`(?s)Cluster not ready for Windows node ` + node +
					`.*linux-daemonset:chk-[0-9]+/log-agent: DaemonSet chk-[0-9]+/log-agent has no kubernetes.io/os node selector` +
					`.*Fix: Add the node selector kubernetes.io/os=linux`),
			},
			{
				// Nothing was created by the refused plan.
				PreConfig: func() {
					if id, err := vmAt(t, node); err != nil || id != "" {
						t.Fatalf("the refused plan left VM %q (err %v)", id, err)
					}
				},
				Config: nodeConfig(image, []string{node}, `  skip_checks = ["linux-daemonset"]`),
				Check: func(*terraform.State) error {
					return checkNodeReady(t, node)
				},
			},
		},
	})
}
