package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

func TestAccNode_basic(t *testing.T) {
	acctest.PreCheck(t)
	// Everything Terraform and the provider log at trace level, to check no
	// secret reaches a log: the administrator password, the bootstrap token.
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	t.Cleanup(func() {
		logs, err := os.ReadFile(logFile)
		if err != nil || len(logs) < 10000 {
			t.Errorf("trace log missing or short (%d bytes): %v", len(logs), err)
			return
		}
		if strings.Contains(string(logs), os.Getenv("SANDBOX_ADMIN_PASSWORD")) {
			t.Errorf("the administrator password appears in the trace log")
		}
		if m := regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`).FindString(string(logs)); m != "" {
			t.Errorf("a bootstrap token (%s...) appears in the trace log", m[:7])
		}
	})
	image := acctest.Name("img")
	node := fmt.Sprintf("win-%d", acctest.Seq())
	const addr = "windows_node.n0"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: acctest.NodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "web" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("joined"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("windows_build"), knownvalue.StringExact("10.0.20348")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("kubelet_version"), knownvalue.StringExact("v1.36.3")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("pod_cidr"), knownvalue.StringRegexp(regexp.MustCompile(`^10\.244\.[0-9]+\.0/24$`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("provider_id"), knownvalue.StringRegexp(regexp.MustCompile(`^vsphere://[0-9a-f-]{36}$`))),
				},
				Check: func(s *terraform.State) error {
					attrs := s.RootModule().Resources[addr].Primary.Attributes
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if n.Spec.ProviderID != attrs["provider_id"] || !strings.EqualFold(n.Spec.ProviderID, "vsphere://"+attrs["bios_uuid"]) {
						return fmt.Errorf("providerID = %q, state %q, BIOS UUID %q", n.Spec.ProviderID, attrs["provider_id"], attrs["bios_uuid"])
					}
					for k, v := range map[string]string{"example.com/pool": "web", "node.kubernetes.io/windows-build": "10.0.20348", "kubernetes.io/os": "windows"} {
						if n.Labels[k] != v {
							return fmt.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
						}
					}
					if !hasTaint(n, "os", "windows", corev1.TaintEffectNoSchedule) {
						return fmt.Errorf("taints = %v, want os=windows:NoSchedule", n.Spec.Taints)
					}
					// The join credential is gone once the node has joined.
					secrets, err := acctest.Kube(t).CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
					if err != nil {
						return err
					}
					for _, sec := range secrets.Items {
						if strings.Contains(string(sec.Data["description"]), node) {
							return fmt.Errorf("bootstrap token %s of %s was not deleted", sec.Name, node)
						}
					}
					// The answer files the customization left (vCenter's
					// sysprep.xml, Setup's cached copy) are gone: no file of
					// the node's disk, nor of its image's, holds the password.
					if acctest.Sandbox == nil {
						t.Log("lab mode: the guests' disks are not searched for the password (the simulated hosts' directories)")
						return nil
					}
					// VMware Tools' customization folder, which the
					// customization wrote in the node's first boot, is gone
					// too (the node's first step removes it).
					if _, err := os.Stat(acctest.GuestFile(hostDir(node), acctest.GuestCustomizationDir)); !os.IsNotExist(err) {
						return fmt.Errorf("%s is still on %s after the join (%v)", acctest.GuestCustomizationDir, node, err)
					}
					password := os.Getenv("SANDBOX_ADMIN_PASSWORD")
					if err := noPasswordOnDisk(hostDir(node), password); err != nil {
						return err
					}
					return noPasswordOnDisk(hostDir(acctest.ComputerNameOf(image)), password)
				},
			},
			{
				// Labels and taints change in place; others' labels stay.
				PreConfig: func() {
					labelNode(t, node, "team.example.com/owner", "someone-else")
				},
				Config: acctest.NodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "batch" }
  taints = [{ key = "os", value = "windows", effect = "NoSchedule" }, { key = "example.com/dedicated", value = "batch", effect = "NoSchedule" }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if n.Labels["example.com/pool"] != "batch" || n.Labels["team.example.com/owner"] != "someone-else" {
						return fmt.Errorf("labels = %v", n.Labels)
					}
					if !hasTaint(n, "example.com/dedicated", "batch", corev1.TaintEffectNoSchedule) {
						return fmt.Errorf("taints = %v", n.Spec.Taints)
					}
					return nil
				},
			},
			{
				// Removing a taint removes it, even the one the kubelet registered.
				Config: acctest.NodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "batch" }
  taints = [{ key = "example.com/dedicated", value = "batch", effect = "NoSchedule" }]`),
				Check: func(*terraform.State) error {
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if hasTaint(n, "os", "windows", corev1.TaintEffectNoSchedule) {
						return fmt.Errorf("the removed taint is still there: %v", n.Spec.Taints)
					}
					return nil
				},
			},
		},
	})
}

func hasTaint(n *corev1.Node, key, value string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Value == value && t.Effect == effect {
			return true
		}
	}
	return false
}

func labelNode(t *testing.T, name, key, value string) {
	t.Helper()
	n, err := acctest.Kube(t).FindNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	n.Labels[key] = value
	if _, err := acctest.Kube(t).CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
}
