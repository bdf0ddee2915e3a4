package winpool_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// cluster is an in-memory implementation of winpool's own Nodes interface:
// it keeps which nodes exist and which are Ready, and records the fewest
// Ready nodes and the most nodes and operations in flight it ever had, so a
// test asserts the bounds a roll promises. The acceptance tests drive the
// real winnode.Manager against vcsim and a real control plane.
type cluster struct {
	mu       sync.Mutex
	next     int
	nodes    map[string]bool // name -> Ready
	inFlight int

	maxInFlight, maxNodes, minReady int
	failCreate                      map[string]error // by creation index ("#3") or "*"
	creates                         []string
	deletes                         []string
}

func newCluster(ready ...string) *cluster {
	c := &cluster{nodes: map[string]bool{}, failCreate: map[string]error{}, minReady: len(ready)}
	for _, n := range ready {
		c.nodes[n] = true
	}
	return c
}

func (c *cluster) enter() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight++
	c.maxInFlight = max(c.maxInFlight, c.inFlight)
}

func (c *cluster) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
}

// observe records the bounds; the caller holds mu.
func (c *cluster) observe() {
	ready := 0
	for _, r := range c.nodes {
		if r {
			ready++
		}
	}
	c.minReady = min(c.minReady, ready)
	c.maxNodes = max(c.maxNodes, len(c.nodes))
}

func (c *cluster) Create(ctx context.Context, spec winnode.Spec, onVM func(winnode.Identity)) (winnode.Result, error) {
	c.enter()
	defer c.leave()
	c.mu.Lock()
	c.next++
	index := fmt.Sprintf("#%d", c.next)
	id := winnode.Identity{VMID: "vm-" + spec.Name, BIOSUUID: "uuid-" + spec.Name}
	c.nodes[spec.Name] = false
	c.creates = append(c.creates, spec.Name+"@"+spec.ResourcePoolID)
	c.observe()
	err := c.failCreate[index]
	if err == nil {
		err = c.failCreate["*"]
	}
	c.mu.Unlock()
	onVM(id)
	if err != nil {
		return winnode.Result{Identity: id}, err
	}
	if ctx.Err() != nil {
		return winnode.Result{Identity: id}, ctx.Err()
	}
	c.mu.Lock()
	c.nodes[spec.Name] = true
	c.observe()
	c.mu.Unlock()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: spec.Name}, Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"},
	}}
	return winnode.Result{Identity: id, IP: "10.0.0.1", WindowsBuildFull: "10.0.20348.2340", Node: node}, nil
}

func (c *cluster) Delete(ctx context.Context, nodeName, vmID string, _ kube.DrainOptions) error {
	c.enter()
	defer c.leave()
	c.mu.Lock()
	defer c.mu.Unlock()
	// Cordoned and drained: no longer available, then gone.
	c.nodes[nodeName] = false
	c.observe()
	delete(c.nodes, nodeName)
	c.deletes = append(c.deletes, nodeName+"@"+vmID)
	return ctx.Err()
}

func (c *cluster) ForgetNode(ctx context.Context, nodeName string, _ winnode.Identity) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.nodes, nodeName)
	c.deletes = append(c.deletes, nodeName+" (Node only)")
	return ctx.Err()
}

func (c *cluster) SetNodeSettings(context.Context, string, kube.NodeSettings) (*corev1.Node, error) {
	return nil, errors.New("not used by Converge")
}

func members(rev string, names ...string) []winpool.Member {
	var out []winpool.Member
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range names {
		out = append(out, winpool.Member{Name: n, Identity: winnode.Identity{VMID: "vm-" + n}, Revision: rev,
			Health: winpool.Ready, Created: base.Add(time.Duration(i) * time.Hour)})
	}
	return out
}

func pool(replicas, surge, unavailable int) winpool.Pool {
	return winpool.Pool{Prefix: "win", Revision: "r2", Policy: winpool.Policy{
		Replicas: replicas, MaxParallel: 10, MaxSurge: surge, MaxUnavailable: unavailable,
	}}
}

func names(ms []winpool.Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func changes(cs []winpool.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Member)
	}
	return out
}

// TestPlanSaysWhy: a member replaced for its health says for how long, why
// and what the refresh found wrong.
func TestPlanSaysWhy(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ms := members("r2", "a", "b")
	ms[1].Health, ms[1].NotReadySince = winpool.AgentsNotReady, now.Add(-15*time.Minute)
	ms[1].Causes = []string{"agent flannel: pod kube-system/flannel-b is CrashLoopBackOff, last exit code 1: failed to create HostComputeNetwork"}
	p := pool(2, 1, 0)
	p.ReplaceUnhealthyAfter = 10 * time.Minute
	r := winpool.Plan(p, ms, now)
	want := "its node agents have not been Running and Ready for 15m0s (replace_unhealthy_after = 10m0s): " +
		"agent flannel: pod kube-system/flannel-b is CrashLoopBackOff, last exit code 1: failed to create HostComputeNetwork"
	if len(r.Replace) != 1 || r.Replace[0].Reason != want {
		t.Errorf("replace %+v\nwant the reason %q", r.Replace, want)
	}
}

// TestObserveHealth: a member's health from a refresh: agents not Ready on
// a Ready Node, since their pod's transition, or since the first refresh
// that found an agent without a pod (kept by the next ones); healthy again
// clears it.
func TestObserveHealth(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ready := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	vm := winnode.Observed{VM: &vsphere.VMInfo{}, Node: ready}
	missing := kube.NodeHealth{NodeReady: true, AgentsDown: []kube.AgentStatus{{Agent: kube.Agent{Name: "flannel"}}},
		Causes: []string{"agent flannel (DaemonSet kube-flannel-ds-windows): no pod on the node"}}
	var m winpool.Member
	obs := vm
	obs.Health = &missing
	m.Observe(obs, t0)
	if m.Health != winpool.AgentsNotReady || !m.NotReadySince.Equal(t0) || len(m.Causes) != 1 {
		t.Errorf("first refresh: %+v", m)
	}
	m.Observe(obs, t0.Add(time.Hour))
	if !m.NotReadySince.Equal(t0) {
		t.Errorf("second refresh moved since to %s", m.NotReadySince)
	}
	crash := missing
	crash.Since = t0.Add(-time.Minute)
	obs.Health = &crash
	m.Observe(obs, t0.Add(2*time.Hour))
	if !m.NotReadySince.Equal(t0.Add(-time.Minute)) {
		t.Errorf("an agent pod's transition: since %s", m.NotReadySince)
	}
	dns := kube.NodeHealth{NodeReady: true, Causes: []string{"cluster DNS: Service kube-system/kube-dns has no ready endpoints"}}
	obs.Health = &dns
	m.Observe(obs, t0)
	if m.Health != winpool.Ready || !m.NotReadySince.IsZero() || len(m.Causes) != 1 {
		t.Errorf("the cluster DNS gone is no member's fault: %+v", m)
	}
	m.Observe(winnode.Observed{}, t0)
	if m.Health != winpool.VMMissing || m.Causes != nil {
		t.Errorf("VM gone: %+v", m)
	}
}

// TestObserveProbeFailure: a Ready member whose refresh probe failed is
// network_probe_failed since the first refresh that saw it fail, with the
// probe's failure among its causes, and past replace_unhealthy_after it is
// replaced saying so; a passing probe makes it Ready again.
func TestObserveProbeFailure(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ready := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	failure := "network probe: a pod on another node (10.244.0.5:8080) failed: timed out"
	obs := winnode.Observed{VM: &vsphere.VMInfo{}, Node: ready, Health: &kube.NodeHealth{NodeReady: true}, ProbeFailure: failure}
	ms := members("r2", "a", "b")
	ms[1].Observe(obs, t0)
	if ms[1].Health != winpool.NetworkProbeFailed || !ms[1].NotReadySince.Equal(t0) || len(ms[1].Causes) != 1 || ms[1].Causes[0] != failure {
		t.Fatalf("first failing refresh: %+v", ms[1])
	}
	ms[1].Observe(obs, t0.Add(20*time.Minute))
	if !ms[1].NotReadySince.Equal(t0) {
		t.Errorf("second failing refresh moved since to %s", ms[1].NotReadySince)
	}
	p := pool(2, 1, 0)
	p.ReplaceUnhealthyAfter = 10 * time.Minute
	r := winpool.Plan(p, ms, t0.Add(20*time.Minute))
	want := "its network probe has been failing for 20m0s (replace_unhealthy_after = 10m0s): " + failure
	if len(r.Replace) != 1 || r.Replace[0].Reason != want {
		t.Errorf("replace %+v\nwant the reason %q", r.Replace, want)
	}
	obs.ProbeFailure = ""
	ms[1].Observe(obs, t0.Add(30*time.Minute))
	if ms[1].Health != winpool.Ready || !ms[1].NotReadySince.IsZero() {
		t.Errorf("a passing probe: %+v", ms[1])
	}
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	gone := members("r2", "a", "b", "c")
	gone[1].Health = winpool.VMMissing
	sick := members("r2", "a", "b", "c")
	sick[2].Health, sick[2].NotReadySince = winpool.NotReady, now.Add(-20*time.Minute)
	p := pool(3, 1, 0)
	healing := p
	healing.ReplaceUnhealthyAfter = 10 * time.Minute
	mixed := append(members("r1", "o1", "o2"), members("r2", "n1")...)
	mixed[2].Created = mixed[1].Created.Add(time.Hour)
	unfinished := members("r2", "a", "b")
	unfinished[1].Revision = ""
	agentsDown := members("r2", "a", "b", "c")
	agentsDown[1].Health, agentsDown[1].NotReadySince = winpool.AgentsNotReady, now.Add(-15*time.Minute)
	agentsDown[1].Causes = []string{"agent flannel: pod kube-system/flannel-b is CrashLoopBackOff"}

	for _, tc := range []struct {
		name            string
		pool            winpool.Pool
		members         []winpool.Member
		replace, remove []string
		create          int
	}{
		{"nothing to do", p, members("r2", "a", "b", "c"), nil, nil, 0},
		{"scale up", p, members("r2", "a"), nil, nil, 2},
		{"scale down removes the newest", pool(1, 1, 0), members("r2", "a", "b", "c"), nil, []string{"c", "b"}, 0},
		{"a gone VM is replaced", p, gone, []string{"b"}, nil, 0},
		{"NotReady is kept without replace_unhealthy_after", p, sick, nil, nil, 0},
		{"NotReady past replace_unhealthy_after is replaced", healing, sick, []string{"c"}, nil, 0},
		{"agents not Ready are kept without replace_unhealthy_after", p, agentsDown, nil, nil, 0},
		{"agents not Ready past replace_unhealthy_after are replaced", healing, agentsDown, []string{"b"}, nil, 0},
		{"outdated members are replaced oldest first", p, mixed, []string{"o1", "o2"}, nil, 0},
		{"outdated members are replaced while growing", pool(4, 1, 0), mixed, []string{"o1", "o2"}, nil, 1},
		{"an unfinished create is replaced", pool(2, 1, 0), unfinished, []string{"b"}, nil, 0},
		{"shrinking while rolling removes the outdated", pool(1, 1, 0), mixed, nil, []string{"o1", "o2"}, 0},
		{"unhealthy members go before outdated ones", pool(1, 1, 0), append(members("r1", "o1"), gone[1]), []string{"b"}, []string{"o1"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := winpool.Plan(tc.pool, tc.members, now)
			if got := changes(r.Replace); !slices.Equal(got, tc.replace) {
				t.Errorf("replace %v, want %v", got, tc.replace)
			}
			if got := changes(r.Remove); !slices.Equal(got, tc.remove) {
				t.Errorf("remove %v, want %v", got, tc.remove)
			}
			if r.Create != tc.create {
				t.Errorf("create %d, want %d", r.Create, tc.create)
			}
		})
	}
}

func TestConvergeRollKeepsCapacity(t *testing.T) {
	for _, tc := range []struct{ surge, unavailable, wantMaxNodes, wantMinReady int }{
		{1, 0, 11, 10},
		{2, 0, 12, 10},
		{0, 2, 10, 8},
		{2, 1, 12, 9},
	} {
		t.Run(fmt.Sprintf("surge %d unavailable %d", tc.surge, tc.unavailable), func(t *testing.T) {
			old := members("r1", "o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9")
			c := newCluster(names(old)...)
			var saves int
			got, err := winpool.Converge(t.Context(), c, pool(10, tc.surge, tc.unavailable), old, winpool.Options{
				Save: func([]winpool.Member) { saves++ },
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 10 {
				t.Fatalf("%d members, want 10: %v", len(got), names(got))
			}
			for _, m := range got {
				if m.Revision != "r2" || m.Health != winpool.Ready || !strings.HasPrefix(m.Name, "win-") || len(m.Name) != 9 {
					t.Errorf("member %+v: want a Ready win-xxxxx of revision r2", m)
				}
			}
			// The bounds hold whatever order the steps finish in; how
			// close a run comes to them depends on that order.
			if c.minReady < tc.wantMinReady {
				t.Errorf("the fewest Ready nodes during the roll: %d, below %d (Replicas - MaxUnavailable)", c.minReady, tc.wantMinReady)
			}
			if c.maxNodes > tc.wantMaxNodes {
				t.Errorf("the most nodes during the roll: %d, above %d (Replicas + MaxSurge)", c.maxNodes, tc.wantMaxNodes)
			}
			// Without unavailability a roll must surge; without surge it
			// must dip.
			if tc.unavailable == 0 && c.maxNodes <= 10 {
				t.Errorf("max_unavailable 0: the roll never had more than %d nodes, so it never surged", c.maxNodes)
			}
			if tc.surge == 0 && c.minReady >= 10 {
				t.Errorf("max_surge 0: never fewer than %d Ready nodes, so no old member went first", c.minReady)
			}
			if len(c.deletes) != 10 || saves != 10*3 {
				t.Errorf("%d deletes and %d saves, want 10 and 30 (a VM, a Ready member, a removal each)", len(c.deletes), saves)
			}
		})
	}
}

func TestConvergeScaleUpBoundedByMaxParallel(t *testing.T) {
	c := newCluster()
	p := pool(25, 1, 0)
	p.MaxParallel = 4
	got, err := winpool.Converge(t.Context(), c, p, nil, winpool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || c.maxInFlight > 4 {
		t.Errorf("%d members with up to %d creates at once, want 25 with at most 4", len(got), c.maxInFlight)
	}
	if !slices.IsSortedFunc(got, func(a, b winpool.Member) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("members not sorted by name: %v", names(got))
	}
}

func TestConvergeScaleDownRemovesNewestAndUnhealthy(t *testing.T) {
	ms := members("r2", "a", "b", "c", "d", "e")
	ms[0].Health = winpool.NotJoined
	c := newCluster("b", "c", "d", "e")
	c.nodes["a"] = false
	got, err := winpool.Converge(t.Context(), c, pool(2, 1, 0), ms, winpool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(got), []string{"b", "c"}) {
		t.Errorf("members %v, want [b c] (a not joined, d and e the newest)", names(got))
	}
}

func TestConvergeFailureKeepsTheVM(t *testing.T) {
	c := newCluster()
	c.failCreate["#2"] = errors.New("waiting for the Node to become Ready: timed out")
	p := pool(3, 1, 0)
	p.MaxParallel = 1
	var saved []winpool.Member
	got, err := winpool.Converge(t.Context(), c, p, nil, winpool.Options{Save: func(m []winpool.Member) { saved = m }})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v, want the create's", err)
	}
	if len(got) != 2 || len(saved) != 2 {
		t.Fatalf("members %v (saved %v), want the finished one and the failed one, whose VM exists", names(got), names(saved))
	}
	failed := slices.IndexFunc(got, func(m winpool.Member) bool { return m.Revision == "" })
	if failed < 0 || got[failed].VMID == "" {
		t.Fatalf("no member without a revision and with its VM: %+v", got)
	}
	// The next apply replaces it and completes the pool.
	r := winpool.Plan(p, got, time.Now())
	if !slices.Equal(changes(r.Replace), []string{got[failed].Name}) || r.Create != 1 {
		t.Errorf("next plan %+v, want the failed member replaced and one more created", r)
	}
	c.failCreate = map[string]error{}
	got, err = winpool.Converge(t.Context(), c, p, got, winpool.Options{})
	if err != nil || len(got) != 3 {
		t.Fatalf("resume: %v, %v", names(got), err)
	}
}

func TestConvergeInterruptedResumes(t *testing.T) {
	old := members("r1", "o1", "o2", "o3")
	c := newCluster(names(old)...)
	ctx, cancel := context.WithCancel(t.Context())
	var saved []winpool.Member
	// The apply is interrupted as soon as the first new member is done.
	_, err := winpool.Converge(ctx, c, pool(3, 1, 0), old, winpool.Options{Save: func(m []winpool.Member) {
		saved = m
		if slices.ContainsFunc(m, func(m winpool.Member) bool { return m.Revision == "r2" }) {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the cancellation", err)
	}
	left := saved
	var outdated, current, unfinished int
	for _, m := range left {
		switch m.Revision {
		case "r1":
			outdated++
		case "r2":
			current++
		default:
			unfinished++
		}
	}
	if current < 1 || outdated+current+unfinished != len(left) || outdated < 2 {
		t.Fatalf("saved %+v: want at least one new member and the old ones not yet removed", left)
	}
	got, err := winpool.Converge(t.Context(), c, pool(3, 1, 0), left, winpool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if m.Revision != "r2" {
			t.Errorf("after the resumed roll, member %s has revision %q", m.Name, m.Revision)
		}
	}
	if len(got) != 3 || c.minReady < 3 {
		t.Errorf("%d members, fewest Ready %d; want 3 and 3", len(got), c.minReady)
	}
}

func TestConvergeSpreadsOverFailureDomains(t *testing.T) {
	c := newCluster()
	p := pool(5, 1, 0)
	p.Domains = []winpool.FailureDomain{{Name: "a", ResourcePoolID: "rp-a"}, {Name: "b", ResourcePoolID: "rp-b"}}
	got, err := winpool.Converge(t.Context(), c, p, nil, winpool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, m := range got {
		count[m.FailureDomain]++
	}
	if count["a"] != 3 || count["b"] != 2 {
		t.Errorf("members per failure domain %v, want a:3 b:2", count)
	}
	for _, cr := range c.creates {
		if !strings.HasSuffix(cr, "@rp-a") && !strings.HasSuffix(cr, "@rp-b") {
			t.Errorf("create %s not placed in a domain's resource pool", cr)
		}
	}
}

func TestConvergeGoneVMDeletesOnlyTheNode(t *testing.T) {
	ms := members("r2", "a", "b")
	ms[1].Health = winpool.VMMissing
	c := newCluster("a")
	got, err := winpool.Converge(t.Context(), c, pool(2, 1, 0), ms, winpool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(c.deletes, []string{"b (Node only)"}) {
		t.Errorf("members %v, deletes %v: want b replaced and only its Node deleted, without a drain", names(got), c.deletes)
	}
}

func TestConvergeStuck(t *testing.T) {
	c := newCluster("o1")
	_, err := winpool.Converge(t.Context(), c, pool(1, 0, 0), members("r1", "o1"), winpool.Options{})
	if err == nil || !strings.Contains(err.Error(), "max_surge") {
		t.Errorf("error %v, want that max_surge and max_unavailable allow no step", err)
	}
}

func TestNewName(t *testing.T) {
	taken := map[string]bool{}
	for range 200 {
		n, err := winpool.NewName("pool-abcd", taken)
		if err != nil {
			t.Fatal(err)
		}
		if len(n) > 15 || taken[n] || strings.ContainsAny(n[len("pool-abcd-"):], "aeiou013") {
			t.Fatalf("name %q: longer than 15, repeated, or outside the alphabet", n)
		}
		taken[n] = true
	}
}
