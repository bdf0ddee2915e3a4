package resources_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_rejoinAfterRestartVMTools: a node on the default transport
// (VMware Tools guest operations) whose guest restarts, and whose Node is
// deleted once its kubelet is back, joins again on the next apply, on the
// same VM; the guest restarts once more under the rejoin's join-files step
// (the process started by StartProgramInGuest is lost with the boot), which
// the provider runs again once the guest's tools are back. The Node is
// Ready with its labels, taints and kubelet service, every script ran over
// vmtools, and the plan after is empty.
func TestAccNode_rejoinAfterRestartVMTools(t *testing.T) {
	acctest.RequireSandbox(t, "simulated host faults and VMware Tools events")
	acctest.PreCheck(t) // before the configs, which read the sandbox
	image := acctest.Name("img")
	node := acctest.NodeName("vrj")
	cn := acctest.ComputerNameOf(node)
	const addr = "windows_node.n0"
	config := acctest.NodeConfig(image, []string{node}, `  labels = { "example.com/pool" = "web" }`)
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(cn) })

	var vmID string
	var armed time.Time
	var mu sync.Mutex
	var down bool       // the host went down after the fault was armed
	var rerunAfter bool // join-files exited 0 after that
	removeHook := func() {}
	t.Cleanup(func() { removeHook() })

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(s *terraform.State) error {
					vmID = s.RootModule().Resources[addr].Primary.ID
					host := acctest.Sandbox.Hosts.ByName(cn)
					if host == nil {
						return fmt.Errorf("no simulated host %s", cn)
					}
					if err := onlyVMTools(host, time.Time{}, "join-files", "kubelet-service"); err != nil {
						return fmt.Errorf("the join: %w", err)
					}
					// The guest restarts; once its kubelet reports again, the
					// Node is deleted (by hand, or by a controller that saw
					// it gone): the next apply must join it again.
					rebootAndWaitKubelet(t, host, node)
					if err := acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
						return err
					}
					armed = time.Now()
					removeHook = acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
						if !strings.EqualFold(ev.ComputerName, cn) {
							return
						}
						mu.Lock()
						defer mu.Unlock()
						switch {
						case ev.Down:
							down = true
						case down && ev.Script != nil && ev.Script.Step == "join-files" && ev.Script.ExitCode == 0:
							rerunAfter = true
						}
					})
					acctest.Sandbox.Hosts.SetFaults(cn, winsim.Faults{Steps: []winsim.StepFault{{Step: "join-files", Reboot: true, Times: 1}}})
					return nil
				},
				ExpectNonEmptyPlan: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("joined"), knownvalue.Bool(true)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("joined"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
				},
				Check: func(s *terraform.State) error {
					removeHook()
					mu.Lock()
					gotDown, gotRerun := down, rerunAfter
					mu.Unlock()
					if !gotDown || !gotRerun {
						return fmt.Errorf("the guest restarted under join-files: %v; join-files ran again after it: %v", gotDown, gotRerun)
					}
					rs := s.RootModule().Resources[addr]
					if rs.Primary.ID != vmID {
						return fmt.Errorf("the VM was replaced (%s, was %s)", rs.Primary.ID, vmID)
					}
					host := acctest.Sandbox.Hosts.ByName(cn)
					if host == nil {
						return fmt.Errorf("no simulated host %s after the rejoin", cn)
					}
					if err := onlyVMTools(host, armed, "join-files", "kubelet-service"); err != nil {
						return fmt.Errorf("the rejoin: %w", err)
					}
					n, err := acctest.Kube(t).FindNode(context.Background(), node)
					if err != nil {
						return err
					}
					if n.Spec.ProviderID != rs.Primary.Attributes["provider_id"] || n.Labels["example.com/pool"] != "web" ||
						!hasTaint(n, "os", "windows", "NoSchedule") {
						return fmt.Errorf("re-joined Node: providerID %q, labels %v, taints %v", n.Spec.ProviderID, n.Labels, n.Spec.Taints)
					}
					if kubelet, ok := host.Service("kubelet"); !ok || kubelet.Status != "Running" {
						return fmt.Errorf("kubelet service after the rejoin: %+v (exists %v), want Running", kubelet, ok)
					}
					return acctest.CheckNodeReady(t, node)
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

// onlyVMTools checks that the host ran each of steps since since, and that
// no script reached it since over another transport (WinRM, SSH); the
// "process" records are PowerShell started inside the guest.
func onlyVMTools(host *winsim.Host, since time.Time, steps ...string) error {
	seen := map[string]bool{}
	for _, r := range host.Scripts() {
		if r.Time.Before(since) {
			continue
		}
		if r.Transport != "vmtools" && r.Transport != "process" {
			return fmt.Errorf("step %q ran over %q, want vmtools", r.Step, r.Transport)
		}
		seen[r.Step] = seen[r.Step] || r.Transport == "vmtools"
	}
	for _, s := range steps {
		if !seen[s] {
			return fmt.Errorf("step %q did not run", s)
		}
	}
	return nil
}
