package winpool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// Nodes creates and removes one node; *winnode.Manager is it.
type Nodes interface {
	// Create clones, joins and waits for a node (Ready, its agents
	// running); onVM is called the moment its VM exists.
	Create(ctx context.Context, spec winnode.Spec, onVM func(winnode.Identity)) (winnode.Result, error)
	// Delete drains (honouring PodDisruptionBudgets) and deletes the Node,
	// then destroys the VM; vmID "" leaves vSphere alone.
	Delete(ctx context.Context, nodeName, vmID string, drain kube.DrainOptions) error
	// ForgetNode deletes the Node of a member whose VM is gone, without a
	// drain (no kubelet is left to stop its pods).
	ForgetNode(ctx context.Context, nodeName string, id winnode.Identity) error
	// SetNodeSettings applies the labels and taints the pool owns.
	SetNodeSettings(ctx context.Context, nodeName string, s kube.NodeSettings) (*corev1.Node, error)
}

var _ Nodes = (*winnode.Manager)(nil)

// Options are the hooks of a Converge.
type Options struct {
	// Save is called with every member after each change (a VM created, a
	// member done, a member removed), one call at a time: the caller
	// records them, so a member is known the moment its VM exists.
	Save func([]Member)
	// Progress reports what starts and ends.
	Progress func(msg string, fields map[string]any)
	// Now is the clock of the health judgement (time.Now when nil).
	Now func() time.Time
}

// Converge makes members what the pool should be, as Plan says, the way a
// Deployment rolls its ReplicaSets: new members are created (at most
// MaxParallel at a time) while the pool has fewer than Replicas+MaxSurge
// members, and a member that goes is drained and removed only while at
// least Replicas-MaxUnavailable others stay available (Ready), so capacity
// never drops below that; unavailable members go first, at any time. A new
// member counts once winnode has it Ready with its agents running.
//
// Each step is decided from what has finished, never on a timer. The first
// failure stops new work; what is in flight finishes, and the members are
// returned as they are then (a member whose create failed stays, with no
// revision: the next Converge replaces it). An interrupted Converge resumes
// from the members it saved.
func Converge(ctx context.Context, nodes Nodes, p Pool, members []Member, opts Options) ([]Member, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	c := &converger{nodes: nodes, pool: p, opts: opts, events: make(chan event)}
	c.members = slices.Clone(members)
	plan := Plan(p, members, now())
	c.goes = map[string]string{}
	for _, g := range plan.Goes() {
		c.goes[g.Member] = g.Reason
		c.order = append(c.order, g.Member)
	}
	c.removing = map[string]bool{}
	c.creating = map[string]bool{}
	c.domains = map[string]string{}
	return c.run(ctx)
}

type converger struct {
	nodes Nodes
	pool  Pool
	opts  Options

	members []Member
	// goes: members that go, with the reason; order: in which order.
	goes     map[string]string
	order    []string
	creating map[string]bool // new members in flight (named before their VM exists)
	removing map[string]bool
	domains  map[string]string // failure domain of each new member
	errs     []error
	events   chan event
}

// event is a finished create or removal, or a new member's VM.
type event struct {
	name    string
	vm      *winnode.Identity // the VM of a create in flight
	created *winnode.Result
	removed bool
	err     error
}

func (c *converger) run(ctx context.Context) ([]Member, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		if len(c.errs) == 0 && ctx.Err() == nil {
			if err := c.start(ctx); err != nil {
				c.errs = append(c.errs, err)
			}
		}
		if len(c.creating)+len(c.removing) == 0 {
			break
		}
		c.handle(<-c.events)
	}
	if len(c.errs) == 0 && ctx.Err() != nil {
		c.errs = append(c.errs, ctx.Err())
	}
	slices.SortFunc(c.members, func(a, b Member) int { return cmp.Compare(a.Name, b.Name) })
	if len(c.errs) == 0 && !c.done() {
		return c.members, fmt.Errorf("the pool cannot converge: %d current members, %d to go, max_surge = %d and max_unavailable = %d allow no step",
			c.current(), len(c.goes), c.pool.MaxSurge, c.pool.MaxUnavailable)
	}
	return c.members, errors.Join(c.errs...)
}

// current counts the members made from the pool's revision that stay.
func (c *converger) current() int {
	n := 0
	for _, m := range c.members {
		if m.Revision == c.pool.Revision && c.goes[m.Name] == "" && !c.creating[m.Name] {
			n++
		}
	}
	return n
}

func (c *converger) done() bool { return len(c.goes) == 0 && c.current() == c.pool.Replicas }

// start begins what the surge, availability and parallelism bounds allow.
func (c *converger) start(ctx context.Context) error {
	p := c.pool
	inFlight := len(c.creating) + len(c.removing)
	total := c.current() + len(c.goes) + len(c.creating)
	create := min(p.Replicas-c.current()-len(c.creating), p.Replicas+p.MaxSurge-total, p.MaxParallel-inFlight)
	for range max(create, 0) {
		if err := c.startCreate(ctx); err != nil {
			return err
		}
		inFlight++
	}
	available := 0
	for _, m := range c.members {
		if !c.creating[m.Name] && !c.removing[m.Name] && m.Health == Ready {
			available++
		}
	}
	for _, name := range c.order {
		if inFlight >= p.MaxParallel {
			break
		}
		m := c.member(name)
		if m == nil || c.removing[name] {
			continue
		}
		if m.Health == Ready {
			if available-1 < p.Replicas-p.MaxUnavailable {
				continue
			}
			available--
		}
		c.startRemove(ctx, *m)
		inFlight++
	}
	return nil
}

func (c *converger) member(name string) *Member {
	for i := range c.members {
		if c.members[i].Name == name {
			return &c.members[i]
		}
	}
	return nil
}

func (c *converger) startCreate(ctx context.Context) error {
	taken := map[string]bool{}
	for _, m := range c.members {
		taken[m.Name] = true
	}
	for n := range c.creating {
		taken[n] = true
	}
	name, err := NewName(c.pool.Prefix, taken)
	if err != nil {
		return err
	}
	domain := c.domainForNew()
	c.creating[name] = true
	if domain != nil {
		c.domains[name] = domain.Name
	}
	spec := c.pool.spec(name, domain)
	c.progress("create member", map[string]any{"member": name})
	go func() {
		res, err := c.nodes.Create(ctx, spec, func(id winnode.Identity) {
			c.events <- event{name: name, vm: &id}
		})
		c.events <- event{name: name, created: &res, err: err}
	}()
	return nil
}

// domainForNew is the failure domain with the fewest members that stay
// (and new ones in flight), the first of those in the list on a tie; nil
// when the pool has none.
func (c *converger) domainForNew() *FailureDomain {
	if len(c.pool.Domains) == 0 {
		return nil
	}
	count := map[string]int{}
	for _, m := range c.members {
		if c.goes[m.Name] == "" && !c.creating[m.Name] {
			count[m.FailureDomain]++
		}
	}
	for _, d := range c.domains {
		count[d]++
	}
	best := &c.pool.Domains[0]
	for i := range c.pool.Domains {
		if d := &c.pool.Domains[i]; count[d.Name] < count[best.Name] {
			best = d
		}
	}
	return best
}

func (c *converger) startRemove(ctx context.Context, m Member) {
	c.removing[m.Name] = true
	c.progress("remove member", map[string]any{"member": m.Name, "reason": c.goes[m.Name]})
	go func() {
		var err error
		if m.Health == VMMissing {
			err = c.nodes.ForgetNode(ctx, m.Name, m.Identity) // only its Node is left
		} else {
			err = c.nodes.Delete(ctx, m.Name, m.VMID, c.pool.Drain)
		}
		c.events <- event{name: m.Name, removed: true, err: err}
	}()
}

// handle records a finished step and saves the members.
func (c *converger) handle(e event) {
	switch {
	case e.vm != nil:
		c.members = append(c.members, Member{
			Name: e.name, Identity: *e.vm, FailureDomain: c.domains[e.name], Created: time.Now().UTC(), Health: NotJoined,
		})
	case e.removed:
		delete(c.removing, e.name)
		if e.err != nil {
			c.errs = append(c.errs, fmt.Errorf("removing member %s (%s): %w", e.name, c.goes[e.name], e.err))
			return
		}
		delete(c.goes, e.name)
		c.members = slices.DeleteFunc(c.members, func(m Member) bool { return m.Name == e.name })
		c.progress("member removed", map[string]any{"member": e.name})
	case e.created != nil:
		delete(c.creating, e.name)
		delete(c.domains, e.name)
		m := c.member(e.name)
		if e.err != nil {
			c.errs = append(c.errs, fmt.Errorf("creating member %s: %w", e.name, e.err))
			if m != nil && e.created.Node != nil {
				m.Health = NotReady
				if kube.NodeIsReady(e.created.Node) {
					m.Health = Ready
				}
			}
			return // no revision: the next Converge replaces it
		}
		if m == nil { // Create returned without reporting its VM
			c.errs = append(c.errs, fmt.Errorf("creating member %s: no VM was reported", e.name))
			return
		}
		r := e.created
		m.Identity, m.Revision, m.Health = r.Identity, c.pool.Revision, Ready
		m.IP, m.WindowsBuildFull, m.SSHHostKey = r.IP, r.WindowsBuildFull, r.SSHHostKey
		if r.Node != nil {
			m.KubeletVersion = r.Node.Status.NodeInfo.KubeletVersion
		}
		c.progress("member ready", map[string]any{"member": e.name, "ready_to_done": r.ReadyToDone.String()})
	}
	if c.opts.Save != nil {
		c.opts.Save(slices.Clone(c.members))
	}
}

func (c *converger) progress(msg string, fields map[string]any) {
	if c.opts.Progress != nil {
		c.opts.Progress(msg, fields)
	}
}
