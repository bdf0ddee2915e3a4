package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/simulator"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
			node := nodeName("flt")
			const addr = "windows_node.n0"
			config := nodeConfig(image, []string{node}, createTimeout)
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
				CheckDestroy:             checkNodesDestroyed(t),
				Steps: []resource.TestStep{
					{Config: goldenImageConfig(image, nil)},
					{
						PreConfig:   func() { tc.inject(node) },
						Config:      config,
						ExpectError: wrapped(tc.want),
					},
					{
						PreConfig: clear,
						Config:    config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							expectTracked{t: t, addr: addr, name: node, tainted: tc.tainted},
							noBootstrapToken{t: t, node: node},
							plancheck.ExpectResourceAction(addr, action),
						}},
						Check: func(s *terraform.State) error {
							if id, err := vmAt(t, node); err != nil || id != s.RootModule().Resources[addr].Primary.ID {
								return fmt.Errorf("VM at the node's path %q (err %v), in the state %q", id, err, s.RootModule().Resources[addr].Primary.ID)
							}
							return checkNodeReady(t, node)
						},
					},
				},
			})
		})
	}
}

// noBootstrapToken checks that no bootstrap token for a node is left: the
// join credential is deleted after a failed join too.
type noBootstrapToken struct {
	t    *testing.T
	node string
}

func (c noBootstrapToken) CheckPlan(ctx context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	secrets, err := acctest.Kube(c.t).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
	if err != nil {
		resp.Error = err
		return
	}
	for _, s := range secrets.Items {
		if strings.Contains(string(s.Data["description"]), c.node) {
			resp.Error = fmt.Errorf("the bootstrap token %s of %s outlived the failed join", s.Name, c.node)
		}
	}
}
