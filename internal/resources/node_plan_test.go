package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_planShowsDisruption: what an apply will do to a running node
// is in the plan the user reads. resource.Test cannot see a plan's
// warnings (it reads the plan JSON, which has none), so this test runs the
// real CLI itself (acctest.CLI, the provider served in-process as
// resource.Test serves it) and reads what `terraform plan` prints: every
// change that drains, restarts or power-cycles the node warns with the node's
// name, what happens and how the drain behaves; a change that needs none of
// that says so; an update that power-cycles leaves ready unknown, and one
// that does not keeps ready and joined from the state.
func TestAccNode_planShowsDisruption(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img")
	node := acctest.NodeName("dis")
	const addr = "windows_node.n0"
	hw := func(cpus, mem, disk int) string {
		return fmt.Sprintf("  num_cpus = %d\n  memory_mb = %d\n  disk_size_gb = %d\n", cpus, mem, disk)
	}
	// Checked after the CLI's cleanup has destroyed everything (LIFO).
	t.Cleanup(func() {
		if id, err := acctest.VMAt(t, node); err != nil || id != "" {
			t.Errorf("the node's VM %q is left (err %v)", id, err)
		}
	})
	cli := acctest.NewCLI(t)
	base := hw(2, 4096, 60)
	if _, err := cli.Apply(acctest.NodeConfig(image, []string{node}, base)); err != nil {
		t.Fatal(err)
	}

	// More CPUs and memory on a VM without hot-add: a drain (with the
	// configured settings) and a power cycle.
	out, plan := planOK(t, cli, acctest.NodeConfig(image, []string{node}, hw(4, 8192, 60)+`  drain = {
    timeout              = "3m"
    delete_emptydir_data = true
    force                = true
  }
`))
	expectOutput(t, out,
		`Warning: Windows node `+node+` will be drained and power-cycled`,
		`num_cpus 2 -> 4, memory_mb 4096 -> 8192: adding CPUs \(2 to 4\) needs CPU hot-add, which is off; adding memory \(4096 MB to 8192 MB\) needs memory hot-add, which is off`,
		`cordons and drains the node, shuts the guest down, reconfigures the VM, powers it on, waits until the Node is Ready again and uncordons it`,
		`PodDisruptionBudgets are honoured`, `gives up after 3m \(drain.timeout\)`, `DaemonSet pods stay`,
		`Pods with emptyDir volumes are evicted and that data is lost`, `Pods no controller manages are deleted and not recreated`)
	expectUnknown(t, plan, addr, map[string]bool{"ready": true, "ip_address": true, "joined": false})

	// A label and a bigger disk: no drain, no restart; ready and joined
	// stay as they are.
	out, plan = planOK(t, cli, acctest.NodeConfig(image, []string{node}, hw(2, 4096, 80)+`  labels = { "example.com/pool" = "web" }`+"\n"))
	expectOutput(t, out, `Warning: Windows node `+node+`: the disk grows while the node runs`,
		`disk_size_gb 60 -> 80: the virtual disk is extended in place, with no drain, no restart and no power cycle`)
	if strings.Contains(out, "drained") || strings.Contains(out, "join the cluster again") {
		t.Errorf("a label and a disk change warn of a drain or a re-join:\n%s", out)
	}
	expectUnknown(t, plan, addr, map[string]bool{"ready": false, "joined": false, "ip_address": false})
	if after := change(t, plan, addr).After.(map[string]any); after["ready"] != true || after["joined"] != true {
		t.Errorf("planned ready = %v, joined = %v; want true from the state", after["ready"], after["joined"])
	}

	// A new name replaces the node: the old one is drained (the state's
	// drain settings) and destroyed.
	out, _ = planOK(t, cli, acctest.NodeConfig(image, []string{node + "r"}, base))
	expectOutput(t, out, `Warning: Windows node `+node+` will be replaced: the old node is drained and destroyed`,
		`Changing name replaces the node`, `Destroying cordons and drains the node, deletes its Node, shuts the guest down and destroys the VM`,
		`gives up after 10m \(drain.timeout\)`, `Pods with emptyDir volumes stop the drain before anything is evicted`)

	// Another networking: joined again in place, without a drain.
	out, plan = planOK(t, cli, acctest.AdminProvider()+acctest.NodeConfigWithout(image, []string{node}, base))
	expectOutput(t, out, `Warning: Windows node `+node+` will join the cluster again in place`,
		`networking_id kube-system -> \(none\): the update runs the join steps again on the running guest`,
		`restarts the kubelet service`, `No drain and no reboot`)
	expectUnknown(t, plan, addr, map[string]bool{"ready": true})

	// Destroy.
	out, _ = planOKDestroy(t, cli, acctest.NodeConfig(image, []string{node}, base))
	expectOutput(t, out, `Warning: Windows node `+node+` will be drained and destroyed`, `PodDisruptionBudgets are honoured`)

	// The Node deleted outside Terraform: joined again, nothing to drain.
	if err := acctest.Kube(t).CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, plan = planOK(t, cli, acctest.NodeConfig(image, []string{node}, base))
	expectOutput(t, out, `Warning: Windows node `+node+` will join the cluster again`, `Its Node is gone from the cluster while the VM runs`,
		`Nothing is drained`)
	expectUnknown(t, plan, addr, map[string]bool{"ready": true, "pod_cidr": true})
}

func planOK(t *testing.T, cli *acctest.CLI, config string) (string, *tfjson.Plan) {
	t.Helper()
	out, plan, err := cli.Plan(config, false)
	if err != nil {
		t.Fatal(err)
	}
	return out, plan
}

func planOKDestroy(t *testing.T, cli *acctest.CLI, config string) (string, *tfjson.Plan) {
	t.Helper()
	out, plan, err := cli.Plan(config, true)
	if err != nil {
		t.Fatal(err)
	}
	return out, plan
}

// expectOutput checks that the CLI printed each pattern (spaces also match
// the line breaks of a wrapped warning).
func expectOutput(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !acctest.Wrapped(p).MatchString(out) {
			t.Errorf("the plan does not print %q:\n%s", p, out)
		}
	}
}

func change(t *testing.T, plan *tfjson.Plan, addr string) *tfjson.Change {
	t.Helper()
	for _, rc := range plan.ResourceChanges {
		if rc.Address == addr {
			return rc.Change
		}
	}
	t.Fatalf("no change of %s in the plan", addr)
	return nil
}

// expectUnknown checks which attributes the plan leaves unknown.
func expectUnknown(t *testing.T, plan *tfjson.Plan, addr string, want map[string]bool) {
	t.Helper()
	unknown, _ := change(t, plan, addr).AfterUnknown.(map[string]any)
	for attr, w := range want {
		if got := unknown[attr] == true; got != w {
			t.Errorf("%s.%s unknown in the plan = %v, want %v", addr, attr, got, w)
		}
	}
}
