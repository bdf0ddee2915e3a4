package latency

import (
	"fmt"
	"strings"
	"time"
)

// Step is one stage of a critical path: an operation the model times,
// played Times times one after the other (0 counts as once), e.g. the join's
// scripts, each a guest operation.
type Step struct {
	Name  string
	Op    Op
	Times int
	// Rate and Bytes, instead of Op: a transfer (an image pull, a
	// download) of Bytes at the model's Rate.
	Rate  Rate
	Bytes int64
}

func (s Step) times() int { return max(1, s.Times) }

// The stages the provider waits on, in order, for what the benchmarks time
// against their critical path. Each names an operation of RealDurations
// that a simulator plays on that path, so the path is the model's own
// durations added up, never a figure of its own: when a simulator plays a
// new operation on one of these paths, add its step here in the same
// commit, and the benchmarks' critical path follows. A step the simulators
// do not play does not belong here (the path would be longer than the
// sandbox can be, and the ratio flatter than the truth).
var (
	// NodeCreate is one windows_node create (and one pool member's): the
	// clone (a full clone of the golden image, the provider's default; its
	// duration is for CloneFullReferenceGiB of disk, the sandbox's
	// templates'), the power-on task, then the guest's first boot as
	// vmtools plays a customization (customizeWindows: the boot to VMware
	// Tools, sysprep's generalize, its reboot, specialize, OOBE; together
	// FirstBootCustomized), then the join, Ready and the agents.
	NodeCreate = []Step{
		{Name: "clone", Op: CloneFull},
		{Name: "power-on", Op: PowerOnTask},
		{Name: "boot", Op: WindowsBoot},
		{Name: "generalize", Op: SysprepGeneralize},
		{Name: "sysprep's reboot", Op: WindowsRestart},
		{Name: "specialize", Op: SysprepSpecialize},
		{Name: "OOBE", Op: SysprepOOBE},
		// The join: the kubelet's service start, its Node registered, its
		// Ready condition posted at its next status sync (a whole
		// nodeStatusUpdateFrequency at most, counted whole: the sync's
		// phase is the kubelet's), then the network probe's first pull of
		// agnhost on the new node.
		{Name: "kubelet service start", Op: ServiceStart},
		{Name: "kubelet registration", Op: KubeletRegister},
		{Name: "Ready at the next status sync", Op: KubeletStatusUpdate},
		{Name: "the probe's agnhost pull", Rate: ImagePull, Bytes: AgnhostImageBytes},
	}
	// NodeRemove is one node's removal in a pool's roll after its
	// replacement is Ready: the drain, the guest's shutdown, the Node's
	// delete and the VM's destroy.
	NodeRemove = []Step{
		{Name: "destroy", Op: DestroyTask},
	}
	// ImageBuild is one windows_golden_image build: the build VM's clone of
	// the source template, its power-on and boot (no customization), the
	// steps with their downloads, the Containers feature's restart, the
	// updates, sysprep, the snapshot and the template.
	ImageBuild = []Step{
		{Name: "clone of the source template", Op: CloneFull},
		{Name: "power-on", Op: PowerOnTask},
		{Name: "boot", Op: WindowsBoot},
		{Name: "the Containers feature's restart", Op: WindowsRestart},
		{Name: "one cumulative update's install", Op: UpdateInstall},
		{Name: "its restart", Op: UpdateRestart},
		{Name: "snapshot", Op: SnapshotTask},
		{Name: "mark as template", Op: MarkAsTemplate},
	}
)

// AgnhostImageBytes is the compressed size of the network probe's image
// (agnhost's Windows image) that kubeletsim times a first pull by; a test
// in kubeletsim holds its copy equal.
const AgnhostImageBytes = 150e6

// StepTime is one step of a path with its duration at real scale (all its
// Times together).
type StepTime struct {
	Step
	Real time.Duration
}

// Path is a sequence of steps, timed by a model at real scale.
type Path struct {
	Steps []StepTime
	Real  time.Duration
}

// PathOf times steps with the model's durations (its quantile), at real
// scale: each step's duration times its Times, added up.
func (m *Model) PathOf(steps []Step) Path {
	var p Path
	for _, s := range steps {
		var d time.Duration
		if s.Rate != "" {
			d = m.RealMove(s.Rate, s.Bytes) * time.Duration(s.times())
		} else {
			d = m.Real(s.Op) * time.Duration(s.times())
		}
		p.Steps = append(p.Steps, StepTime{Step: s, Real: d})
		p.Real += d
	}
	return p
}

// String is the path's steps with their real durations, in order.
func (p Path) String() string {
	parts := make([]string, 0, len(p.Steps))
	for _, s := range p.Steps {
		name := s.Name
		if s.times() > 1 {
			name = fmt.Sprintf("%s ×%d", name, s.times())
		}
		parts = append(parts, fmt.Sprintf("%s %s", name, s.Real))
	}
	return strings.Join(parts, " + ") + " = " + p.Real.String()
}

// UnitsPerClone is how many of a host's provisioning units a clone takes.
func UnitsPerClone(clone Op) int {
	if clone == CloneLinked {
		return UnitsPerLinkedClone
	}
	return UnitsPerFullClone
}

// Nodes is the critical path of n nodes made at once: one node's path,
// plus the whole clone durations the last node's clone waits in the hosts'
// queues. A clone takes its units on its source's host and on its
// destination host (once when they are one: "vCenter limits for tasks
// running at the same time", VMware performance blog, 2021; vcsim's timing
// plays it so), so min(sources, hosts) × ProvisioningUnitsPerHost ÷ the
// clone's units clones run at once, where sources is how many hosts hold a
// copy of the template: one golden image on one host runs 16 ÷ 4 = 4 full
// clones at once however many hosts the cluster has. The (k+1)-th batch of
// that many starts when the k-th batch's clones end, so the last node
// waits Waves-1 clone durations before its own clone begins. Power-ons
// (PowerOnsPerHost at once) and vCenter's own task limit
// (VCenterConcurrentTasks) bind far later than the provisioning units for
// the n the benchmarks make, and add nothing here.
type Nodes struct {
	N, Hosts, Sources int
	// AtOnce is how many clones the hosts run at once; Waves is
	// ceil(N / AtOnce).
	AtOnce, Waves int
	// One is one node's path; Queue is (Waves-1) × the clone's duration.
	One   Path
	Queue time.Duration
	// Real is One.Real + Queue: the time to N nodes Ready at real scale.
	Real time.Duration
}

// NodesPath is the critical path of n nodes of create (NodeCreate unless
// another path is given) cloned from a template on sources hosts into a
// cluster of hosts hosts; the clone is the path's first step whose
// operation is a clone.
func (m *Model) NodesPath(n, hosts, sources int, create []Step) Nodes {
	if create == nil {
		create = NodeCreate
	}
	c := Nodes{N: n, Hosts: hosts, Sources: sources, One: m.PathOf(create), Waves: 1}
	for _, s := range create {
		if s.Op == CloneFull || s.Op == CloneLinked {
			c.AtOnce = min(hosts, sources) * ProvisioningUnitsPerHost / UnitsPerClone(s.Op)
			if c.AtOnce > 0 && n > 0 {
				c.Waves = (n + c.AtOnce - 1) / c.AtOnce
			}
			c.Queue = time.Duration(c.Waves-1) * m.Real(s.Op)
			break
		}
	}
	c.Real = c.One.Real + c.Queue
	return c
}

// String is the figure with how it was reached.
func (c Nodes) String() string {
	if c.AtOnce == 0 {
		return fmt.Sprintf("%d node(s): %s (no clone on the path)", c.N, c.One)
	}
	return fmt.Sprintf("%d node(s) on %d hosts from a template on %d (%d clones at once, %d wave(s)): one node %s, plus %s queued = %s",
		c.N, c.Hosts, c.Sources, c.AtOnce, c.Waves, c.One.Real, c.Queue, c.Real)
}

// Roll is the critical path of a pool's roll of replicas members with
// max_surge surge and max_unavailable 0 (create and remove are NodeCreate
// and NodeRemove unless given): surge new members at a time, each created,
// then one old member removed before the next new one may start
// (winpool's converger: replicas + max_surge members at most, and no Ready
// member removed while that would leave fewer than replicas), so each of
// the surge lanes runs ceil(replicas/surge) creates and removals in
// sequence. surge is at most the hosts' clones at once here, so no clone
// queues. It returns one create and removal, and the roll's path.
func (m *Model) Roll(replicas, surge int, create, remove []Step) (Path, time.Duration) {
	if create == nil {
		create = NodeCreate
	}
	if remove == nil {
		remove = NodeRemove
	}
	one := m.PathOf(append(append([]Step{}, create...), remove...))
	if surge <= 0 {
		return one, 0
	}
	lanes := (replicas + surge - 1) / surge
	return one, time.Duration(lanes) * one.Real
}

// RealMove is how long bytes take at rate r at real scale, for the model's
// quantile (the tail plays the slow throughput): what a path adds up.
func (m *Model) RealMove(r Rate, bytes int64) time.Duration {
	t, ok := RealRates[r]
	if !ok {
		panic(fmt.Sprintf("latency: no throughput for %q: add it to durations_guest.go with its source", r))
	}
	bps := t.P50
	if m != nil && m.Quantile == Tail {
		bps = t.P99
	}
	return time.Duration(float64(bytes) / bps * float64(time.Second))
}
