package reliability_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNode_interruptDuringClone presses Ctrl-C (SIGINT to terraform)
// while vCenter clones a node's VM: once the provider waits on the clone
// task, which vCenter finishes all the same. Terraform cancels the
// provider's context; the provider must still learn what the task made, so
// the state holds the VM (tainted, the create unfinished), and the next
// plain apply replaces it and converges.
func TestAccNode_interruptDuringClone(t *testing.T) {
	defer logDuration(t, "Ctrl-C during the clone", time.Now())
	cli, node, config := nodeToInterrupt(t, "int")

	// A clone that takes a while, as on vCenter (vcsim's is instant), and
	// the interrupt the moment the provider, having started it, waits on
	// the shared watch (its ModifyListView adds the task).
	simulator.TaskDelay.MethodDelay = map[string]int{"cloneVm": 3000}
	t.Cleanup(func() { simulator.TaskDelay.MethodDelay = nil })
	interrupt := make(chan struct{})
	var cloned, once sync.Once
	var cloning bool
	var mu sync.Mutex
	removeClone := acctest.Sandbox.VSphere.OnCall(func(method, _ string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case method == "CloneVM_Task":
			cloned.Do(func() { cloning = true })
		case cloning && (method == "ModifyListView" || method == "CreateFilter"):
			once.Do(func() { close(interrupt) })
		}
	})
	t.Cleanup(removeClone)
	out, err := cli.ApplyInterrupted(config, interrupt)
	removeClone()
	simulator.TaskDelay.MethodDelay = nil
	select {
	case <-interrupt:
	default:
		t.Fatalf("the clone was never waited on; apply: %v\n%s", err, out)
	}
	checkInterruptedClone(t, cli, config, node, out, err)
}

// TestAccNode_interruptDuringCloneRequest presses Ctrl-C while the
// provider's CloneVM_Task request itself is in flight, before vCenter has
// answered with the task: a moment in which the provider does not know the
// task yet, and vCenter, which received the request, clones all the same.
// A client that abandons the request on Ctrl-C never learns of that VM; the
// provider must wait for the reply, then for the task, and track the VM.
func TestAccNode_interruptDuringCloneRequest(t *testing.T) {
	defer logDuration(t, "Ctrl-C during the clone request", time.Now())
	cli, node, config := nodeToInterrupt(t, "req")

	// The request is held in the sandbox's HTTP server, as a busy vCenter
	// holds it, while the interrupt goes out; it is let through once the
	// provider gives up on it (the bug) or after requestHold, far longer
	// than Terraform takes to pass the interrupt on to the provider
	// (StopProvider, milliseconds).
	const requestHold = 3 * time.Second
	interrupt := make(chan struct{})
	var once sync.Once
	var abandoned atomic.Bool
	remove := acctest.Sandbox.VSphere.OnRequest(func(ctx context.Context, method string) {
		if method != "CloneVM_Task" {
			return
		}
		first := false
		once.Do(func() { first = true; close(interrupt) })
		if !first {
			return
		}
		select {
		case <-ctx.Done():
			abandoned.Store(true)
		case <-time.After(requestHold):
		}
	})
	t.Cleanup(remove)
	out, err := cli.ApplyInterrupted(config, interrupt)
	remove()
	select {
	case <-interrupt:
	default:
		t.Fatalf("the clone was never requested; apply: %v\n%s", err, out)
	}
	if abandoned.Load() {
		t.Error("the provider abandoned its CloneVM_Task request on Ctrl-C: vCenter clones all the same, and the VM it makes is known to no one")
	}
	checkInterruptedClone(t, cli, config, node, out, err)
}

// nodeToInterrupt builds a golden image and returns the CLI and the
// configuration of one node of it, named with prefix, not yet applied; the
// test fails if the node's VM is left after the CLI's destroy.
func nodeToInterrupt(t *testing.T, prefix string) (cli *acctest.CLI, node, config string) {
	t.Helper()
	acctest.PreCheck(t) // before the cleanup below, which needs the sandbox
	image := acctest.Name("img")
	node = acctest.NodeName(prefix)
	t.Cleanup(func() { // after the CLI's destroy (cleanups run last first)
		if id, err := acctest.VMAt(t, node); err != nil || id != "" {
			t.Errorf("the node's VM %q is left (err %v)", id, err)
		}
	})
	cli = acctest.NewCLI(t)
	if _, err := cli.Apply(acctest.GoldenImageConfig(image, nil)); err != nil {
		t.Fatal(err)
	}
	return cli, node, acctest.NodeConfig(image, []string{node}, "")
}

// logDuration logs how long a test took since start, under what.
func logDuration(t *testing.T, what string, start time.Time) {
	t.Helper()
	t.Logf("%s: %s", what, time.Since(start).Round(time.Second))
}

// checkInterruptedClone checks what an apply interrupted during a node's
// clone leaves: a diagnostic that says what vCenter made, that VM in the
// state, tainted, no bootstrap token; and that the next plain apply
// replaces it and converges.
func checkInterruptedClone(t *testing.T, cli *acctest.CLI, config, node, out string, err error) {
	t.Helper()
	const addr = "windows_node.n0"
	if err == nil || !strings.Contains(out, "Interrupt received") {
		t.Fatalf("the interrupted apply: %v\n%s", err, out)
	}
	if !acctest.Wrapped(`(?s)cloning .* was interrupted .*after vCenter created vm-`).MatchString(out) {
		t.Errorf("the diagnostic does not say the clone was interrupted and what it made:\n%s", out)
	}

	// The state holds the VM that exists, tainted.
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	vmID, err := acctest.VMAt(t, node)
	if err != nil || vmID == "" {
		t.Fatalf("no VM at the node's path after the interrupt (%v): the clone should have finished", err)
	}
	var stateID string
	var tainted bool
	if st.Values != nil && st.Values.RootModule != nil {
		for _, r := range st.Values.RootModule.Resources {
			if r.Address == addr {
				stateID, _ = r.AttributeValues["id"].(string)
				tainted = r.Tainted
			}
		}
	}
	if stateID != vmID || !tainted {
		t.Fatalf("VM %s exists; the state holds %q (tainted %v): want it, tainted", vmID, stateID, tainted)
	}
	checkNoToken(t, node)

	// The next plain apply replaces it and converges.
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the interrupt: %v\n%s", err, out)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Error(err)
	}
	if id, _ := acctest.VMAt(t, node); id == vmID || id == "" {
		t.Errorf("the VM at the node's path is %q, want a replacement of %s", id, vmID)
	}
}

// checkNoToken fails when a bootstrap token of the node is left.
func checkNoToken(t *testing.T, node string) {
	t.Helper()
	var resp plancheck.CheckPlanResponse
	acctest.NoBootstrapToken{T: t, Node: node}.CheckPlan(t.Context(), plancheck.CheckPlanRequest{}, &resp)
	if resp.Error != nil {
		t.Error(resp.Error)
	}
}

// TestAccGoldenImage_interruptDuringReboot presses Ctrl-C while the image
// build's guest restarts (after the Containers feature asked for it): the
// provider is following the restart. The build stops, its VM is cleaned up
// (or, when it exists, is in the state), no template is made, and the next
// plain apply builds the image.
func TestAccGoldenImage_interruptDuringReboot(t *testing.T) {
	defer logDuration(t, "Ctrl-C during the image build's reboot", time.Now())
	acctest.PreCheck(t) // before the cleanup below, which needs the sandbox
	image := acctest.Name("img")
	cn := acctest.ComputerNameOf(image)
	config := acctest.GoldenImageConfig(image, nil)
	t.Cleanup(func() { // after the CLI's destroy
		if id, err := acctest.VSphere(t).FindVMByPath(t.Context(), "/DC0/vm/golden/"+image); err == nil {
			t.Errorf("the image's VM or template %v is left", id)
		}
	})
	cli := acctest.NewCLI(t)

	// The moment: the build VM's host restarts after containers-feature
	// asked for it (the sandbox reports it to vSphere as VMware Tools
	// stopping and running again, which the provider waits for, then it
	// connects again): the host going down, or, should the restart happen
	// before the step's record, the first command of the new connection.
	interrupt := make(chan struct{})
	var featureDone atomic.Bool
	var featureTransport atomic.Value
	var once sync.Once
	defer acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
		if !strings.EqualFold(ev.ComputerName, cn) {
			return
		}
		switch {
		case ev.Script != nil && ev.Script.Step == "containers-feature" && ev.Script.ExitCode == 0:
			featureTransport.Store(ev.Script.Transport)
			featureDone.Store(true)
		case featureDone.Load() && (ev.Down || ev.Script != nil):
			once.Do(func() { close(interrupt) })
		}
	})()
	out, err := cli.ApplyInterrupted(config, interrupt)
	select {
	case <-interrupt:
	default:
		t.Fatalf("the build never restarted its guest; apply: %v\n%s", err, out)
	}
	// The build ran over the default transport, VMware Tools.
	if tr, _ := featureTransport.Load().(string); tr != "vmtools" {
		t.Errorf("containers-feature ran over %q, want vmtools (the default transport)", tr)
	}
	if err == nil || !strings.Contains(out, "Interrupt received") {
		t.Fatalf("the interrupted apply: %v\n%s", err, out)
	}
	if !acctest.Wrapped(`(?s)creating Windows golden image \(` + image + `\).*(restart|context canceled)`).MatchString(out) {
		t.Errorf("the diagnostic does not name the restart it interrupted:\n%s", out)
	}
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	var stateID string
	if st.Values != nil && st.Values.RootModule != nil {
		for _, r := range st.Values.RootModule.Resources {
			if r.Address == acctest.GoldenImageAddress {
				stateID, _ = r.AttributeValues["build_vm_id"].(string)
			}
		}
	}
	ref, ferr := acctest.VSphere(t).FindVMByPath(t.Context(), "/DC0/vm/golden/"+image)
	switch {
	case ferr == nil && ref.Reference().Value != stateID:
		t.Fatalf("the build VM %s exists but the state holds %q", ref.Reference().Value, stateID)
	case ferr != nil && stateID != "":
		t.Logf("the state holds the build VM %s, gone from vSphere (the next apply replaces it)", stateID)
	}

	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the interrupt: %v\n%s", err, out)
	}
	if _, err := acctest.VSphere(t).FindVMByPath(t.Context(), "/DC0/vm/golden/"+image); err != nil {
		t.Errorf("no template after the next apply: %v", err)
	}
}

// TestAccNode_interruptDuringStepVMTools presses Ctrl-C while a join step
// runs in the guest over the default transport, VMware Tools guest
// operations (kubelet-service, held running): the provider terminates the
// guest process (TerminateProcessInGuest) rather than leaving it running,
// the state holds the VM (tainted: the create did not finish), no bootstrap
// token is left, and the next plain apply converges.
func TestAccNode_interruptDuringStepVMTools(t *testing.T) {
	defer logDuration(t, "Ctrl-C during a join step over vmtools", time.Now())
	cli, node, config := nodeToInterrupt(t, "vst")
	cn := acctest.ComputerNameOf(node)
	const addr = "windows_node.n0"
	acctest.Sandbox.Hosts.SetFaults(cn, winsim.Faults{Steps: []winsim.StepFault{{Step: "kubelet-service", Hang: true, Times: 1}}})
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(cn) })

	// The moment: the step before kubelet-service has finished, guest
	// operations have started the next program (kubelet-service's, held),
	// and the provider polls it, so it knows the process it must end.
	// Should it never come, the apply is interrupted all the same after a
	// minute, and the test fails.
	interrupt := make(chan struct{})
	var before, started, missed atomic.Bool
	var once sync.Once
	var terminated atomic.Int64
	defer acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
		if !strings.EqualFold(ev.ComputerName, cn) {
			return
		}
		if ev.Script != nil && ev.Script.Step == "legacy-services" && ev.Script.ExitCode == 0 {
			before.Store(true)
		}
		if ev.Program != nil && before.Load() {
			started.Store(true)
		}
	})()
	removeCalls := acctest.Sandbox.VSphere.OnCall(func(method, _ string) {
		switch {
		case method == "TerminateProcessInGuest":
			terminated.Add(1)
		case method == "ListProcessesInGuest" && started.Load():
			once.Do(func() { close(interrupt) })
		}
	})
	t.Cleanup(removeCalls)
	deadline := time.AfterFunc(time.Minute, func() {
		missed.Store(true)
		once.Do(func() { close(interrupt) })
	})
	defer deadline.Stop()
	out, err := cli.ApplyInterrupted(config, interrupt)
	select {
	case <-interrupt:
	default:
		t.Fatalf("kubelet-service was never waited on; apply: %v\n%s", err, out)
	}
	if missed.Load() {
		t.Fatalf("no guest process ran after legacy-services within a minute; apply: %v\n%s", err, out)
	}
	if err == nil || !strings.Contains(out, "Interrupt received") {
		t.Fatalf("the interrupted apply: %v\n%s", err, out)
	}
	if !acctest.Wrapped(`(?s)join step "kubelet-service".*(context canceled|interrupt)`).MatchString(out) {
		t.Errorf("the diagnostic does not name the step it interrupted:\n%s", out)
	}

	// The guest process ends: terminated by the provider, recorded over
	// vmtools, none left running.
	host := acctest.Sandbox.Hosts.ByName(cn)
	if host == nil {
		t.Fatalf("no simulated host %s", cn)
	}
	if err := acctest.Eventually(30*time.Second, "the guest process is terminated", func(context.Context) (bool, error) {
		for _, p := range host.Processes(nil) {
			if _, _, ended := p.Exited(); !ended {
				return false, nil
			}
		}
		for _, r := range host.Scripts() {
			// Hang ends only when the process is terminated (or the
			// guest goes down, which nothing does here).
			if r.Step == "kubelet-service" && r.Transport == "vmtools" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Errorf("%v (TerminateProcessInGuest calls seen: %d)", err, terminated.Load())
	}
	if terminated.Load() == 0 {
		t.Errorf("no TerminateProcessInGuest call: the interrupted step's guest process was not terminated by the provider")
	}
	removeCalls()

	// The state holds the VM that exists, tainted.
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	vmID, err := acctest.VMAt(t, node)
	if err != nil || vmID == "" {
		t.Fatalf("no VM at the node's path after the interrupt (%v)", err)
	}
	r := acctest.StateResource(st, addr)
	if r == nil || r.AttributeValues["id"] != vmID || !r.Tainted {
		t.Fatalf("VM %s exists; the state holds %+v: want it, tainted", vmID, r)
	}
	checkNoToken(t, node)

	// The next plain apply, the fault cleared (a replacement VM of the
	// same computer name would hold it too), converges.
	acctest.Sandbox.Hosts.ClearFaults(cn)
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the interrupt: %v\n%s", err, out)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Error(err)
	}
	st, err = cli.State()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := acctest.VMAt(t, node)
	if r := acctest.StateResource(st, addr); r == nil || id == "" || r.AttributeValues["id"] != id || r.Tainted {
		t.Errorf("after the next apply: VM %q, state %+v", id, r)
	}
}

// TestAccNode_interruptDuringProgramStartVMTools presses Ctrl-C while
// StartProgramInGuest is in flight for a join step (kubelet-service, held
// running): vCenter has started the program, but its pid never reaches the
// provider. The provider finds the program by the unique file names in its
// command line (ListProcessesInGuest) and terminates it, rather than leave
// it running in the guest.
func TestAccNode_interruptDuringProgramStartVMTools(t *testing.T) {
	defer logDuration(t, "Ctrl-C during StartProgramInGuest", time.Now())
	cli, node, config := nodeToInterrupt(t, "vsp")
	cn := acctest.ComputerNameOf(node)
	acctest.Sandbox.Hosts.SetFaults(cn, winsim.Faults{Steps: []winsim.StepFault{{Step: "kubelet-service", Hang: true, Times: 1}}})
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(cn) })

	// The guest has started kubelet-service's program; its
	// StartProgramInGuest answer is held until the provider, interrupted,
	// lists the guest's processes (or a minute has passed: then the
	// provider never looked, and the test fails below).
	interrupt, listed := make(chan struct{}), make(chan struct{})
	var before atomic.Bool
	var held *winsim.GuestProcess
	var interruptOnce, listedOnce sync.Once
	var terminated atomic.Int64
	defer acctest.Sandbox.Hosts.OnEvent(func(ev vmtools.Event) {
		if !strings.EqualFold(ev.ComputerName, cn) {
			return
		}
		if ev.Script != nil && ev.Script.Step == "legacy-services" && ev.Script.ExitCode == 0 {
			before.Store(true)
		}
		if ev.Program != nil && before.Load() && held == nil {
			held = ev.Program
			interruptOnce.Do(func() { close(interrupt) })
			select {
			case <-listed:
			case <-time.After(time.Minute):
			}
		}
	})()
	removeCalls := acctest.Sandbox.VSphere.OnCall(func(method, _ string) {
		select {
		case <-interrupt:
		default:
			return
		}
		switch method {
		case "ListProcessesInGuest":
			listedOnce.Do(func() { close(listed) })
		case "TerminateProcessInGuest":
			terminated.Add(1)
		}
	})
	t.Cleanup(removeCalls)
	deadline := time.AfterFunc(2*time.Minute, func() { interruptOnce.Do(func() { close(interrupt) }) })
	defer deadline.Stop()
	out, err := cli.ApplyInterrupted(config, interrupt)
	if held == nil {
		t.Fatalf("kubelet-service's program was never started; apply: %v\n%s", err, out)
	}
	if err == nil || !strings.Contains(out, "Interrupt received") {
		t.Fatalf("the interrupted apply: %v\n%s", err, out)
	}
	select {
	case <-listed:
	default:
		t.Fatalf("the interrupted provider never listed the guest's processes: the program it started is left running")
	}
	select {
	case <-held.Done():
	case <-time.After(30 * time.Second):
		t.Errorf("the held program still runs 30 s after the interrupt (TerminateProcessInGuest calls seen: %d)", terminated.Load())
	}
	if terminated.Load() == 0 {
		t.Errorf("no TerminateProcessInGuest call after the interrupt")
	}
	removeCalls()
	checkNoToken(t, node)

	acctest.Sandbox.Hosts.ClearFaults(cn)
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the interrupt: %v\n%s", err, out)
	}
	if err := acctest.CheckNodeReady(t, node); err != nil {
		t.Error(err)
	}
}
