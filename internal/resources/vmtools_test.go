package resources_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// vmtoolsTransport is transport = { type = "vmtools" }.
const vmtoolsTransport = `{
    type = "vmtools"
  }`

// transportFigures runs an image build, then a node join, over a transport
// (a transport attribute value; "" for the default, vmtools) and logs the
// seconds and the vSphere calls of each; logged is the transport the
// guest's script log must record. more adds steps after the join.
func transportFigures(t *testing.T, transport, logged string, more ...resource.TestStep) {
	image, node := acctest.Name("img"), acctest.NodeName("tools")
	imageOverrides := map[string]string{}
	machine := acctest.MachineInSandbox()
	if transport != "" {
		imageOverrides["transport"] = transport
		machine = strings.Replace(machine, acctest.TransportInSandbox(), "  transport = "+transport+"\n", 1)
	}
	imageConfig := acctest.GoldenImageConfig(image, imageOverrides)
	nodeConfig := imageConfig + acctest.NetworkingConfig("kube-system", "flannel", "  allow_destroy_with_nodes = true\n") +
		fmt.Sprintf(`
resource "windows_node" "n0" {
  name          = %q
  template      = windows_golden_image.test.template_path
  networking_id = windows_node_networking.test.id
%s
}
`, node, machine)

	var (
		start  time.Time
		before map[string]map[string]int64
	)
	mark := func() {
		start, before = time.Now(), acctest.Sandbox.VSphere.CallsByOperation(vsphere.UserAgent)
	}
	report := func(what, resourceType string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			elapsed := time.Since(start)
			calls := map[string]int64{}
			var total int64
			for id, methods := range acctest.Sandbox.VSphere.CallsByOperation(vsphere.UserAgent) {
				if label, ok := vsphere.OperationResource(id); !ok || label != resourceType || !strings.Contains(id, ".create-") {
					continue
				}
				for m, n := range methods {
					if d := n - before[id][m]; d > 0 {
						calls[m] += d
						total += d
					}
				}
			}
			names := make([]string, 0, len(calls))
			for m := range calls {
				names = append(names, fmt.Sprintf("%s=%d", m, calls[m]))
			}
			sort.Strings(names)
			t.Logf("FIGURES transport=%s %s: %.1fs (whole apply), %d vSphere calls of its create: %s",
				logged, what, elapsed.Seconds(), total, strings.Join(names, " "))
			return nil
		}
	}
	steps := []resource.TestStep{
		{
			PreConfig: mark,
			Config:    imageConfig,
			Check:     report("image build", "windows_golden_image"),
		},
		{
			PreConfig: mark,
			Config:    nodeConfig,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("ready"), knownvalue.Bool(true)),
			},
			Check: resource.ComposeTestCheckFunc(report("node join", "windows_node"), func(*terraform.State) error {
				// The steps ran where the transport says: scripts.log
				// records each one's transport.
				log, err := os.ReadFile(filepath.Join(acctest.Sandbox.Hosts.Dir, strings.ToUpper(node), "scripts.log"))
				if err != nil {
					return err
				}
				if !strings.Contains(string(log), logged) {
					return fmt.Errorf("the node's script log records no %s step", logged)
				}
				return nil
			}),
		},
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps:                    append(steps, withConfig(more, nodeConfig)...),
	})
}

// withConfig gives steps without a configuration cfg plus their own.
func withConfig(steps []resource.TestStep, cfg string) []resource.TestStep {
	for i := range steps {
		steps[i].Config = cfg + steps[i].Config
	}
	return steps
}

// TestAccVMTools_basic builds an image and joins a node with transport =
// { type = "vmtools" }: no WinRM listener is used, every step runs through
// vCenter's guest operations (the sandbox's vCenter routes them to the
// VM's simulated Windows host). A third node whose join step fails shows the
// failure's evidence (exit code, last lines) scrubbed as over WinRM.
func TestAccVMTools_basic(t *testing.T) {
	acctest.RequireSandbox(t, "vcsim's call counters and the simulated hosts")
	acctest.PreCheck(t)
	failing := acctest.NodeName("toolsfail")
	// The join-files step carries the bootstrap token; the fault fails it
	// where the token's base64 sits, so the error record's echo of the line
	// would show it unless scrubbed.
	joinFault := winsim.StepFault{Step: "join-files",
		FailAt: regexp.MustCompile(`bootstrap-kubeconfig', \[Convert\]::FromBase64String\('[A-Za-z0-9+/=]*?([A-Za-z0-9+/]{12})[A-Za-z0-9+/=]{36}'\)`),
		Stderr: `Exception calling "WriteAllBytes" with "2" argument(s): "Access to the path 'C:\k\bootstrap-kubeconfig' is denied."`}
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(failing) })
	transportFigures(t, vmtoolsTransport, "vmtools", resource.TestStep{
		PreConfig: func() {
			acctest.Sandbox.Hosts.SetFaults(failing, winsim.Faults{Steps: []winsim.StepFault{joinFault}})
		},
		Config: fmt.Sprintf(`
resource "windows_node" "failing" {
  name          = %q
  template      = windows_golden_image.test.template_path
  networking_id = windows_node_networking.test.id
%s
  timeouts {
    create = "3m"
  }
}
`, failing, strings.Replace(acctest.MachineInSandbox(), acctest.TransportInSandbox(), "  transport = "+vmtoolsTransport+"\n", 1)),
		ExpectError: acctest.Wrapped(`(?s)creating Windows node.*join step "join-files" exited with code 1.*Access to the path .* is denied.*line of the step's script not shown`),
	})
}

// TestAccVMTools_winrmBaseline is TestAccVMTools_basic's build and join over
// WinRM on a stock template's HTTP listener (NTLM, sealed messages), for
// its figures beside vmtools'.
func TestAccVMTools_winrmBaseline(t *testing.T) {
	acctest.RequireSandbox(t, "vcsim's call counters and the simulated hosts")
	acctest.PreCheck(t)
	transportFigures(t, acctest.WinRMOverHTTP(), "winrm-http")
}

// TestAccVMTools_runnerOutsideSubnet: with the runner outside the guests'
// subnet (a CI runner, a Terraform Cloud agent), a stock guest's firewall
// drops its connections to WinRM over HTTP (unanswered until the client's
// dial timeout, as Windows' stealth mode does), and the default transport
// still builds an image from the stock template and joins a node.
func TestAccVMTools_runnerOutsideSubnet(t *testing.T) {
	acctest.RequireSandbox(t, "vcsim's call counters and the simulated hosts")
	acctest.PreCheck(t)
	acctest.Sandbox.Hosts.SetRunnerOutsideSubnet(true)
	t.Cleanup(func() { acctest.Sandbox.Hosts.SetRunnerOutsideSubnet(false) })
	transportFigures(t, "", "vmtools", resource.TestStep{
		Check: func(s *terraform.State) error {
			ip := s.RootModule().Resources["windows_node.n0"].Primary.Attributes["ip_address"]
			if ip == "" {
				return fmt.Errorf("windows_node.n0 has no ip_address")
			}
			const dialTimeout = 2 * time.Second
			start := time.Now()
			c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, os.Getenv("SANDBOX_WINRM_PORT")), dialTimeout)
			waited := time.Since(start)
			if err == nil {
				_ = c.Close()
				return fmt.Errorf("the node's WinRM HTTP port %s:%s accepted the runner from outside its subnet", ip, os.Getenv("SANDBOX_WINRM_PORT"))
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || waited < dialTimeout {
				return fmt.Errorf("dialing the node's WinRM HTTP port: %v after %v, want no answer until the dial timeout of %v", err, waited, dialTimeout)
			}
			return nil
		},
	})
}

// TestAccVMTools_winrmDroppedOutsideSubnet: from outside the guests'
// subnet, a build over WinRM on a stock template's HTTP listener meets the
// guest firewall's drop. Each connection attempt waits the provider's dial
// timeout (10s) unanswered, Connect tries again until the create timeout
// and no longer, the build VM is destroyed, and the error names the dial
// timeout, the attempts and the likely causes, with the vmtools transport
// as the way around.
func TestAccVMTools_winrmDroppedOutsideSubnet(t *testing.T) {
	acctest.RequireSandbox(t, "the simulated guests' firewall, with the runner outside their subnet")
	acctest.PreCheck(t)
	acctest.Sandbox.Hosts.SetRunnerOutsideSubnet(true)
	t.Cleanup(func() { acctest.Sandbox.Hosts.SetRunnerOutsideSubnet(false) })
	const createTimeout = 50 * time.Second
	config := strings.TrimSuffix(acctest.GoldenImageConfig(acctest.Name("img"), map[string]string{"transport": acctest.WinRMOverHTTP()}), "}\n") +
		fmt.Sprintf("  timeouts {\n    create = %q\n  }\n}\n", createTimeout)
	var start time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() { start = time.Now() },
			Config:    config,
			ExpectError: acctest.Wrapped(`(?s)creating Windows golden image.*connecting to the build VM: winrm http [0-9.]+:\d+: dial failed ` +
				`\(after \d+ attempts in \d+s\): dial tcp [0-9.:]+: i/o timeout; no answer within the dial timeout of 10s: the connection ` +
				`attempts were dropped, not refused.*admits WinRM over HTTP from its local subnet only.*transport type = "vmtools"`),
		}},
	})
	took := time.Since(start)
	t.Logf("the apply failed after %v (create timeout %v)", took.Round(time.Second), createTimeout)
	if took < createTimeout {
		t.Errorf("the apply failed after %v, before the create timeout of %v: the dropped attempts did not wait", took, createTimeout)
	}
}

// TestAccVMTools_planRefusesNetworkAttributes: with type = "vmtools" a
// WinRM or SSH attribute is a plan-time error naming it.
func TestAccVMTools_planRefusesNetworkAttributes(t *testing.T) {
	acctest.PreCheck(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.GoldenImageConfig(acctest.Name("img"), map[string]string{"transport": `{
    type           = "vmtools"
    ca_certificate = "PEM"
  }`}),
			PlanOnly:    true,
			ExpectError: acctest.Wrapped(`(?s)Invalid transport attribute for vmtools.*transport.ca_certificate does not apply to type = "vmtools"`),
		}},
	})
}
