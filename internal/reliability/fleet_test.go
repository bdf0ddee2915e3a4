package reliability_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// fleetSeed chooses the failing nodes and their faults; a failure names it,
// and FLEET_SEED replays another choice.
const fleetSeed = 14

// TestAccNode_fleetFaults creates 50 nodes at once (windows_node with
// count, -parallelism 10 as Terraform's default) while 10% of them fail,
// nodes and faults matched at random (seeded), each fault once: its clone
// refused, its guest refusing the login, a join step failing, its kubelet
// never Ready, its guest never on the network. Every other node must be
// created and Ready; the apply reports each failure with its stage; the
// failed nodes are tainted (or absent, when no VM was made) and nothing
// else is; no VM is untracked and no bootstrap token is left; and the next
// plain apply replaces exactly the failed ones and converges.
func TestAccNode_fleetFaults(t *testing.T) {
	acctest.PreCheck(t)
	if testing.Short() {
		t.Skip("50 nodes: not in -short")
	}
	start := time.Now()
	defer func() { t.Logf("50 nodes, 5 failing: %s", time.Since(start).Round(time.Second)) }()
	const nodes, failing = 50, 5
	seed := uint64(fleetSeed)
	if s := os.Getenv("FLEET_SEED"); s != "" {
		_, _ = fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (FLEET_SEED replays another)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	image := acctest.Name("img")
	prefix := acctest.NodeName("f") // f-<seq>-<i>: within 15 characters
	name := func(i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

	type fault struct {
		stage  string // in the error
		inject func(node string)
		vm     bool // a VM exists after it: tracked, tainted
		slow   bool // fails only at the create's timeout
	}
	kinds := []fault{
		{stage: `cloning .*refused by the sandbox: no capacity for %s`, vm: false, inject: func(node string) {}},
		{stage: `connecting to the guest`, vm: true, inject: func(node string) { acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{FailAuth: true}) }},
		{stage: `join step "kubelet-service" exited with code 1`, vm: true, inject: func(node string) {
			acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{Steps: []winsim.StepFault{{Step: "kubelet-service", ExitCode: 1, Stderr: "Start-Service : simulated failure"}}})
		}},
		{stage: `waiting for the Node to become Ready`, vm: true, slow: true, inject: func(node string) {
			acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{KubeletNeverReady: true})
		}},
		// A guest that never comes up never finishes vCenter's customization
		// either (VMware Tools reports its end from the last boot), which the
		// create waits for before the IP.
		{stage: `waiting for the guest customization`, vm: true, slow: true, inject: func(node string) {
			acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{RefuseConnections: true})
		}},
	}
	// Which nodes fail is drawn, and which fault each gets: every kind
	// once (there are as many kinds as failing nodes), in a drawn order.
	victims := map[int]fault{}
	order := rng.Perm(len(kinds))
	for k, i := range rng.Perm(nodes)[:failing] {
		victims[i] = kinds[order[k%len(kinds)]]
	}
	cloneRefused := map[string]bool{}
	var slow []string
	for i, f := range victims {
		t.Logf("node %s fails: %s", name(i), strings.ReplaceAll(f.stage, "%s", name(i)))
		if !f.vm {
			cloneRefused[name(i)] = true
		}
		if f.slow {
			slow = append(slow, fmt.Sprintf("%q", name(i)))
		}
	}
	// A clone refused by name (vcsim's fault rules match the object the
	// call is on: the template, shared by all).
	var faultsOn atomic.Bool
	faultsOn.Store(true)
	acctest.Sandbox.VSphere.OnClone(func(_ *simulator.VirtualMachine, req *types.CloneVM_Task) error {
		if faultsOn.Load() && cloneRefused[req.Name] {
			return fmt.Errorf("refused by the sandbox: no capacity for %s", req.Name)
		}
		return nil
	})
	inject := func() {
		for i, f := range victims {
			f.inject(name(i))
		}
	}
	clear := func() {
		faultsOn.Store(false)
		for i := range victims {
			acctest.Sandbox.Hosts.ClearFaults(name(i))
		}
	}
	t.Cleanup(clear)

	// The nodes that fail only at their timeout get a short one.
	config := acctest.NodeConfig(image, nil, "") + fmt.Sprintf(`
locals {
  slow = [%s]
}

resource "windows_node" "n" {
  count             = %d
  name              = "%s-${count.index}"
  template          = windows_golden_image.test.template_path
  networking_id     = windows_node_networking.test.id
%s  timeouts {
    create = contains(local.slow, "%s-${count.index}") ? "30s" : "10m"
  }
}
`, strings.Join(slow, ", "), nodes, prefix, acctest.MachineInSandbox(), prefix)

	t.Cleanup(func() { // after the CLI's destroy (cleanups run last first)
		for i := range nodes {
			if id, err := acctest.VMAt(t, name(i)); err != nil || id != "" {
				t.Errorf("%s's VM %q is left (err %v)", name(i), id, err)
			}
		}
	})
	cli := acctest.NewCLI(t)
	if out, err := cli.Apply(acctest.GoldenImageConfig(image, nil)); err != nil {
		t.Fatalf("the image: %v\n%s", err, out)
	}

	inject()
	applied := time.Now()
	out, err := cli.Apply(config)
	t.Logf("the apply with %d failures: %s", failing, time.Since(applied).Round(time.Second))
	if err == nil {
		t.Fatalf("the apply with %d failing nodes succeeded", failing)
	}
	for i, f := range victims {
		// Each failure is reported for its node, naming the stage.
		want := acctest.Wrapped(`(?s)creating Windows node \(` + name(i) + `\).*?` + strings.ReplaceAll(f.stage, "%s", name(i)))
		if !want.MatchString(out) {
			t.Errorf("no error for %s naming %q in:\n%s", name(i), f.stage, lastLines(out, 200))
		}
	}
	if n := strings.Count(out, "Error: "); n != failing {
		t.Errorf("%d errors, want %d", n, failing)
	}

	// vSphere, the cluster and the state agree.
	clear()
	_, plan, err := cli.Plan(config, false)
	if err != nil {
		t.Fatal(err)
	}
	checkNoToken(t, prefix)
	actions := map[string]string{}
	for _, rc := range plan.ResourceChanges {
		actions[rc.Address] = fmt.Sprint(rc.Change.Actions)
	}
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	inState := map[string]bool{}
	tainted := map[string]bool{}
	ids := map[string]string{}
	if st.Values != nil && st.Values.RootModule != nil {
		for _, r := range st.Values.RootModule.Resources {
			inState[r.Address] = true
			tainted[r.Address] = r.Tainted
			ids[r.Address], _ = r.AttributeValues["id"].(string)
		}
	}
	for i := range nodes {
		addr := fmt.Sprintf("windows_node.n[%d]", i)
		vm, err := acctest.VMAt(t, name(i))
		if err != nil {
			t.Fatal(err)
		}
		f, failed := victims[i]
		want := "[no-op]"
		switch {
		case failed && f.vm:
			want = "[delete create]"
		case failed:
			want = "[create]"
		}
		if actions[addr] != want {
			t.Errorf("%s (%s): planned %s, want %s", addr, name(i), actions[addr], want)
		}
		if vm != ids[addr] || (failed && f.vm) != tainted[addr] {
			t.Errorf("%s (%s): VM %q in vSphere, %q in the state (tainted %v)", addr, name(i), vm, ids[addr], tainted[addr])
		}
	}

	// The next plain apply replaces the failed nodes and converges.
	applied = time.Now()
	if out, err := cli.Apply(config); err != nil {
		t.Fatalf("the apply after the failures: %v\n%s", err, lastLines(out, 100))
	}
	t.Logf("the apply that replaces them: %s", time.Since(applied).Round(time.Second))
	for i := range nodes {
		if err := acctest.CheckNodeReady(t, name(i)); err != nil {
			t.Error(err)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
