package reliability_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAccNode_taskFaults fails the vSphere tasks of a node's life after
// its create, each on the node's VM only, one node throughout:
//
//	step                         fault                       stage in the error
//	more CPUs (power cycle)      ReconfigVM_Task fails        reconfiguring the VM
//	  next apply                 -                            converges: 4 CPUs, Ready, uncordoned
//	destroy                      Destroy_Task fails           destroying the VM
//	  next apply                 -                            converges: the node is back, Ready
//
// (the power-on task's failure is a row of TestAccNode_faults). After each
// failure vSphere, the cluster and the state agree: no cordon is left
// behind by a failed power cycle, no VM goes untracked.
func TestAccNode_taskFaults(t *testing.T) {
	acctest.PreCheck(t)
	start := time.Now()
	defer func() { t.Logf("task faults: %s", time.Since(start).Round(time.Second)) }()
	image := acctest.Name("img")
	node := acctest.NodeName("tsk")
	const addr = "windows_node.n0"
	hw := func(cpus int) string {
		// Bounded: a hang fails the row in minutes, not the default half hour.
		return fmt.Sprintf("  num_cpus = %d\n  memory_mb = 4096\n  timeouts {\n    create = \"3m\"\n    update = \"3m\"\n    delete = \"3m\"\n  }\n", cpus)
	}
	fail := func(method, msg string) func() {
		return func() {
			acctest.Sandbox.VSphere.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
				MethodName: method, ObjectType: "VirtualMachine", ObjectName: node, Probability: 1,
				FaultType: simulator.FaultTypeInsufficientResourcesFault, Message: msg, Enabled: true,
			})
		}
	}
	clear := func() { acctest.Sandbox.VSphere.Model.Service.ClearFaultRules() }
	t.Cleanup(clear)
	agree := func(cpus int32) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			id := s.RootModule().Resources[addr].Primary.ID
			if at, err := acctest.VMAt(t, node); err != nil || at != id {
				return fmt.Errorf("VM at the node's path %q (err %v), in the state %q", at, err, id)
			}
			if vm := acctest.ReadVM(t, id); vm.NumCPUs != cpus || vm.PowerState != vsphere.PoweredOn {
				return fmt.Errorf("VM %s has %d CPUs and is %s; want %d, powered on", id, vm.NumCPUs, vm.PowerState, cpus)
			}
			n, err := acctest.Kube(t).FindNode(context.Background(), node)
			if err != nil {
				return err
			}
			if n.Spec.Unschedulable || kube.CordonedForPowerCycle(n) || !kube.NodeIsReady(n) {
				return fmt.Errorf("Node %s: unschedulable %v, marked for a power cycle %v, Ready %v; want Ready and uncordoned",
					node, n.Spec.Unschedulable, kube.CordonedForPowerCycle(n), kube.NodeIsReady(n))
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{
			{Config: acctest.NodeConfig(image, []string{node}, hw(2)), Check: agree(2)},
			{
				PreConfig:   fail("ReconfigVM_Task", "the host's CPU capacity is exhausted"),
				Config:      acctest.NodeConfig(image, []string{node}, hw(4)),
				ExpectError: acctest.Wrapped(`(?s)reconfiguring the VM: .*the host's CPU capacity is exhausted`),
			},
			{
				PreConfig: clear,
				Config:    acctest.NodeConfig(image, []string{node}, hw(4)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: agree(4),
			},
			{
				PreConfig:   fail("Destroy_Task", "the datastore is not accessible"),
				Config:      acctest.NodeConfig(image, []string{node}, hw(4)),
				Destroy:     true,
				ExpectError: acctest.Wrapped(`(?s)destroying the VM: .*the datastore is not accessible`),
			},
			{
				PreConfig: clear,
				Config:    acctest.NodeConfig(image, []string{node}, hw(4)),
				Check:     agree(4),
			},
		},
	})
}
