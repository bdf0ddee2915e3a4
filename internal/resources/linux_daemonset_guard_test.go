package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

const guardAddress = "windows_linux_daemonset_guard.test"

func stringSetExact(values ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, 0, len(values))
	for _, v := range values {
		checks = append(checks, knownvalue.StringExact(v))
	}
	return knownvalue.SetExact(checks)
}

// TestAccLinuxDaemonSetGuard_lifecycle guards named DaemonSets, repairs a
// selector removed outside Terraform, imports the guard, and on destroy
// leaves every DaemonSet exactly as its manifest made it.
func TestAccLinuxDaemonSetGuard_lifecycle(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "guard")
	originals := map[string]*appsv1.DaemonSet{}
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_linux_daemonset_guard" "test" {
  provider = windows.admin
  namespace = %q
  names     = ["kube-proxy", "kube-flannel-ds", "already-linux"]
}

data "windows_cluster" "test" {
  depends_on = [windows_linux_daemonset_guard.test]
}
`, ns)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkGuardDestroyed(t)(s); err != nil {
				return err
			}
			for name := range originals {
				if err := expectReleased(k, ns, name); err != nil {
					return err
				}
			}
			return expectUnchanged(t, k, ns, originals)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					tolerateAll := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
					originals["kube-proxy"] = createDaemonSet(t, k, ns, "kube-proxy", corev1.PodSpec{Tolerations: tolerateAll})
					// Another selector entry of its own must survive both ways.
					originals["kube-flannel-ds"] = createDaemonSet(t, k, ns, "kube-flannel-ds", corev1.PodSpec{
						Tolerations: tolerateAll, NodeSelector: map[string]string{"example.com/pool": "system"},
					})
					// Its manifest already sets the selector: destroy must keep it.
					originals["already-linux"] = createDaemonSet(t, k, ns, "already-linux", corev1.PodSpec{NodeSelector: map[string]string{kube.LabelOS: "linux"}})
					originals["not-named"] = createDaemonSet(t, k, ns, "not-named", corev1.PodSpec{})
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/already-linux,kube-flannel-ds,kube-proxy")),
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("selected"), stringSetExact("kube-proxy", "kube-flannel-ds", "already-linux")),
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("guarded"), stringSetExact("kube-proxy", "kube-flannel-ds", "already-linux")),
					// The readiness check the guard is the remedy for now passes.
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/kube-proxy", "pass", `kept off Windows nodes`),
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/not-named", "warn", `.`),
				},
				Check: func(*terraform.State) error {
					for _, name := range []string{"kube-proxy", "kube-flannel-ds", "already-linux"} {
						if err := expectGuarded(k, ns, name, true); err != nil {
							return err
						}
					}
					ds, err := k.FindDaemonSet(context.Background(), ns, "kube-flannel-ds")
					if err != nil {
						return err
					}
					if got := ds.Spec.Template.Spec.NodeSelector["example.com/pool"]; got != "system" {
						return fmt.Errorf("kube-flannel-ds lost its own selector entry: %v", ds.Spec.Template.Spec.NodeSelector)
					}
					return expectUnchanged(t, k, ns, map[string]*appsv1.DaemonSet{"not-named": originals["not-named"]})
				},
			},
			{
				// Someone removes the selector by hand; the plan shows it and
				// the apply puts it back.
				PreConfig: func() {
					ds, err := k.FindDaemonSet(context.Background(), ns, "kube-proxy")
					if err != nil {
						t.Fatal(err)
					}
					delete(ds.Spec.Template.Spec.NodeSelector, kube.LabelOS)
					if _, err := k.AppsV1().DaemonSets(ns).Update(context.Background(), ds, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(guardAddress, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(guardAddress, tfjsonpath.New("guarded"), stringSetExact("kube-proxy", "kube-flannel-ds", "already-linux")),
				}},
				Check: func(*terraform.State) error { return expectGuarded(k, ns, "kube-proxy", true) },
			},
			{Config: config, PlanOnly: true}, // converged
			{
				ResourceName:      guardAddress,
				ImportState:       true,
				ImportStateId:     ns + "/kube-proxy,kube-flannel-ds,already-linux",
				ImportStateVerify: true,
			},
			{
				// By identity { namespace, names } (OpenTofu/Terraform 1.12+).
				ResourceName:    guardAddress,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				SkipFunc:        acctest.SkipWithoutIdentityImport,
			},
		},
	})
}

// TestAccLinuxDaemonSetGuard_namespace omits names: the guard takes every
// DaemonSet of the namespace without an OS selector at creation, drops one
// deleted outside Terraform, and imports by namespace.
func TestAccLinuxDaemonSetGuard_namespace(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "guard-all")
	originals := map[string]*appsv1.DaemonSet{}
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_linux_daemonset_guard" "test" {
  provider = windows.admin
  namespace = %q
}`, ns)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := checkGuardDestroyed(t)(s); err != nil {
				return err
			}
			delete(originals, "deleted-outside")
			return expectUnchanged(t, k, ns, originals)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					originals["kube-proxy"] = createDaemonSet(t, k, ns, "kube-proxy", corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}})
					originals["node-exporter"] = createDaemonSet(t, k, ns, "node-exporter", corev1.PodSpec{})
					originals["deleted-outside"] = createDaemonSet(t, k, ns, "deleted-outside", corev1.PodSpec{})
					originals["affinity-linux"] = createDaemonSet(t, k, ns, "affinity-linux", corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: kube.LabelOS, Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}},
						}}},
					}}})
					originals["windows-exporter"] = createDaemonSet(t, k, ns, "windows-exporter", corev1.PodSpec{NodeSelector: map[string]string{kube.LabelOS: "windows"}})
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(guardAddress, tfjsonpath.New("id"), knownvalue.StringExact(ns)),
					plancheck.ExpectUnknownValue(guardAddress, tfjsonpath.New("selected")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("selected"), stringSetExact("deleted-outside", "kube-proxy", "node-exporter")),
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("guarded"), stringSetExact("deleted-outside", "kube-proxy", "node-exporter")),
				},
				Check: func(*terraform.State) error {
					return expectUnchanged(t, k, ns, map[string]*appsv1.DaemonSet{
						"affinity-linux": originals["affinity-linux"], "windows-exporter": originals["windows-exporter"],
					})
				},
			},
			{
				// A DaemonSet created later is not picked up.
				PreConfig: func() { originals["created-later"] = createDaemonSet(t, k, ns, "created-later", corev1.PodSpec{}) },
				Config:    config,
				PlanOnly:  true,
			},
			{
				ResourceName:      guardAddress,
				ImportState:       true,
				ImportStateId:     ns,
				ImportStateVerify: true,
			},
			{
				// By identity { namespace } alone (OpenTofu/Terraform 1.12+).
				ResourceName:    guardAddress,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				SkipFunc:        acctest.SkipWithoutIdentityImport,
			},
			{
				PreConfig: func() {
					if err := k.AppsV1().DaemonSets(ns).Delete(context.Background(), "deleted-outside", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(guardAddress, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(guardAddress, tfjsonpath.New("selected"), stringSetExact("kube-proxy", "node-exporter")),
				},
			},
		},
	})
}

// TestAccLinuxDaemonSetGuard_missing names a DaemonSet that does not exist.
func TestAccLinuxDaemonSetGuard_missing(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "guard-missing")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkGuardDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.AdminProvider() + fmt.Sprintf(`resource "windows_linux_daemonset_guard" "test" {
  provider = windows.admin
  namespace = %q
  names     = ["no-such-daemonset"]
}`, ns),
			ExpectError: regexp.MustCompile(`(?s)creating Windows Linux DaemonSet guard.*` + ns + `/no-such-daemonset does not exist`),
		}},
	})
}

// checkGuardDestroyed verifies, with the same finder Read uses, that no
// DaemonSet a guard selected still has the guard's field manager on its
// node selector.
func checkGuardDestroyed(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		k := acctest.Kube(t)
		for _, rs := range s.RootModule().Resources {
			if rs.Type != "windows_linux_daemonset_guard" {
				continue
			}
			ns := rs.Primary.Attributes["namespace"]
			names, err := k.GuardedDaemonSets(context.Background(), ns)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				return fmt.Errorf("the guard's field manager still owns the node selector of %s in %s", strings.Join(names, ", "), ns)
			}
		}
		return nil
	}
}

// expectGuarded checks the selector and that the guard's manager owns it.
func expectGuarded(k *kube.Client, ns, name string, want bool) error {
	ds, err := k.FindDaemonSet(context.Background(), ns, name)
	if err != nil {
		return err
	}
	if kube.LinuxOnly(ds) != want || kube.GuardOwnsSelector(ds) != want {
		return fmt.Errorf("DaemonSet %s/%s: node selector %v (guard owns it: %v), want guarded = %v",
			ns, name, ds.Spec.Template.Spec.NodeSelector, kube.GuardOwnsSelector(ds), want)
	}
	return nil
}

// expectReleased checks that the guard's field manager has no managedFields
// entry left: it gave back everything, whether the selector was removed,
// shared with the manifest, or returned to the manifest's manager.
func expectReleased(k *kube.Client, ns, name string) error {
	ds, err := k.FindDaemonSet(context.Background(), ns, name)
	if err != nil {
		return err
	}
	for _, mf := range ds.ManagedFields {
		if mf.Manager == kube.GuardFieldManager {
			return fmt.Errorf("DaemonSet %s/%s still has a managedFields entry of %s: %s", ns, name, mf.Manager, mf.FieldsV1.GetRawString())
		}
	}
	return nil
}

// expectUnchanged compares each DaemonSet's pod template with what its
// manifest created.
func expectUnchanged(t *testing.T, k *kube.Client, ns string, originals map[string]*appsv1.DaemonSet) error {
	t.Helper()
	for name, original := range originals {
		ds, err := k.FindDaemonSet(context.Background(), ns, name)
		if err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(ds.Spec.Template, original.Spec.Template) {
			return fmt.Errorf("DaemonSet %s/%s changed:\n got %+v\nwant %+v", ns, name, ds.Spec.Template.Spec, original.Spec.Template.Spec)
		}
	}
	return nil
}
