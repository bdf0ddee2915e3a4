package resources_test

import (
	"context"
	"encoding/json"
	"errors"
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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/gmsa"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/gmsawebhook"
)

const gmsaAddress = "windows_gmsa_credential_spec.test"

func gmsaConfig(name, namespace string) string {
	return acctest.AdminProvider() + gmsaResource("test", name, namespace, "WebApp01", "contoso.com", "CONTOSO")
}

// gmsaResource is a windows_gmsa_credential_spec (label) for the gMSA
// account of domain, usable by the ServiceAccount iis of namespace, applied
// with the admin alias.
func gmsaResource(label, name, namespace, account, domain, netbios string) string {
	return fmt.Sprintf(`
resource "windows_gmsa_credential_spec" %q {
  provider = windows.admin
  name     = %q
  domain_join_config = {
    sid                  = "S-1-5-21-702590844-1001920913-2680819671"
    machine_account_name = %q
    guid                 = "56d9b66c-d746-4f87-bd26-26760cfdca2e"
    dns_tree_name        = %q
    dns_name             = %q
    netbios_name         = %q
  }
  group_managed_service_accounts = [
    { name = %q, scope = %q },
    { name = %q, scope = %q },
  ]
  service_accounts = [{ namespace = %q, name = "iis" }]
}
`, label, name, account, domain, domain, netbios, account, domain, account, netbios, namespace)
}

// One test for the resource's whole life, since each step needs the
// webhook of the step before: the plan refused without windows-gmsa (naming
// what to install); with the webhook, the credential spec, its role and
// binding applied, and the real API server then admitting through the
// webhook a pod of the bound ServiceAccount (its gmsaCredentialSpec filled
// in) and refusing one of another; a binding deleted behind Terraform's
// back planned back; import; destroy removing all three.
func TestAccGMSACredentialSpec_lifecycle(t *testing.T) {
	sb := acctest.RequireSandbox(t, "the sandbox's windows-gmsa webhook")
	name := acctest.Name("webapp01")
	ns := acctest.Name("gmsa")
	k := acctest.Kube(t)
	ctx := context.Background()
	var webhook *gmsawebhook.Webhook
	t.Cleanup(func() {
		if webhook != nil {
			webhook.Stop(ctx)
		}
		_ = k.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	store := func() gmsa.Store {
		dyn, err := dynamic.NewForConfig(k.REST)
		if err != nil {
			t.Fatal(err)
		}
		return gmsa.Store{Clientset: k.Interface, Dynamic: dyn}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := store().Find(ctx, name); !errors.Is(err, gmsa.ErrNotFound) {
				return fmt.Errorf("GMSACredentialSpec %s after destroy: %v", name, err)
			}
			if _, err := k.RbacV1().ClusterRoles().Get(ctx, gmsa.RoleName(name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ClusterRole %s after destroy: %v", gmsa.RoleName(name), err)
			}
			if _, err := k.RbacV1().RoleBindings(ns).Get(ctx, gmsa.RoleName(name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("RoleBinding %s/%s after destroy: %v", ns, gmsa.RoleName(name), err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				// The everyday identity (no alias) may not even read what
				// the plan checks: the fix named is the admin alias.
				Config:      strings.Replace(gmsaConfig(name, ns), "provider = windows.admin", "", 1),
				ExpectError: regexp.MustCompile(`(?s)Cannot check for windows-gmsa.*installed once per cluster.*provider\s+=\s+windows\.admin`),
			},
			{
				Config:      gmsaConfig(name, ns),
				ExpectError: regexp.MustCompile(`(?s)windows-gmsa webhook not installed.*gmsacredentialspecs\.windows\.k8s\.io is not\s+installed.*MutatingWebhookConfiguration.*helm install gmsa\s+windows-gmsa/gmsa`),
			},
			{
				PreConfig: func() {
					if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					for _, sa := range []string{"iis", "other"} {
						if _, err := k.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					var err error
					webhook, err = sb.InstallGMSAWebhook(ctx, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{ns}},
					}})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: gmsaConfig(name, ns),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(gmsaAddress, tfjsonpath.New("webhook_version"), knownvalue.StringExact(gmsawebhook.ChartVersion)),
					statecheck.ExpectKnownValue(gmsaAddress, tfjsonpath.New("cluster_role"), knownvalue.StringExact(gmsa.RoleName(name))),
					statecheck.ExpectKnownValue(gmsaAddress, tfjsonpath.New("cms_plugins"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("ActiveDirectory")})),
				},
				Check: func(*terraform.State) error {
					found, err := store().Find(ctx, name)
					if err != nil {
						return err
					}
					if got := fmt.Sprint(found.ServiceAccounts); got != fmt.Sprintf("[%s/iis]", ns) {
						return fmt.Errorf("bound ServiceAccounts = %s, want %s/iis", got, ns)
					}
					return checkGMSAAdmission(ctx, t, name, ns)
				},
			},
			{
				// A binding deleted and the credential spec edited outside
				// Terraform are drift: planned back.
				PreConfig: func() {
					if err := k.RbacV1().RoleBindings(ns).Delete(ctx, gmsa.RoleName(name), metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					dyn, err := dynamic.NewForConfig(k.REST)
					if err != nil {
						t.Fatal(err)
					}
					patch := []byte(`{"credspec":{"DomainJoinConfig":{"NetBiosName":"FABRIKAM"}}}`)
					if _, err := dyn.Resource(gmsa.GVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: gmsaConfig(name, ns),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(gmsaAddress, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if _, err := k.RbacV1().RoleBindings(ns).Get(ctx, gmsa.RoleName(name), metav1.GetOptions{}); err != nil {
						return err
					}
					found, err := store().Find(ctx, name)
					if err != nil {
						return err
					}
					if got := found.CredentialSpec.DomainJoinConfig.NetBiosName; got != "CONTOSO" {
						return fmt.Errorf("NetBiosName = %q after the apply, want CONTOSO back", got)
					}
					return nil
				},
			},
			{
				ResourceName:      gmsaAddress,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
			},
		},
	})
}

// checkGMSAAdmission creates pods through the real API server and the
// webhook: one of the bound ServiceAccount, which the webhook admits with
// its gmsaCredentialSpec filled from the resource, and one of a
// ServiceAccount without `use`, which it refuses.
func checkGMSAAdmission(ctx context.Context, t *testing.T, name, ns string) error {
	k := acctest.Kube(t)
	pod := func(podName, sa string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: ns},
			Spec: corev1.PodSpec{
				ServiceAccountName: sa,
				SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: &name}},
				NodeSelector:       map[string]string{"kubernetes.io/os": "windows"},
				OS:                 &corev1.PodOS{Name: corev1.Windows},
				Containers:         []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
			},
		}
	}
	created, err := k.CoreV1().Pods(ns).Create(ctx, pod("with-use", "iis"), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a pod of the bound ServiceAccount was refused: %w", err)
	}
	spec := created.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec
	if spec == nil {
		return errors.New("the webhook did not fill the pod's gmsaCredentialSpec")
	}
	var doc gmsa.CredentialSpec
	if err := json.Unmarshal([]byte(*spec), &doc); err != nil || doc.DomainJoinConfig.MachineAccountName != "WebApp01" {
		return fmt.Errorf("gmsaCredentialSpec = %s (%v), want the resource's credential spec", *spec, err)
	}
	_, err = k.CoreV1().Pods(ns).Create(ctx, pod("without-use", "other"), metav1.CreateOptions{})
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "is not authorized to `use` GMSA cred spec") {
		return fmt.Errorf("a pod of a ServiceAccount without use: %v, want the webhook's 403", err)
	}
	return k.CoreV1().Pods(ns).Delete(ctx, "with-use", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
}
