package reliability_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

// TestAccNode_faults injects one failure per case into a node's create.
// Each ends with an error naming the stage and its evidence; then state
// and vSphere agree (a VM that exists is in the state, tainted; no VM
// without a resource), no join credential is left, and the next apply,
// with the fault cleared, converges to a Ready node.
func TestAccNode_faults(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	const createTimeout = `  timeouts {
    create = "20s"
  }
`
	cases := []struct {
		name    string
		inject  func(node string)
		want    string
		tainted bool
	}{
		{
			name: "clone",
			inject: func(string) {
				acctest.Sandbox.VSphere.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
					MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*", Probability: 1,
					FaultType: simulator.FaultTypeInsufficientResourcesFault, Message: "not enough memory in the cluster", Enabled: true,
				})
			},
			want: `(?s)creating Windows node.*cloning .*not enough memory in the cluster`,
		},
		{
			// The guest never comes up on the network: no IP is reported.
			name:    "ip never comes",
			inject:  func(node string) { acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{RefuseConnections: true}) },
			want:    `(?s)waiting for the guest's IP address`,
			tainted: true,
		},
		{
			name:    "auth failure",
			inject:  func(node string) { acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{FailAuth: true}) },
			want:    `(?s)connecting to the guest.*(?i:auth|credential|password|401)`,
			tainted: true,
		},
		{
			name: "join step fails",
			inject: func(node string) {
				acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{Steps: []winsim.StepFault{{
					Step: "kubelet-service", ExitCode: 1, Stderr: "Start-Service : Service 'Kubernetes kubelet (kubelet)' cannot be started: simulated failure",
				}}})
			},
			want:    `(?s)join step "kubelet-service" exited with code 1.*cannot be started: simulated failure`,
			tainted: true,
		},
		{
			name:    "node never ready",
			inject:  func(node string) { acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{KubeletNeverReady: true}) },
			want:    `(?s)waiting for the Node to become Ready.*registered but is not Ready.*Last lines of C:\\var\\log\\kubelet\\kubelet.log`,
			tainted: true,
		},
		{
			// The create's deadline interrupts a join step that hangs.
			name: "interrupted",
			inject: func(node string) {
				acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{Steps: []winsim.StepFault{{Step: "join-files", Hang: true}}})
			},
			want:    `(?s)join step "join-files".*(deadline|context|cancel)`,
			tainted: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			image := acctest.Name("img")
			node := acctest.NodeName("flt")
			const addr = "windows_node.n0"
			config := acctest.NodeConfig(image, []string{node}, createTimeout)
			clear := func() {
				acctest.Sandbox.Hosts.ClearFaults(node)
				acctest.Sandbox.VSphere.Model.Service.ClearFaultRules()
			}
			t.Cleanup(clear)
			action := plancheck.ResourceActionCreate
			if tc.tainted {
				action = plancheck.ResourceActionDestroyBeforeCreate
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				CheckDestroy:             acctest.CheckNodesDestroyed(t),
				Steps: []resource.TestStep{
					{Config: acctest.GoldenImageConfig(image, nil)},
					{
						PreConfig:   func() { tc.inject(node) },
						Config:      config,
						ExpectError: acctest.Wrapped(tc.want),
					},
					{
						PreConfig: clear,
						Config:    config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							acctest.ExpectTracked{T: t, Addr: addr, Name: node, Tainted: tc.tainted},
							acctest.NoBootstrapToken{T: t, Node: node},
							plancheck.ExpectResourceAction(addr, action),
						}},
						Check: func(s *terraform.State) error {
							if id, err := acctest.VMAt(t, node); err != nil || id != s.RootModule().Resources[addr].Primary.ID {
								return fmt.Errorf("VM at the node's path %q (err %v), in the state %q", id, err, s.RootModule().Resources[addr].Primary.ID)
							}
							return acctest.CheckNodeReady(t, node)
						},
					},
				},
			})
		})
	}
}
