package resources_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
)

// TestAccGoldenImage_registryMirror: an image whose containerd pulls
// through the sandbox's private mirror (basic auth) with its credential
// write-only. A plan with a wrong password fails at plan naming
// registry_credentials_wo (the mirror's 401). Then a node joins: the mirror
// served the pause image (which only a node's containerd pulls, by itself
// with registry.configs' credential) and the HostProcess image (the image
// build's ctr and the node's kubelet) to the mirror's user only, and the
// node's disk holds the password in config.toml alone, whose DACL only
// LocalSystem and Administrators hold.
func TestAccGoldenImage_registryMirror(t *testing.T) {
	acctest.RequireSandbox(t, "the private registry mirror's log and the node's disk")
	// The credential is write-only: it must reach neither the state nor
	// the provider's and Terraform's trace log.
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	image, node := acctest.NodeName("tpl-mirror"), acctest.NodeName("mirror")
	mirror := os.Getenv("SANDBOX_REGISTRY_MIRROR")
	host := strings.TrimPrefix(mirror, "http://")
	hostProcess := "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"
	config := func(password string) string {
		overrides := map[string]string{
			"pause_image":    `"registry.k8s.io/pause:3.10.2"`,
			"prepull_images": fmt.Sprintf("[%q]", hostProcess),
			"registry_mirrors": fmt.Sprintf(`{
    "registry.k8s.io"   = { endpoints = [%q] }
    "mcr.microsoft.com" = { endpoints = [%q] }
  }`, mirror, mirror),
			"registry_credentials_wo": fmt.Sprintf(`{ %q = { username = %q, password = %s } }`, host, os.Getenv("SANDBOX_REGISTRY_USERNAME"), password),
		}
		return acctest.NetworkingConfig("kube-system", "flannel", fmt.Sprintf("  allow_destroy_with_nodes = true\n  host_process_image = %q\n", hostProcess)) +
			"variable \"registry_password\" {\n  type      = string\n  sensitive = true\n}\n\n" +
			acctest.GoldenImageConfig(image, overrides) + fmt.Sprintf(`
resource "windows_node" "n0" {
  name          = %q
  template      = windows_golden_image.test.template_path
  networking_id = windows_node_networking.test.id
%s
}
`, node, acctest.MachineInSandbox())
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(acctest.CheckNodesDestroyed(t), acctest.CheckTemplatesDestroyed(t)),
		Steps: []resource.TestStep{
			{
				Config: config(`"not-the-password"`), PlanOnly: true,
				ExpectError: acctest.Wrapped(`(?s)registry.k8s.io/pause:3.10.2 does not resolve through its mirrors.*401 Unauthorized`),
			},
			{
				Config: config("var.registry_password"),
				Check: resource.ComposeTestCheckFunc(
					acctest.CheckNodesReady(t, node),
					func(*terraform.State) error { return mirrorServedTheNode(t, hostProcess) },
					func(*terraform.State) error { return registryPasswordOnlyInConfig(t, node) },
					func(st *terraform.State) error {
						return registryPasswordNotIn("the state", fmt.Sprint(st.RootModule().Resources))
					},
				),
			},
		},
	})
	logs, err := os.ReadFile(logFile)
	if err != nil || len(logs) < 10000 {
		t.Fatalf("trace log missing or short (%d bytes): %v", len(logs), err)
	}
	if err := registryPasswordNotIn("the trace log", string(logs)); err != nil {
		t.Error(err)
	}
}

// registryPasswordNotIn searches text for the mirror's password, raw and
// in the base64 forms it could travel in (alone, and as HTTP Basic auth's
// user:password, at any alignment).
func registryPasswordNotIn(where, text string) error {
	password := os.Getenv("TF_VAR_registry_password")
	if len(password) < 8 {
		return fmt.Errorf("searching %s: no registry password to search for", where)
	}
	needles := append([]string{password}, encodingsOf(password)...)
	needles = append(needles, encodingsOf(os.Getenv("SANDBOX_REGISTRY_USERNAME")+":"+password)...)
	for _, n := range needles {
		if i := strings.Index(text, n); i >= 0 {
			return fmt.Errorf("%s holds the registry password (%d characters: %q…) near %q", where, len(n), n[:4], text[max(0, i-40):i])
		}
	}
	return nil
}

// mirrorServedTheNode: the mirror's log has the pause image, which only a
// node's containerd pulls, and the HostProcess image twice (the image
// build's ctr and the node's kubelet), each answered 200 to the mirror's
// user with containerd's ns of its upstream registry; nothing was served to
// anyone else.
func mirrorServedTheNode(t *testing.T, hostProcess string) error {
	m := acctest.Sandbox.Registry
	served := map[string]int{}
	for _, p := range m.Pulls() {
		if p.Status == 200 && p.User != m.Username {
			return fmt.Errorf("the mirror served %s to %q", p.Path, p.User)
		}
		if p.Status == 200 {
			served[p.NS+" "+p.Path]++
		}
	}
	_, tag, _ := strings.Cut(strings.TrimPrefix(hostProcess, "mcr.microsoft.com/"), ":")
	hp := "mcr.microsoft.com /v2/oss/kubernetes/windows-host-process-containers-base-image/manifests/" + tag
	if served["registry.k8s.io /v2/pause/manifests/3.10.2"] == 0 || served[hp] < 2 {
		return fmt.Errorf("the mirror did not serve the node's pause and HostProcess images (and the build's): %v", served)
	}
	t.Logf("mirror served: %v", served)
	return nil
}

// registryPasswordOnlyInConfig: the disk search finds the password in the
// node's config.toml only, and icacls shows that file's DACL protected,
// LocalSystem and Administrators alone.
func registryPasswordOnlyInConfig(t *testing.T, node string) error {
	sb := acctest.Sandbox
	hostDir := filepath.Join(sb.Hosts.Dir, acctest.ComputerNameOf(node))
	found, err := acctest.FilesHoldingPassword(hostDir, sb.Registry.Password())
	if err != nil {
		return err
	}
	want, _ := filepath.Rel(hostDir, acctest.GuestFile(hostDir, bootstrap.ContainerdConf))
	if len(found) != 1 || found[0] != want {
		return fmt.Errorf("the registry password is in %v on %s, want only %s", found, node, want)
	}
	h := sb.Hosts.ByName(acctest.ComputerNameOf(node))
	if h == nil {
		return fmt.Errorf("no host %s", node)
	}
	out, _, code := h.Console(t.Context(), `icacls.exe '`+bootstrap.ContainerdConf+`'`)
	if code != 0 {
		return fmt.Errorf("icacls %s: exit %d: %s", bootstrap.ContainerdConf, code, out)
	}
	aces := regexp.MustCompile(`(\S+):\(`).FindAllStringSubmatch(out, -1)
	if len(aces) != 2 || strings.Contains(out, "(I)") || !strings.Contains(out, `NT AUTHORITY\SYSTEM:(F)`) || !strings.Contains(out, `BUILTIN\Administrators:(F)`) {
		return fmt.Errorf("%s's DACL is not LocalSystem and Administrators alone, none inherited:\n%s", bootstrap.ContainerdConf, out)
	}
	return nil
}
