package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

const networkingAddress = "windows_node_networking.test"

// checkNetworkingDestroyed: nothing labelled as the networking resource's is
// left in the namespace or cluster-wide for it.
func checkNetworkingDestroyed(t *testing.T, ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		k := acctest.Kube(t)
		ctx := context.Background()
		sel := metav1.ListOptions{LabelSelector: kube.LabelPartOf + "=" + kube.NetworkingPartOf}
		dss, err := k.AppsV1().DaemonSets(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		cms, err := k.CoreV1().ConfigMaps(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		sas, err := k.CoreV1().ServiceAccounts(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		if n := len(dss.Items) + len(cms.Items) + len(sas.Items); n != 0 {
			return fmt.Errorf("%d objects of the networking resource left in %s", n, ns)
		}
		crbs, err := k.RbacV1().ClusterRoleBindings().List(ctx, sel)
		if err != nil {
			return err
		}
		for _, b := range crbs.Items {
			for _, s := range b.Subjects {
				if s.Namespace == ns {
					return fmt.Errorf("ClusterRoleBinding %s left", b.Name)
				}
			}
		}
		return nil
	}
}

// TestAccNodeNetworking_flannel creates the flannel mode's objects, imports
// them, puts back a DaemonSet changed outside Terraform and a ConfigMap
// deleted outside it, and refuses to be destroyed while a Windows Node
// exists, naming it; once the Node is gone the destroy removes everything.
func TestAccNodeNetworking_flannel(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "net")
	winNode := acctest.Name("netwin")
	config := acctest.NetworkingConfig(ns, "flannel", "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNetworkingDestroyed(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("id"), knownvalue.StringExact(ns)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("flannel").AtMapKey("vni"), knownvalue.Int64Exact(4096)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("flannel").AtMapKey("port"), knownvalue.Int64Exact(4789)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("drift"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("objects"), knownvalue.ListSizeExact(9)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("cluster_cidr"), knownvalue.StringExact("10.244.0.0/16")),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("agents"), knownvalue.MapExact(map[string]knownvalue.Check{
						"kube-proxy": knownvalue.StringExact("0/0 ready"), "flannel": knownvalue.StringExact("0/0 ready"),
					})),
				},
				Check: func(*terraform.State) error {
					ctx := context.Background()
					ds, err := k.FindDaemonSet(ctx, ns, networking.KubeProxyWindows)
					if err != nil {
						return err
					}
					pod := ds.Spec.Template.Spec
					if pod.ServiceAccountName != networking.KubeProxyWindows || !pod.HostNetwork ||
						pod.SecurityContext.WindowsOptions == nil || !*pod.SecurityContext.WindowsOptions.HostProcess ||
						pod.NodeSelector[kube.LabelOS] != "windows" {
						return fmt.Errorf("kube-proxy-windows pod template is not a Windows HostProcess pod with its own ServiceAccount: %+v", pod)
					}
					crb, err := k.RbacV1().ClusterRoleBindings().Get(ctx, networking.KubeProxyBindingName(ns), metav1.GetOptions{})
					if err != nil {
						return err
					}
					if crb.RoleRef.Name != "system:node-proxier" {
						return fmt.Errorf("kube-proxy-windows is bound to %s, want system:node-proxier", crb.RoleRef.Name)
					}
					return nil
				},
			},
			{
				ResourceName:            networkingAddress,
				ImportState:             true,
				ImportStateId:           ns,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Changed outside Terraform: the plan shows the drift and
				// the apply puts it back.
				PreConfig: func() {
					ctx := context.Background()
					ds, err := k.FindDaemonSet(ctx, ns, networking.FlannelWindowsDS)
					if err != nil {
						t.Fatal(err)
					}
					ds.Spec.Template.Spec.Containers[0].Image = "example.com/not-the-base-image:v9"
					if _, err := k.AppsV1().DaemonSets(ns).Update(ctx, ds, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
						t.Fatal(err)
					}
					if err := k.CoreV1().ConfigMaps(ns).Delete(ctx, networking.KubeProxyWindows, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(networkingAddress, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("drift"), knownvalue.ListSizeExact(0)),
				},
				Check: func(*terraform.State) error {
					ctx := context.Background()
					ds, err := k.FindDaemonSet(ctx, ns, networking.FlannelWindowsDS)
					if err != nil {
						return err
					}
					if img := ds.Spec.Template.Spec.Containers[0].Image; img != networking.DefaultHostProcessImage {
						return fmt.Errorf("flannel image %s not put back", img)
					}
					_, err = k.CoreV1().ConfigMaps(ns).Get(ctx, networking.KubeProxyWindows, metav1.GetOptions{})
					return err
				},
			},
			{
				// A Windows node depends on it: destroy is refused, naming it.
				PreConfig:   func() { createNode(t, k, winNode, map[string]string{kube.LabelOS: "windows"}) },
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Windows node\(s\) still depend on it: .*` + winNode + `.*Services`),
			},
			{
				PreConfig: func() {
					if err := k.DeleteNode(context.Background(), winNode); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
			},
		},
	})
}

// TestAccNodeNetworking_none installs nothing and can always be destroyed.
func TestAccNodeNetworking_none(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "netnone")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNetworkingDestroyed(t, ns),
		Steps: []resource.TestStep{
			{
				Config: acctest.NetworkingConfig(ns, "none", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("objects"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("flannel"), knownvalue.Null()),
				},
			},
			{
				// An import block by namespace plans no change.
				ResourceName: networkingAddress, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: ns,
			},
			{
				// So does one by identity { namespace } (OpenTofu/Terraform 1.12+).
				ResourceName: networkingAddress, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity,
				SkipFunc: acctest.SkipWithoutIdentityImport,
			},
		},
	})
}

// TestAccNodeNetworking_clusterFlannel: the plan reads the cluster's own
// flannel (seed 004): with flannel's default VXLAN settings (VNI 1, port
// 8472) the Windows overlay cannot join it, and the plan says what to set;
// once net-conf.json carries VNI 4096 and port 4789 the apply goes through.
func TestAccNodeNetworking_clusterFlannel(t *testing.T) {
	k := acctest.Kube(t)
	ctx := context.Background()
	ns := createNamespace(t, k, "netfl")
	const flannelNS, name = "kube-flannel", "kube-flannel-cfg"
	setNetConf := func(netConf string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: flannelNS, Name: name}, Data: map[string]string{"net-conf.json": netConf}}
		_, err := k.CoreV1().ConfigMaps(flannelNS).Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = k.CoreV1().ConfigMaps(flannelNS).Create(ctx, cm, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNetworkingDestroyed(t, ns),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					_, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: flannelNS}}, metav1.CreateOptions{})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						_ = k.CoreV1().ConfigMaps(flannelNS).Delete(context.Background(), name, metav1.DeleteOptions{})
					})
					setNetConf(`{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}`)
				},
				Config:      acctest.NetworkingConfig(ns, "flannel", ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)cannot carry Windows nodes.*VNI 1 and port 8472.*"VNI": 4096, "Port": 4789`),
			},
			{
				PreConfig: func() {
					setNetConf(`{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`)
				},
				Config: acctest.NetworkingConfig(ns, "flannel", ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("cluster_cidr"), knownvalue.StringExact("10.244.0.0/16")),
				},
			},
		},
	})
}
