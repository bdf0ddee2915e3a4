package resources_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccVMTools_winrmHTTPOff: a node joined through VMware Tools (the
// default transport) has no WinRM HTTP listener afterwards: a connection
// to its 5985 from the runner, on the guest's subnet where the stock rules
// admitted it, fails, and the node's script log records the
// remote-logins-off step. Turning its transport into WinRM over HTTP is then
// refused at plan, naming the attribute and the fixes.
func TestAccVMTools_winrmHTTPOff(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated hosts' ports and script logs")
	acctest.PreCheck(t)
	image, node := acctest.Name("img"), acctest.NodeName("nohttp")
	nodeConfig := func(transport string) string {
		machine := acctest.MachineInSandbox()
		if transport != "" {
			machine = strings.Replace(machine, acctest.TransportInSandbox(), "  transport = "+transport+"\n", 1)
		}
		return acctest.GoldenImageConfig(image, nil) + acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
			fmt.Sprintf(`
resource "windows_node" "n0" {
  name          = %q
  template      = windows_golden_image.test.template_path
  networking_id = windows_node_networking.test.id
%s
}
`, node, machine)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: nodeConfig(""),
				Check: func(s *terraform.State) error {
					ip := s.RootModule().Resources["windows_node.n0"].Primary.Attributes["ip_address"]
					if ip == "" {
						return fmt.Errorf("windows_node.n0 has no ip_address")
					}
					addr := net.JoinHostPort(ip, os.Getenv("SANDBOX_WINRM_PORT"))
					if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
						_ = c.Close()
						return fmt.Errorf("the node's WinRM HTTP port %s accepted a connection after a join through VMware Tools", addr)
					}
					log, err := os.ReadFile(filepath.Join(acctest.Sandbox.Hosts.Dir, strings.ToUpper(node), "scripts.log"))
					if err != nil {
						return err
					}
					if !strings.Contains(string(log), "WinRM HTTP listener removed") {
						return fmt.Errorf("the node's script log records no remote-logins-off step")
					}
					return nil
				},
			},
			{
				Config:      nodeConfig(acctest.WinRMOverHTTP()),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)WinRM over HTTP after a join through VMware Tools.*https_bootstrap.*replace`),
			},
		},
	})
}
