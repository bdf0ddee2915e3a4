package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// The fault matrix of a node's create: one fault per row, injected during
// a real apply. A row that fails ends with an error naming the stage and
// its evidence (want); then state and vSphere agree (the VM that exists is
// in the state, tainted when the fault came after the clone; no VM
// without a resource), no join credential is left, and the next apply,
// with the fault cleared, converges to a Ready node. A row the provider
// recovers from (want "") must succeed, and proves the fault did fire.
//
//	row                       injected where                       stage in the error
//	clone                     vcsim CloneVM_Task fault              cloning <template>
//	power-on task fails       vcsim PowerOnVM_Task fault on the VM  powering on
//	guest never comes up      host refuses connections             guest customization (TOOLSDEPLOYPKG_RUNNING)
//	auth failure              host refuses every login             connecting to the guest
//	join step fails           host fails kubelet-service           join step "kubelet-service"
//	node never ready          kubelet never reports Ready          waiting for the Node to become Ready
//	interrupted               join-files hangs past the timeout    join step "join-files"
//	guest restarts mid-step   WinRM reply cut, host reboots        (recovers: the step runs again; the node over WinRM)
//	vCenter session ends      sessions terminated at power-on      (recovers: the provider logs in again)
func TestAccNode_faults(t *testing.T) {
	acctest.PreCheck(t) // before the configs, which read the sandbox
	const createTimeout = `  timeouts {
    create = "20s"
  }
`
	type row struct {
		name    string
		inject  func(t *testing.T, node string) (fired func() error)
		want    string
		tainted bool
		// body adds node attributes: a WinRM-only fault needs the node
		// on a WinRM transport (the default is vmtools).
		body string
	}
	vmFault := func(method string, kind simulator.FaultType, msg string) func(*testing.T, string) func() error {
		return func(_ *testing.T, node string) func() error {
			acctest.Sandbox.VSphere.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
				MethodName: method, ObjectType: "VirtualMachine", ObjectName: node, Probability: 1,
				FaultType: kind, Message: msg, Enabled: true,
			})
			return nil
		}
	}
	hostFault := func(f winsim.Faults) func(*testing.T, string) func() error {
		return func(_ *testing.T, node string) func() error { acctest.Sandbox.Hosts.SetFaults(node, f); return nil }
	}
	cases := []row{
		{
			name: "clone",
			inject: func(*testing.T, string) func() error {
				acctest.Sandbox.VSphere.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
					MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*", Probability: 1,
					FaultType: simulator.FaultTypeInsufficientResourcesFault, Message: "not enough memory in the cluster", Enabled: true,
				})
				return nil
			},
			want: `(?s)creating Windows node.*cloning .*not enough memory in the cluster`,
		},
		{
			name:    "power-on task fails",
			inject:  vmFault("PowerOnVM_Task", simulator.FaultTypeInsufficientResourcesFault, "no host has the CPU capacity to power on"),
			want:    `(?s)creating Windows node.*powering on: .*no host has the CPU capacity to power on`,
			tainted: true,
		},
		{
			// The guest never comes up: VMware Tools never reports the end
			// of vCenter's customization (it does from the customization's
			// last boot), which the create waits for before the IP.
			name:    "guest never comes up",
			inject:  hostFault(winsim.Faults{RefuseConnections: true}),
			want:    `(?s)guest customization: waiting for the guest customization of virtual machine .* \(status TOOLSDEPLOYPKG_RUNNING\)`,
			tainted: true,
		},
		{
			name:    "auth failure",
			inject:  hostFault(winsim.Faults{FailAuth: true}),
			want:    `(?s)connecting to the guest.*(?i:auth|credential|password|401)`,
			tainted: true,
		},
		{
			name: "join step fails",
			inject: hostFault(winsim.Faults{Steps: []winsim.StepFault{{
				Step: "kubelet-service", ExitCode: 1, Stderr: "Start-Service : Service 'Kubernetes kubelet (kubelet)' cannot be started: simulated failure",
			}}}),
			want:    `(?s)join step "kubelet-service" exited with code 1.*cannot be started: simulated failure`,
			tainted: true,
		},
		{
			name:    "node never ready",
			inject:  hostFault(winsim.Faults{KubeletNeverReady: true}),
			want:    `(?s)waiting for the Node to become Ready.*registered but is not Ready.*Last lines of C:\\var\\log\\kubelet\\kubelet.log`,
			tainted: true,
		},
		{
			// The create's deadline interrupts a join step that hangs.
			name:    "interrupted",
			inject:  hostFault(winsim.Faults{Steps: []winsim.StepFault{{Step: "join-files", Hang: true}}}),
			want:    `(?s)join step "join-files".*(deadline|context|cancel)`,
			tainted: true,
		},
		{
			// Windows restarts while join-files' output is on its way: the
			// reply ends mid-body and the connection drops. The step
			// rewrites the same files, so it runs again once the guest is
			// back.
			name: "guest restarts mid-step",
			body: "  transport = " + acctest.WinRMOverHTTP() + "\n",
			inject: func(_ *testing.T, node string) func() error {
				acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{RebootMidReply: &winsim.StepFault{Step: "join-files", Times: 1}})
				return func() error {
					if n := stepRuns(node, "join-files"); n != 2 {
						return fmt.Errorf("join-files ran %d times, want 2 (cut by the restart, then again)", n)
					}
					return nil
				}
			},
		},
		{
			// An administrator terminates every session (or they idle out)
			// as the node's VM powers on: the provider's next call is
			// refused, and the shared watch's collector is gone.
			name: "vCenter session ends",
			inject: func(t *testing.T, node string) func() error {
				var once sync.Once
				var ended atomic.Int64
				done := make(chan struct{})
				remove := acctest.Sandbox.VSphere.OnCall(func(method, obj string) {
					if method != "PowerOnVM_Task" || obj != node {
						return
					}
					once.Do(func() {
						go func() {
							defer close(done)
							n, err := acctest.Sandbox.VSphere.TerminateSessions(context.Background())
							if err != nil {
								t.Errorf("terminating the sessions: %v", err)
							}
							ended.Store(int64(n))
						}()
					})
				})
				t.Cleanup(remove)
				logins := acctest.Sandbox.VSphere.Calls()["Login"]
				return func() error {
					<-done
					if ended.Load() == 0 {
						return fmt.Errorf("no session was terminated")
					}
					if acctest.Sandbox.VSphere.Calls()["Login"] <= logins {
						return fmt.Errorf("the provider did not log in again")
					}
					return nil
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			defer func() { t.Logf("row %q: %s", tc.name, time.Since(start).Round(time.Second)) }()
			image := acctest.Name("img")
			node := acctest.NodeName("flt")
			const addr = "windows_node.n0"
			config := acctest.NodeConfig(image, []string{node}, createTimeout+tc.body)
			clear := func() {
				acctest.Sandbox.Hosts.ClearFaults(node)
				acctest.Sandbox.VSphere.Model.Service.ClearFaultRules()
			}
			t.Cleanup(clear)
			var fired func() error
			faulted := resource.TestStep{
				PreConfig: func() { fired = tc.inject(t, node) },
				Config:    config,
			}
			next := resource.TestStep{PreConfig: clear, Config: config}
			if tc.want != "" {
				faulted.ExpectError = acctest.Wrapped(tc.want)
				action := plancheck.ResourceActionCreate
				if tc.tainted {
					action = plancheck.ResourceActionDestroyBeforeCreate
				}
				next.ConfigPlanChecks = resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					acctest.ExpectTracked{T: t, Addr: addr, Name: node, Tainted: tc.tainted},
					acctest.NoBootstrapToken{T: t, Node: node},
					plancheck.ExpectResourceAction(addr, action),
				}}
			} else {
				faulted.Check = func(*terraform.State) error { return fired() }
				next.ConfigPlanChecks = resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					acctest.NoBootstrapToken{T: t, Node: node},
					plancheck.ExpectEmptyPlan(),
				}}
			}
			next.Check = func(s *terraform.State) error {
				if id, err := acctest.VMAt(t, node); err != nil || id != s.RootModule().Resources[addr].Primary.ID {
					return fmt.Errorf("VM at the node's path %q (err %v), in the state %q", id, err, s.RootModule().Resources[addr].Primary.ID)
				}
				return acctest.CheckNodeReady(t, node)
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				CheckDestroy:             acctest.CheckNodesDestroyed(t),
				Steps:                    []resource.TestStep{{Config: acctest.GoldenImageConfig(image, nil)}, faulted, next},
			})
		})
	}
}

// stepRuns counts the runs of a step on the node's host.
func stepRuns(node, step string) int {
	h := acctest.Sandbox.Hosts.ByName(strings.ToUpper(node))
	if h == nil {
		return 0
	}
	n := 0
	for _, r := range h.Scripts() {
		if r.Step == step {
			n++
		}
	}
	return n
}
