package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// sshNodeConfig is a golden image built over SSH from the prepared
// template and nodes reached over SSH. Node i's transport.ssh_host_key is var.ssh_host_key_<i>: null unless
// TF_VAR_ssh_host_key_<i> is set (the keys exist only once the test runs).
func sshNodeConfig(image string, nodes ...string) string {
	if acctest.Sandbox == nil {
		return ""
	}
	port := os.Getenv("SANDBOX_SSH_PORT")
	var b strings.Builder
	b.WriteString(acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n"))
	// OpenSSH Server is on the prepared template only: a stock Windows
	// Server 2019 or 2022 has none.
	b.WriteString(acctest.GoldenImageConfig(image, map[string]string{"transport": fmt.Sprintf("{\n    type = \"ssh\"\n    port = %s\n  }", port),
		"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2022_PREPARED"))}))
	for i, n := range nodes {
		fmt.Fprintf(&b, `
variable "ssh_host_key_%d" {
  type    = string
  default = null
}

resource "windows_node" "n%d" {
  name              = %q
  template          = windows_golden_image.test.template_path
  folder            = %q
  resource_pool_id  = %q
  network_id        = %q
  admin_password_wo = var.admin_password
  networking_id     = windows_node_networking.test.id
  transport = {
    type         = "ssh"
    port         = %s
    ssh_host_key = var.ssh_host_key_%d
  }
}
`, i, i, n, acctest.NodeFolder, os.Getenv("SANDBOX_RESOURCE_POOL_ID"), os.Getenv("SANDBOX_NETWORK_ID"), port, i)
	}
	return b.String()
}

// hostKeyOf is the SSH host key a guest serves, as its .pub file has it.
func hostKeyOf(t *testing.T, computerName string) string {
	t.Helper()
	host := acctest.Sandbox.Hosts.ByName(computerName)
	if host == nil {
		t.Fatalf("no running host %s", computerName)
	}
	pub, err := host.ReadFile(winsim.SSHHostKeyPubFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(pub))
}

// TestAccNode_sshHostKeyPinned: over SSH, the key a guest presents at the
// first connection is recorded in the state (the golden image's build VM's
// and the node's, each its own: the image removes its keys before sysprep);
// a node whose key changed is refused at the next connection (a re-join)
// with a diagnostic naming transport.ssh_host_key and the fix, which then
// works; a wrong key pinned up front fails the create.
func TestAccNode_sshHostKeyPinned(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' SSH servers and host keys")
	acctest.PreCheck(t)
	image, node, pinned := acctest.Name("img"), acctest.NodeName("ssh"), acctest.NodeName("pin")
	const addr = "windows_node.n0"
	var nodeKey, newKey string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: sshNodeConfig(image, node),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(acctest.GoldenImageAddress, tfjsonpath.New("transport").AtMapKey("ssh_host_key"), knownvalue.StringRegexp(sshKeyPattern)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("transport").AtMapKey("ssh_host_key"), knownvalue.StringRegexp(sshKeyPattern)),
				},
				Check: func(s *terraform.State) error {
					nodeKey = s.RootModule().Resources[addr].Primary.Attributes["transport.ssh_host_key"]
					if want := hostKeyOf(t, node); nodeKey != want {
						return fmt.Errorf("recorded %q, the guest serves %q", nodeKey, want)
					}
					if nodeKey == s.RootModule().Resources[acctest.GoldenImageAddress].Primary.Attributes["transport.ssh_host_key"] {
						return fmt.Errorf("the node presents the golden image's build VM's host key")
					}
					// The template's disk holds no host key: each clone's sshd makes its own.
					tmpl := filepath.Join(acctest.Sandbox.Hosts.Dir, acctest.ComputerNameOf(image), "fs/C/ProgramData/ssh/ssh_host_ed25519_key")
					if _, err := os.Stat(tmpl); !os.IsNotExist(err) {
						return fmt.Errorf("the golden image kept its SSH host key (%s: %v)", tmpl, err)
					}
					return nil
				},
			},
			{
				// The guest's keys are regenerated (deleted, sshd makes new
				// ones at boot) and the Node goes: the re-join must refuse
				// the guest.
				PreConfig: func() {
					regenerateHostKey(t, node)
					if err := acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      sshNodeConfig(image, node),
				ExpectError: acctest.Wrapped(`(?s)updating Windows node \(` + node + `\): SSH host key mismatch.*presented the SSH host key SHA256:.*recorded in the state \(transport.ssh_host_key\) at the first connection.*man-in-the-middle.*verify the new key out of band.*set transport.ssh_host_key to it`),
			},
			{
				// The fix the diagnostic gives: the verified new key, set.
				PreConfig: func() {
					newKey = hostKeyOf(t, node)
					t.Setenv("TF_VAR_ssh_host_key_0", newKey)
				},
				Config: sshNodeConfig(image, node),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources[addr].Primary.Attributes["transport.ssh_host_key"]; got != newKey || got == nodeKey {
						return fmt.Errorf("recorded %q after accepting %q", got, newKey)
					}
					return acctest.CheckNodeReady(t, node)
				},
			},
			{
				// A wrong key pinned up front (the first node's old one): the
				// create fails at the first connection.
				PreConfig:   func() { t.Setenv("TF_VAR_ssh_host_key_1", nodeKey) },
				Config:      sshNodeConfig(image, node, pinned),
				ExpectError: acctest.Wrapped(`(?s)creating Windows node \(` + pinned + `\).*SSH host key mismatch.*pinned by transport.ssh_host_key in the configuration`),
			},
		},
	})
}

var sshKeyPattern = regexp.MustCompile(`^ssh-ed25519 AAAA[0-9A-Za-z+/]+=*$`)

// regenerateHostKey deletes a guest's SSH host keys and reboots it: its
// sshd creates new ones. It waits for the kubelet to report again, so that
// its re-registration cannot follow a deletion of the Node.
func regenerateHostKey(t *testing.T, computerName string) {
	t.Helper()
	host := acctest.Sandbox.Hosts.ByName(computerName)
	for _, p := range []string{winsim.SSHHostKeyFile, winsim.SSHHostKeyPubFile} {
		if err := os.Remove(host.DiskPath(p)); err != nil {
			t.Fatal(err)
		}
	}
	rebootAndWaitKubelet(t, host, computerName)
}

// rebootAndWaitKubelet restarts a guest and waits for the kubelet to report
// its Node Ready again, so that its re-registration cannot follow a
// deletion of the Node.
func rebootAndWaitKubelet(t *testing.T, host *winsim.Host, node string) {
	t.Helper()
	rebooted := time.Now()
	host.Reboot()
	if err := acctest.Eventually(time.Minute, "the kubelet reports after the reboot", func(ctx context.Context) (bool, error) {
		n, err := acctest.Kube(t).FindNode(ctx, node)
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(rebooted) {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal(err)
	}
}
