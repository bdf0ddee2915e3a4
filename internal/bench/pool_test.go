package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
)

// base is an applied baseConfig: the golden images' template paths and the
// networking's id, for the configurations of nodes and pools to name.
type base struct {
	dir          string
	templates    []string
	networkingID string
	apply        tfRun
}

// applyBase applies a baseConfig of the given images in its own working
// directory and destroys it when the benchmark ends (after whatever was
// made from it: cleanups run last-registered first).
func (w *world) applyBase(b *testing.B, name string, images ...string) base {
	b.Helper()
	bs := base{dir: w.workdir(b, name, w.baseConfig(images...))}
	b.Cleanup(func() {
		run, err := w.terraform(context.Background(), bs.dir, "destroy", nil, "destroy", "-auto-approve", "-input=false", "-no-color", "-json")
		if err != nil {
			b.Error(err)
			return
		}
		report(b, "destroy of the image(s) and the networking: %s", run.Wall.Round(time.Millisecond))
	})
	var err error
	if bs.apply, err = w.terraform(b.Context(), bs.dir, "apply", nil, "apply", "-auto-approve", "-input=false", "-no-color", "-json"); err != nil {
		b.Fatal(err)
	}
	out, err := w.outputs(b.Context(), bs.dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range images {
		bs.templates = append(bs.templates, out[fmt.Sprintf("template_%d", i)])
	}
	bs.networkingID = out["networking_id"]
	return bs
}

// sandboxFailed tells a create the sandbox failed from one the provider
// did: the simulated service control manager gives a kubelet 2 s (Windows
// gives 30) to report Running, and the simulated kubelet first runs the real
// kubelet's flag checks as a process, which on a loaded 2-core machine can
// take longer when several nodes join at once.
func sandboxFailed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Cannot start service kubelet")
}

// discardAttempt takes a timed attempt the sandbox failed out of the op's
// time: the timer is reset in the first iteration (with -benchtime 1x, the
// package's default, there is no other); in a later one it cannot be, and
// the report says so.
func discardAttempt(b *testing.B, i int, what string) {
	b.Helper()
	if i == 0 {
		b.ResetTimer()
		report(b, "%s failed in the sandbox (a simulated kubelet missed its 2 s service start); destroyed, made again, its time not counted", what)
		return
	}
	report(b, "%s failed in the sandbox (a simulated kubelet missed its 2 s service start); destroyed, made again; iteration %d's time includes the failed attempt", what, i)
}

// applyPoolSetup applies dir's pool "p" as a benchmark's untimed setup.
// When the sandbox fails a member (sandboxFailed), the pool is tainted with
// its members in the state; an untaint and another apply replace only the
// members whose create did not finish, as the resource's self-healing does
// for users.
func (w *world) applyPoolSetup(b *testing.B, dir string) tfRun {
	b.Helper()
	var total time.Duration
	for attempt := 1; ; attempt++ {
		run, err := w.terraform(b.Context(), dir, fmt.Sprintf("apply-setup%d", attempt), nil, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
		total += run.Wall
		if err == nil {
			run.Wall = total
			return run
		}
		if attempt == 3 || !sandboxFailed(err) {
			b.Fatal(err)
		}
		first, _, _ := strings.Cut(strings.TrimSpace(diagnostics(run.Output)), "\n")
		report(b, "setup apply %d failed (%s); untaint and apply again", attempt, first)
		if _, err := w.terraform(b.Context(), dir, "untaint", nil, "untaint", "-no-color", "windows_node_pool.p"); err != nil {
			b.Fatal(err)
		}
	}
}

// outputs reads the string outputs of dir's state.
func (w *world) outputs(ctx context.Context, dir string) (map[string]string, error) {
	run, err := w.terraform(ctx, dir, "output", nil, "output", "-json", "-no-color")
	if err != nil {
		return nil, err
	}
	var raw map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal(run.Output, &raw); err != nil {
		return nil, fmt.Errorf("terraform output -json: %w", err)
	}
	out := map[string]string{}
	for k, v := range raw {
		out[k] = fmt.Sprint(v.Value)
	}
	return out, nil
}

// apply runs `terraform apply` in dir and counts what it cost at the
// servers: vSphere SOAP requests by method, the provider's Kubernetes
// requests.
func (w *world) countedApply(b *testing.B, dir, name string, args ...string) (tfRun, map[string]int64, kubeCount, error) {
	b.Helper()
	vc, kc := w.sb.VSphere.Calls(), mustCount(b, w)
	run, err := w.terraform(b.Context(), dir, name, nil, append([]string{"apply", "-auto-approve", "-input=false", "-no-color", "-json"}, args...)...)
	calls, _ := diffCalls(vc, w.sb.VSphere.Calls())
	return run, calls, mustCount(b, w).sub(kc), err
}

// poolMemberLog is one member's course through an apply, from the pool's
// progress lines ("windows node pool: create member", "member ready",
// "remove member", "member removed") and the node stages that name it.
type poolMemberLog struct {
	Name                    string
	CreateStart, Ready      time.Time
	ReadyToDone             time.Duration
	RemoveStart, RemovedEnd time.Time
	// AgentsStart is the create's "wait for node agents" (its last stage).
	AgentsStart time.Time
}

// poolRun is what the provider logged of a pool's apply.
type poolRun struct {
	Members map[string]*poolMemberLog
	// MaxMembers is the most members that existed at once (the members
	// before, plus creates begun, minus removals finished); MaxCreating the
	// most creates in flight at once.
	MaxMembers, MaxCreating int
}

// poolLog reads the pool's progress lines of a provider log, by member;
// before is how many members the pool had when the apply began.
func poolLog(entries []logEntry, before int) poolRun {
	r := poolRun{Members: map[string]*poolMemberLog{}, MaxMembers: before}
	n, creating := before, 0
	get := func(name string) *poolMemberLog {
		m := r.Members[name]
		if m == nil {
			m = &poolMemberLog{Name: name}
			r.Members[name] = m
		}
		return m
	}
	for _, e := range entries {
		if e.Message == "windows node: wait for node agents" && e.Fields["node"] != "" {
			get(e.Fields["node"]).AgentsStart = e.Time
			continue
		}
		msg, ok := strings.CutPrefix(e.Message, "windows node pool: ")
		name := e.Fields["member"]
		if !ok || name == "" {
			continue
		}
		m := get(name)
		switch msg {
		case "create member":
			m.CreateStart = e.Time
			n++
			creating++
			r.MaxMembers, r.MaxCreating = max(r.MaxMembers, n), max(r.MaxCreating, creating)
		case "member ready":
			m.Ready = e.Time
			m.ReadyToDone, _ = time.ParseDuration(e.Fields["ready_to_done"])
			creating--
		case "remove member":
			m.RemoveStart = e.Time
		case "member removed":
			m.RemovedEnd = e.Time
			n--
		}
	}
	return r
}

// agentWaits are the members' waits for their node agents (the create's
// last stage, to "member ready").
func agentWaits(members map[string]*poolMemberLog) []time.Duration {
	var out []time.Duration
	for _, m := range members {
		if !m.AgentsStart.IsZero() && !m.Ready.IsZero() {
			out = append(out, m.Ready.Sub(m.AgentsStart))
		}
	}
	return out
}

// memberCreates are the create times (create member to member ready) and
// the provider's Ready-to-return times of the members created.
func memberCreates(members map[string]*poolMemberLog) (creates, readyToDone []time.Duration) {
	for _, m := range members {
		if !m.CreateStart.IsZero() && !m.Ready.IsZero() {
			creates = append(creates, m.Ready.Sub(m.CreateStart))
			readyToDone = append(readyToDone, m.ReadyToDone)
		}
	}
	return creates, readyToDone
}

// rssSampler samples the peak resident set (VmHWM of /proc/<pid>/status) of
// every provider process Terraform starts from this run's plugins while it
// runs: the kernel's own high-water mark of each process, read every
// interval until the process exits, so only growth in a process's last
// interval could be missed.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak map[int]int64 // pid -> VmHWM in KiB
}

func (w *world) sampleProviderRSS(interval time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{}), peak: map[int]int64{}}
	root := w.dir
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.scan(root)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// scan reads VmHWM of each running provider binary of this run: a process
// whose executable is a terraform-provider-windows under root.
func (s *rssSampler) scan(root string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !strings.HasPrefix(string(comm), "terraform-provi") { // comm is cut at 15 bytes
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, root) || !strings.Contains(filepath.Base(exe), "terraform-provider-windows") {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		if kib, ok := statusField(status, "VmHWM:"); ok {
			s.mu.Lock()
			s.peak[pid] = max(s.peak[pid], kib)
			s.mu.Unlock()
		}
	}
}

// statusField reads a "Name:   1234 kB" line of /proc/<pid>/status, in KiB.
func statusField(status []byte, name string) (int64, bool) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(name))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// finish stops sampling and returns the peak of each provider process seen,
// largest first, in MiB.
func (s *rssSampler) finish() []float64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []float64
	for _, kib := range s.peak {
		out = append(out, float64(kib)/1024)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	return out
}

// capacityWatch follows, by a watch of the Nodes labelled with a pool's
// prefix, how many are Ready and schedulable (capacity) and how many exist,
// after every change the watch delivers (in order, from the events' own
// objects, not the informer's store, which may be ahead of them): the
// lowest capacity and the most Nodes seen.
type capacityWatch struct {
	stop chan struct{}
	mu   sync.Mutex
	// capacity: whether each Node is Ready and schedulable.
	capacity map[string]bool
	// readyNow/nodesNow: as of the last event; minReady/maxNodes over the
	// watch; events: how many changes were seen.
	readyNow, nodesNow, minReady, maxNodes, events int
	// dips: when capacity went below want, and to what.
	want int
	dips []string
}

func watchCapacity(cs kubernetes.Interface, prefix string, want int) (*capacityWatch, error) {
	c := &capacityWatch{stop: make(chan struct{}), capacity: map[string]bool{}, minReady: 1 << 30, want: want}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = winpool.LabelPool + "=" + prefix
	}))
	inf := f.Core().V1().Nodes().Informer()
	note := func(obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if deleted {
			delete(c.capacity, n.Name)
		} else {
			c.capacity[n.Name] = kube.NodeIsReady(n) && !n.Spec.Unschedulable
		}
		ready := 0
		for _, ok := range c.capacity {
			if ok {
				ready++
			}
		}
		c.events++
		c.readyNow, c.nodesNow = ready, len(c.capacity)
		c.minReady, c.maxNodes = min(c.minReady, ready), max(c.maxNodes, len(c.capacity))
		if ready < c.want && len(c.dips) < 20 {
			c.dips = append(c.dips, fmt.Sprintf("%s: %d Ready and schedulable of %d (%s changed)", time.Now().Format("15:04:05.000"), ready, len(c.capacity), n.Name))
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { note(obj, false) },
		UpdateFunc: func(_, obj any) { note(obj, false) },
		DeleteFunc: func(obj any) { note(obj, true) },
	}); err != nil {
		return nil, err
	}
	f.Start(c.stop)
	f.WaitForCacheSync(c.stop)
	return c, nil
}

// reset starts the minimum and maximum over from the current counts.
func (c *capacityWatch) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.minReady, c.maxNodes, c.events, c.dips = c.readyNow, c.nodesNow, 0, nil
}

func (c *capacityWatch) snapshot() (readyNow, nodesNow, minReady, maxNodes, events int, dips []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readyNow, c.nodesNow, c.minReady, c.maxNodes, c.events, append([]string(nil), c.dips...)
}

func (c *capacityWatch) close() { close(c.stop) }
