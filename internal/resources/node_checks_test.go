package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_readinessChecks: the one-shot configuration (golden image and
// node in one apply, so the node's template is unknown at plan) gets its
// checks at plan. The image's kubernetes_version is checked against the API
// server by the image; a Linux DaemonSet with no OS selector that tolerates
// every taint (it would put its pods on the new Windows node) stops the
// node's plan with the check's ID and remedy. Nothing is built or cloned;
// skip_checks lets the user through, and so does a guard of the DaemonSet in
// the same configuration that the node depends on.
func TestAccNode_readinessChecks(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("chk")
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "chk")
	guard := fmt.Sprintf(`
resource "windows_linux_daemonset_guard" "test" {
  provider  = windows.admin
  namespace = %q
  names     = ["log-agent"]
}
`, ns)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				// A kubelet newer than the API server: the image's plan.
				Config:   withKubernetesVersion(t, acctest.NodeConfig(image, []string{node}, ""), "v1.37.0", ""),
				PlanOnly: true,
				ExpectError: acctest.Wrapped(`(?s)Golden image kubelet not supported by the cluster.*version-skew: The kubelet v1\.37\.0 would be newer than ` +
					`the API server v1\.36.*Fix: Set kubernetes_version to a v1\.36\.x release.*skip_checks = \["version-skew"\]`),
			},
			{
				PreConfig: func() {
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
						if err := acctest.Eventually(30*time.Second, "the DaemonSet deleted", func(ctx context.Context) (bool, error) {
							_, err := k.AppsV1().DaemonSets(ns).Get(ctx, "log-agent", metav1.GetOptions{})
							return apierrors.IsNotFound(err), err
						}); err != nil {
							t.Error(err)
						}
					})
				},
				Config:   acctest.NodeConfig(image, []string{node}, ""),
				PlanOnly: true,
				ExpectError: acctest.Wrapped(`(?s)Cluster not ready for Windows node ` + node +
					`.*linux-daemonset:chk-[0-9]+/log-agent: DaemonSet chk-[0-9]+/log-agent has no kubernetes.io/os node selector` +
					`.*Fix: Add the node selector kubernetes.io/os=linux`),
			},
			{
				// Nothing was built or cloned by the refused plans;
				// skip_checks lets the plan through.
				PreConfig: func() {
					for _, path := range []string{acctest.NodeFolder + "/" + node, acctest.GoldenFolder + "/" + image} {
						if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), path); err == nil {
							t.Fatalf("a refused plan left the VM %s", path)
						}
					}
				},
				Config:             acctest.NodeConfig(image, []string{node}, `  skip_checks = ["linux-daemonset"]`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// The guard is applied with the administrator's provider
				// configuration, another provider process than the node's:
				// the node's plan cannot see it planned in the same run
				// (clients.Planned is per process), so it goes first, as the
				// check's remedy says...
				Config: acctest.NodeConfig(image, nil, "") + guard,
			},
			{
				// ...and the node's plan then finds the DaemonSet guarded in
				// the cluster.
				Config: acctest.NodeConfig(image, []string{node}, "") + guard,
				Check: func(*terraform.State) error {
					return acctest.CheckNodeReady(t, node)
				},
			},
		},
	})
}

// TestAccNode_imageChecksAtCreate: in the one-shot configuration a check
// that needs the image's facts can only run once the image exists. Here the
// image's kubelet (v1.37.0, built with the image's own version-skew check
// skipped) is newer than the v1.36 API server: the apply stops the node
// before it clones anything (one VM more: the template, none at the node's
// path), with the message and remedy the plan gives once the template
// exists. What stops it is the node's apply-time plan: Terraform plans a
// resource again, with its dependencies' values known, just before it
// applies it, and planChecks then reads the new template. Without the image
// checks in planChecks the node would be cloned and this test would fail.
func TestAccNode_imageChecksAtCreate(t *testing.T) {
	acctest.RequireSandbox(t, "another Kubernetes version added to the sandbox's artifact server")
	acctest.PreCheck(t)
	const version = "v1.37.0"
	kubelet, kubeProxy, logRunner := acctest.Sandbox.Artifacts.AddKubernetes(version)
	image := acctest.Name("img")
	node := acctest.NodeName("skw")
	config := withKubernetesVersion(t, acctest.NodeConfig(image, []string{node}, ""), version, `  skip_checks = ["version-skew"]`)
	for old, sum := range map[string]string{
		acctest.Sandbox.Artifacts.Kubelet.SHA256: kubelet.SHA256, acctest.Sandbox.Artifacts.KubeProxy.SHA256: kubeProxy.SHA256,
		acctest.Sandbox.Artifacts.KubeLogRunner.SHA256: logRunner.SHA256,
	} {
		config = strings.Replace(config, old, sum, 1)
	}
	want := acctest.Wrapped(`(?s)Cluster not ready for Windows node ` + node + `.*version-skew: The kubelet v1\.37\.0 would be newer than the API ` +
		`server v1\.36.*Fix: Set kubernetes_version to a v1\.36\.x release.*list the check's ID in skip_checks`)
	var before int
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { before = countVMs(t) },
				Config:      config,
				ExpectError: want,
			},
			{
				// The image was built; the node's create stopped before the
				// clone. With the template known, the plan says the same.
				PreConfig: func() {
					if after := countVMs(t); after != before+1 {
						t.Fatalf("%d VMs before the apply, %d after: want one more (the template), none for the node", before, after)
					}
					if _, err := acctest.VSphere(t).FindVMByPath(context.Background(), acctest.GoldenFolder+"/"+image); err != nil {
						t.Fatalf("the image's template: %v", err)
					}
					if id, err := acctest.VMAt(t, node); err != nil || id != "" {
						t.Fatalf("the node's VM %q exists (err %v)", id, err)
					}
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: want,
			},
		},
	})
}

// withKubernetesVersion sets the golden image's kubernetes_version in a
// acctest.NodeConfig, and adds imageBody to the image.
func withKubernetesVersion(t *testing.T, config, version, imageBody string) string {
	t.Helper()
	const current = `kubernetes_version = "v1.36.3"`
	if !strings.Contains(config, current) {
		t.Fatalf("no %s in the configuration", current)
	}
	config = strings.Replace(config, current, fmt.Sprintf("kubernetes_version = %q\n%s", version, imageBody), 1)
	return config
}

// countVMs counts the VMs and templates in vcsim.
func countVMs(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	c := acctest.VSphere(t)
	v, err := view.NewManager(c.Client.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Destroy(ctx) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name"}, &vms); err != nil {
		t.Fatal(err)
	}
	return len(vms)
}
