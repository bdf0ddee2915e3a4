package resources_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// rebootWatch follows the guests' reboot steps and restarts during a test:
// when each computer ran the reboot step, and how often it went down after.
type rebootWatch struct {
	mu      sync.Mutex
	stepAt  map[string][]time.Time
	downs   map[string]int
	remove  func()
	matches func(computer string) bool
}

func watchReboots(t *testing.T, matches func(computer string) bool) *rebootWatch {
	sb := acctest.RequireSandbox(t, "watches the guests' restarts")
	w := &rebootWatch{stepAt: map[string][]time.Time{}, downs: map[string]int{}, matches: matches}
	w.remove = sb.Hosts.OnEvent(func(ev vmtools.Event) {
		c := strings.ToLower(ev.ComputerName)
		if !w.matches(c) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch {
		case ev.Script != nil && ev.Script.Step == "reboot":
			w.stepAt[c] = append(w.stepAt[c], time.Now())
		case ev.Down && len(w.stepAt[c]) > 0:
			w.downs[c]++
		}
	})
	t.Cleanup(w.remove)
	return w
}

// check: every computer matched ran the reboot step once and went down
// after it; it returns the longest time from a reboot step to end.
func (w *rebootWatch) check(t *testing.T, computers []string, end time.Time) time.Duration {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var longest time.Duration
	for _, c := range computers {
		c = strings.ToLower(c)
		if len(w.stepAt[c]) != 1 || w.downs[c] < 1 {
			t.Errorf("%s: reboot step ran %d times, went down %d times after it; want once, and down", c, len(w.stepAt[c]), w.downs[c])
			continue
		}
		longest = max(longest, end.Sub(w.stepAt[c][0]))
	}
	return longest
}

// TestAccNode_rebootAfterJoin: with reboot_after_join a node is restarted
// once after its join, and its create returns only once it is Ready from
// the new boot, with its agents and its probe again; the next plan is empty.
// Without it no node is restarted.
func TestAccNode_rebootAfterJoin(t *testing.T) {
	acctest.PreCheck(t)
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "rb")
	image := acctest.Name("img-rb")
	node := fmt.Sprintf("rb-%d", acctest.Seq())
	w := watchReboots(t, func(c string) bool { return c == node })
	config := flannelNodeConfig(ns, image, []string{node}, "  reboot_after_join = true\n")
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	recovery := w.check(t, []string{node}, time.Now())
	t.Logf("reboot after join: from the reboot step to the create's end (Ready, agents, probe again) %s", recovery.Round(time.Millisecond))
	if err := checkAgentsRunning(t, ns, node); err != nil {
		t.Fatal(err)
	}
	out, plan := planOK(t, cli, config)
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the plan after the create changes %s: %v\n%s", rc.Address, rc.Change.Actions, out)
		}
	}
}

// TestAccNodePool_rebootAfterJoin: a pool with reboot_after_join restarts
// each new member once after its join, and counts it only once it is
// Ready, with its agents and probe, from the new boot.
func TestAccNodePool_rebootAfterJoin(t *testing.T) {
	acctest.PreCheck(t)
	image := acctest.Name("img-prb")
	prefix := fmt.Sprintf("prb%d", acctest.Seq()%100000)
	w := watchReboots(t, func(c string) bool { return strings.HasPrefix(c, prefix) })
	config := nodePoolConfig(image, prefix, 2, "windows_golden_image.test.template_path", "", "  reboot_after_join = true\n")
	cli := acctest.NewCLI(t)
	if _, err := cli.Apply(config); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, r := range st.Values.RootModule.Resources {
		if r.Address != poolAddr {
			continue
		}
		for _, m := range r.AttributeValues["members"].([]any) {
			mm := m.(map[string]any)
			members = append(members, mm["name"].(string))
			if mm["health"] != string(winpool.Ready) {
				t.Errorf("member %v", mm)
			}
		}
	}
	if len(members) != 2 {
		t.Fatalf("members %v", members)
	}
	recovery := w.check(t, members, end)
	t.Logf("pool of 2 with reboot_after_join: longest time from a member's reboot step to the apply's end %s", recovery.Round(time.Millisecond))
	out, plan := planOK(t, cli, config)
	for _, rc := range plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			t.Errorf("the plan after the create changes %s: %v\n%s", rc.Address, rc.Change.Actions, out)
		}
	}
}
