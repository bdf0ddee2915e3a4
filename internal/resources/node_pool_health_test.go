package resources_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAccNodePool_replaceUnhealthyAgents: a member of a pool whose VM is
// reset with the "HNS lost on reboot" fault comes back Ready with flannel
// failing and kube-proxy not Ready. The pool's refresh records it
// agents_not_ready with the causes, and with replace_unhealthy_after the
// plan replaces it, saying for how long and why; the apply replaces it and
// the plan after is empty.
func TestAccNodePool_replaceUnhealthyAgents(t *testing.T) {
	acctest.PreCheck(t)
	acctest.RequireSandbox(t, "injects a fault into the simulated host")
	k := acctest.Kube(t)
	image := acctest.Name("img-ph")
	prefix := fmt.Sprintf("ph%d", acctest.Seq()%100000)
	config := nodePoolConfig(image, prefix, 2, "windows_golden_image.test.template_path", "", "  replace_unhealthy_after = \"1s\"\n")
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	out, plan := planOK(t, cli, config)
	if c := change(t, plan, poolAddr); !c.Actions.NoOp() || strings.Contains(out, "unhealthy") {
		t.Fatalf("the plan right after the create: %v\n%s", c.Actions, out)
	}
	sick := poolMemberAt(t, plan, 0)
	node := sick["name"].(string)
	before, err := k.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acctest.Sandbox.Hosts.SetFaults(node, winsim.Faults{HNSLostOnReboot: true})
	t.Cleanup(func() { acctest.Sandbox.Hosts.ClearFaults(node) })
	resetVM(t, k, node, before.Status.NodeInfo.BootID)
	waitAgentFailure(t, k, "kube-system", node, "flannel", "Element not found")

	out, plan = planOK(t, cli, config)
	expectOutput(t, out, `Warning: Windows node pool `+prefix+` replaces 1 member\(s\)`,
		node+` \(its node agents have not been Running and Ready for \S+ \(replace_unhealthy_after = 1s\): agent kube-proxy: pod kube-system/\S+ is not_ready; `+
			`agent flannel: pod kube-system/\S+ is CrashLoopBackOff, \d+ restarts, last exit code 1: .*Element not found`)
	var refreshed map[string]any
	for i := range 2 {
		if m := poolMemberAt(t, plan, i); m["name"] == node {
			refreshed = m
		}
	}
	causes, _ := refreshed["health_causes"].([]any)
	if refreshed["health"] != "agents_not_ready" || refreshed["not_ready_since"] == "" || len(causes) != 2 {
		t.Errorf("the refreshed member: %v", refreshed)
	}

	if _, err := cli.Apply(config); err != nil {
		t.Fatalf("replacing the member: %v", err)
	}
	out, plan = planOK(t, cli, config)
	if c := change(t, plan, poolAddr); !c.Actions.NoOp() || strings.Contains(out, "Warning:") {
		t.Errorf("the plan after the replacement: %v\n%s", c.Actions, out)
	}
	var names []string
	for i := range 2 {
		m := poolMemberAt(t, plan, i)
		names = append(names, m["name"].(string))
		if m["health"] != "ready" {
			t.Errorf("member after the replacement: %v", m)
		}
	}
	if slices.Contains(names, node) {
		t.Errorf("members %v: %s was not replaced", names, node)
	}
}

// poolMemberAt is the pool's i-th member as the plan's refresh read it.
func poolMemberAt(t *testing.T, plan *tfjson.Plan, i int) map[string]any {
	t.Helper()
	members, _ := change(t, plan, poolAddr).Before.(map[string]any)["members"].([]any)
	if i >= len(members) {
		t.Fatalf("the pool has %d members", len(members))
	}
	m, _ := members[i].(map[string]any)
	return m
}
