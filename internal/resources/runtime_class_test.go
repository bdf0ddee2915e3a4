package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

const rcAddress = "windows_runtime_class.test"

var osWindowsToleration = corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}

func TestAccRuntimeClass_lifecycle(t *testing.T) {
	name := acctest.Name("win-2022")
	var original *nodev1.RuntimeClass
	var afterUpdate *terraform.State
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkRuntimeClassDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name            = %q
  windows_version = "2022"
}`, name),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("windows_build"), knownvalue.StringExact("10.0.20348")),
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("handler"), knownvalue.StringExact("runhcs-wcow-process")),
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("arch"), knownvalue.StringExact("amd64")),
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("tolerations"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"key": knownvalue.StringExact("os"), "operator": knownvalue.StringExact("Equal"),
							"value": knownvalue.StringExact("windows"), "effect": knownvalue.StringExact("NoSchedule"),
							"toleration_seconds": knownvalue.Null(),
						}),
					})),
				},
				Check: func(*terraform.State) error {
					rc, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
					if err != nil {
						return err
					}
					original = rc
					return expectRuntimeClass(rc, "runhcs-wcow-process", map[string]string{
						"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.20348",
					}, []corev1.Toleration{osWindowsToleration})
				},
			},
			{
				// Mutable fields change in place: the object keeps its UID.
				Config: acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name          = %q
  windows_build = "10.0.17763"
  node_selector = { "example.com/pool" = "web" }
  tolerations = [
    { key = "os", value = "windows", effect = "NoSchedule" },
    { key = "node.kubernetes.io/unreachable", operator = "Exists", effect = "NoExecute", toleration_seconds = 30 },
  ]
  overhead = { cpu = "0.1", memory = "128Mi" }
}`, name),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rcAddress, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("overhead").AtMapKey("cpu"), knownvalue.StringExact("0.1")),
					statecheck.ExpectKnownValue(rcAddress, tfjsonpath.New("effective_node_selector"), knownvalue.MapExact(map[string]knownvalue.Check{
						"kubernetes.io/os": knownvalue.StringExact("windows"), "kubernetes.io/arch": knownvalue.StringExact("amd64"),
						"node.kubernetes.io/windows-build": knownvalue.StringExact("10.0.17763"), "example.com/pool": knownvalue.StringExact("web"),
					})),
				},
				Check: func(*terraform.State) error {
					rc, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
					if err != nil {
						return err
					}
					if rc.UID != original.UID {
						return fmt.Errorf("the RuntimeClass was replaced (UID %s -> %s); expected an update in place", original.UID, rc.UID)
					}
					if rc.Overhead == nil || rc.Overhead.PodFixed.Cpu().String() != "100m" || rc.Overhead.PodFixed.Memory().String() != "128Mi" {
						return fmt.Errorf("overhead = %+v, want cpu 100m and memory 128Mi", rc.Overhead)
					}
					thirty := int64(30)
					return expectRuntimeClass(rc, "runhcs-wcow-process", map[string]string{
						"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
						"node.kubernetes.io/windows-build": "10.0.17763", "example.com/pool": "web",
					}, []corev1.Toleration{osWindowsToleration, {Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &thirty}})
				},
			},
			{
				// A refresh reads "100m" back; the quantity type's semantic
				// equality keeps the configured "0.1", and the plan is empty.
				RefreshState: true,
				Check: func(s *terraform.State) error {
					afterUpdate = s
					return resource.TestCheckResourceAttr(rcAddress, "overhead.cpu", "0.1")(s)
				},
			},
			{
				// An import (by an import block, with the configuration above)
				// reads the API server's "100m"; the plan against cpu = "0.1"
				// must be a no-op, not an update that changes nothing.
				ResourceName:    rcAddress,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   name,
			},
			{
				// terraform import: every attribute matches the state, the
				// quantities by amount ("100m" imported, "0.1" in the state).
				ResourceName:  rcAddress,
				ImportState:   true,
				ImportStateId: name,
				ImportStateCheck: func(imported []*terraform.InstanceState) error {
					return importVerifyQuantities(afterUpdate, rcAddress, imported, "overhead.cpu", "overhead.memory")
				},
			},
			{
				// Import by identity (an import block with identity = { name },
				// from the identity in the state): the same no-op plan. Needs
				// OpenTofu 1.12+ or Terraform 1.12+ (skipped under 1.11).
				ResourceName:    rcAddress,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				SkipFunc:        acctest.SkipWithoutIdentityImport,
			},
			{
				// The handler is immutable in Kubernetes: a new one replaces the object.
				Config: acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name          = %q
  windows_build = "10.0.17763"
  handler       = "runhcs-wcow-hypervisor"
  tolerations   = []
}`, name),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rcAddress, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: func(*terraform.State) error {
					rc, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
					if err != nil {
						return err
					}
					if rc.UID == original.UID {
						return fmt.Errorf("the RuntimeClass kept UID %s; expected a replacement", rc.UID)
					}
					return expectRuntimeClass(rc, "runhcs-wcow-hypervisor", map[string]string{
						"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.17763",
					}, nil)
				},
			},
		},
	})
}

// TestAccRuntimeClass_drift changes the object behind Terraform's back; the
// next plan must show an update, and the apply must put it back.
func TestAccRuntimeClass_drift(t *testing.T) {
	name := acctest.Name("win-drift")
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name            = %q
  windows_version = "2019"
  node_selector   = { "example.com/pool" = "web" }
}`, name)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkRuntimeClassDestroyed(t),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					k := acctest.Kube(t)
					rc, err := k.FindRuntimeClass(context.Background(), name)
					if err != nil {
						t.Fatal(err)
					}
					delete(rc.Scheduling.NodeSelector, "node.kubernetes.io/windows-build")
					rc.Scheduling.NodeSelector["example.com/pool"] = "batch"
					rc.Scheduling.Tolerations = nil
					if _, err := k.NodeV1().RuntimeClasses().Update(context.Background(), rc, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rcAddress, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rcAddress, tfjsonpath.New("effective_node_selector").AtMapKey("node.kubernetes.io/windows-build"), knownvalue.StringExact("10.0.17763")),
				}},
				Check: func(*terraform.State) error {
					rc, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
					if err != nil {
						return err
					}
					return expectRuntimeClass(rc, "runhcs-wcow-process", map[string]string{
						"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
						"node.kubernetes.io/windows-build": "10.0.17763", "example.com/pool": "web",
					}, []corev1.Toleration{osWindowsToleration})
				},
			},
			{Config: config, PlanOnly: true}, // converged: the plan is empty
		},
	})
}

// TestAccRuntimeClass_disappears deletes the object outside Terraform; the
// refresh drops it from state and the next apply creates it again.
func TestAccRuntimeClass_disappears(t *testing.T) {
	name := acctest.Name("win-gone")
	config := acctest.AdminProvider() + fmt.Sprintf(`
resource "windows_runtime_class" "test" {
  provider = windows.admin
  name            = %q
  windows_version = "2022"
}`, name)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkRuntimeClassDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(*terraform.State) error {
					return acctest.Kube(t).DeleteRuntimeClass(context.Background(), name)
				},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rcAddress, plancheck.ResourceActionCreate),
				}},
				Check: func(*terraform.State) error {
					_, err := acctest.Kube(t).FindRuntimeClass(context.Background(), name)
					return err
				},
			},
		},
	})
}

// TestAccRuntimeClass_alreadyExists refuses to adopt an object silently and
// says how to import it.
func TestAccRuntimeClass_alreadyExists(t *testing.T) {
	name := acctest.Name("win-taken")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if _, err := acctest.Kube(t).CreateRuntimeClass(context.Background(), kube.RuntimeClassSpec{Name: name, Handler: "runhcs-wcow-process"}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = acctest.Kube(t).DeleteRuntimeClass(context.Background(), name) })
			},
			Config: acctest.AdminProvider() + fmt.Sprintf(`resource "windows_runtime_class" "test" {
  provider = windows.admin
  name            = %q
  windows_version = "2022"
}`, name),
			ExpectError: regexp.MustCompile(`(?s)already exists.*terraform import`),
		}},
	})
}

func checkRuntimeClassDestroyed(t *testing.T) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		k := acctest.Kube(t)
		for _, rs := range s.RootModule().Resources {
			if rs.Type != "windows_runtime_class" {
				continue
			}
			_, err := k.FindRuntimeClass(context.Background(), rs.Primary.ID)
			if err == nil {
				return fmt.Errorf("RuntimeClass %s still exists", rs.Primary.ID)
			}
			if !kube.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
}

func expectRuntimeClass(rc *nodev1.RuntimeClass, handler string, selector map[string]string, tolerations []corev1.Toleration) error {
	if rc.Handler != handler {
		return fmt.Errorf("handler = %q, want %q", rc.Handler, handler)
	}
	if rc.Scheduling == nil {
		return fmt.Errorf("RuntimeClass %s has no scheduling", rc.Name)
	}
	if fmt.Sprint(rc.Scheduling.NodeSelector) != fmt.Sprint(selector) {
		return fmt.Errorf("nodeSelector = %v, want %v", rc.Scheduling.NodeSelector, selector)
	}
	if len(rc.Scheduling.Tolerations) != len(tolerations) {
		return fmt.Errorf("tolerations = %+v, want %+v", rc.Scheduling.Tolerations, tolerations)
	}
	for i := range tolerations {
		if !rc.Scheduling.Tolerations[i].MatchToleration(&tolerations[i]) ||
			seconds(rc.Scheduling.Tolerations[i].TolerationSeconds) != seconds(tolerations[i].TolerationSeconds) {
			return fmt.Errorf("toleration %d = %+v, want %+v", i, rc.Scheduling.Tolerations[i], tolerations[i])
		}
	}
	return nil
}

func seconds(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// importVerifyQuantities is ImportStateVerify with the given attributes
// compared as Kubernetes quantities: the imported instance must have exactly
// the attributes of the resource in the prior state, with the same values,
// except that a quantity may be spelt differently ("100m" for "0.1").
func importVerifyQuantities(prior *terraform.State, address string, imported []*terraform.InstanceState, quantities ...string) error {
	if prior == nil {
		return fmt.Errorf("no prior state captured")
	}
	rs, ok := prior.RootModule().Resources[address]
	if !ok {
		return fmt.Errorf("%s not in the prior state", address)
	}
	if len(imported) != 1 {
		return fmt.Errorf("imported %d instances, want 1", len(imported))
	}
	want, got := rs.Primary.Attributes, imported[0].Attributes
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for k := range keys {
		if strings.HasPrefix(k, "timeouts") {
			continue
		}
		w, inW := want[k]
		g, inG := got[k]
		switch {
		case inW != inG:
			return fmt.Errorf("attribute %s: %q in the state, %q imported", k, w, g)
		case slices.Contains(quantities, k):
			wq, err1 := k8sresource.ParseQuantity(w)
			gq, err2 := k8sresource.ParseQuantity(g)
			if err1 != nil || err2 != nil || wq.Cmp(gq) != 0 {
				return fmt.Errorf("attribute %s: %q in the state, %q imported: not the same quantity", k, w, g)
			}
		case w != g:
			return fmt.Errorf("attribute %s: %q in the state, %q imported", k, w, g)
		}
	}
	if want["overhead.cpu"] == got["overhead.cpu"] {
		// The point of the test: the spellings differ, the amounts do not.
		return fmt.Errorf("overhead.cpu is %q in both; expected the API server's canonical spelling on import", got["overhead.cpu"])
	}
	return nil
}
