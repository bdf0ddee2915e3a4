package vcsim

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"golang.org/x/sync/semaphore"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// vCenter's time, played when Options.Latency is on (nil: every task ends
// at once, as vcsim's do). Per server, never through vcsim's package-global
// simulator.TaskDelay, so two sandboxes in one test binary keep their own.
//
// A timed task (CloneVM_Task, PowerOnVM_Task, PowerOffVM_Task,
// Destroy_Task, ReconfigVM_Task, CreateSnapshot_Task of a VM) is answered
// at once with a Task of the sandbox's own, in info.state "queued", as
// vCenter answers: then
//
//   - it waits, still queued, for one of vCenter's concurrent operations
//     (latency.VCenterConcurrentTasks, ~640) and for its host's capacity: a
//     clone takes latency.UnitsPerFullClone (4) or UnitsPerLinkedClone (1)
//     of the 16 provisioning units of its source's host and of its
//     destination host (once when they are one host), a power-on one of
//     the host's latency.PowerOnsPerHost (60); first come, first served
//     (latency.Slots). "Any new migration or provisioning operation that
//     causes a resource to exceed its maximum cost does not proceed
//     immediately, but is queued" (vSphere, "Limits on Simultaneous
//     Migrations"; VMware performance blog, "vCenter limits for tasks
//     running at the same time", 2021);
//   - it turns "running" (info.startTime) and takes its duration from the
//     model (latency.RealDurations over the factor; a full clone per GiB of
//     its source's disks), reporting info.progress in tenths when it is
//     played for a second or more;
//   - then vcsim does the work (the VM's own method, the clone appearing
//     only now), and the task ends "success" with its result, or "error"
//     with its fault.
//
// What differs from vCenter, knowingly: a fault vcsim answers a call with at
// once (a clone into a folder that is none) reaches the client as the
// task's error after the task's time; and the events vcsim posts with the
// work (VmBeingClonedEvent) are posted at the end, not the start. A
// power-on of a template is refused at once, as vCenter refuses it.
//
// Every call also takes its round trip's time (callLatency) before vcsim
// reads it. Waiting is on timers and semaphores, ended by Close.
type timing struct {
	model    *latency.Model
	units    *latency.Slots      // provisioning units by host
	powerOns *latency.Slots      // concurrent power-ons by host
	tasks    *semaphore.Weighted // vCenter's concurrent operations
	done     *taskDone

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	queued atomic.Int64 // tasks that waited for a slot
}

func newTiming(model *latency.Model, reg *simulator.Registry) *timing {
	if !model.On() {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &timing{
		model:    model,
		units:    latency.NewSlots(latency.ProvisioningUnitsPerHost),
		powerOns: latency.NewSlots(latency.PowerOnsPerHost),
		tasks:    semaphore.NewWeighted(latency.VCenterConcurrentTasks),
		done:     newTaskDone(),
		ctx:      ctx,
		cancel:   cancel,
	}
	reg.AddHandler(t.done)
	return t
}

// stop ends every wait: the requests held for their round trip (so the
// HTTP server's Close does not wait for them) and the tasks still queued or
// running (they stay as they were: the server is going away).
func (t *timing) stop() {
	if t != nil {
		t.cancel()
	}
}

// close stops and waits for the tasks' goroutines.
func (t *timing) close(reg *simulator.Registry) {
	if t == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
	reg.RemoveHandler(t.done)
}

// QueuedTasks counts the tasks that had to wait, in info.state "queued",
// for a host's provisioning units or power-on slots or for one of vCenter's
// concurrent operations, since Start; 0 without Options.Latency.
func (s *Server) QueuedTasks() int64 {
	if s.timing == nil {
		return 0
	}
	return s.timing.queued.Load()
}

// callOps are the method latencies the model plays, by SOAP method;
// every other method takes latency.CallOther.
var callOps = map[string]latency.Op{
	"Login":                        latency.CallLogin,
	"RetrievePropertiesEx":         latency.CallRetrieve,
	"ContinueRetrievePropertiesEx": latency.CallRetrieve,
	"RetrieveProperties":           latency.CallRetrieve,
	"WaitForUpdatesEx":             latency.CallWaitForUpdates,
	"WaitForUpdates":               latency.CallWaitForUpdates,
	"MarkAsTemplate":               latency.MarkAsTemplate,
}

// callLatency holds a request for its method's round trip (a RequestHook),
// or until the client gives up or the server closes.
func (t *timing) callLatency(ctx context.Context, method string) {
	op, ok := callOps[method]
	if !ok {
		op = latency.CallOther
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	_ = t.model.Wait(ctx, op)
}

// timedMethods are the VM tasks the model times: their Go method on
// simulator.VirtualMachine and their descriptionId's suffix.
var timedMethods = map[string]struct{ goName, id string }{
	"CloneVM_Task":        {"CloneVMTask", "clone"},
	"PowerOnVM_Task":      {"PowerOnVMTask", "powerOn"},
	"PowerOffVM_Task":     {"PowerOffVMTask", "powerOff"},
	"Destroy_Task":        {"DestroyTask", "destroy"},
	"ReconfigVM_Task":     {"ReconfigVMTask", "reconfigure"},
	"CreateSnapshot_Task": {"CreateSnapshotTask", "createSnapshot"},
}

// handler returns the handler that answers m with a timed task, or nil to
// let vcsim answer it as it does.
func (t *timing) handler(ctx *simulator.Context, m *simulator.Method) mo.Reference {
	if t == nil || m.This.Type != "VirtualMachine" || ctx.Session == nil || ctx.Session.UserAgent == "" {
		// The sandbox's in-process client (a guest's own shutdown) has
		// no user agent: the guest's time is the Windows model's.
		return nil
	}
	if _, ok := timedMethods[m.Name]; !ok {
		return nil
	}
	vm, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine)
	if !ok {
		return nil // vcsim answers ManagedObjectNotFound
	}
	if m.Name == "PowerOnVM_Task" {
		template := false
		ctx.WithLock(vm, func() { template = vm.Config != nil && vm.Config.Template })
		if template {
			return nil // refused at once, by vcsim as by vCenter
		}
	}
	this := m.This
	// Dispatched to timedTask: the registry's object would win over a
	// handler returned for its own reference.
	m.This = types.ManagedObjectReference{Type: "VirtualMachine", Value: "sandbox-timed-" + this.Value}
	return &timedTask{self: m.This, vm: this, t: t}
}

// timedTask answers one timed call in place of the VM.
type timedTask struct {
	self, vm types.ManagedObjectReference
	t        *timing
}

func (tt *timedTask) Reference() types.ManagedObjectReference { return tt.self }

func (tt *timedTask) CloneVMTask(ctx *simulator.Context, req *types.CloneVM_Task) soap.HasFault {
	return &methods.CloneVM_TaskBody{Res: &types.CloneVM_TaskResponse{Returnval: tt.start(ctx, "CloneVM_Task", req)}}
}

func (tt *timedTask) PowerOnVMTask(ctx *simulator.Context, req *types.PowerOnVM_Task) soap.HasFault {
	return &methods.PowerOnVM_TaskBody{Res: &types.PowerOnVM_TaskResponse{Returnval: tt.start(ctx, "PowerOnVM_Task", req)}}
}

func (tt *timedTask) PowerOffVMTask(ctx *simulator.Context, req *types.PowerOffVM_Task) soap.HasFault {
	return &methods.PowerOffVM_TaskBody{Res: &types.PowerOffVM_TaskResponse{Returnval: tt.start(ctx, "PowerOffVM_Task", req)}}
}

func (tt *timedTask) DestroyTask(ctx *simulator.Context, req *types.Destroy_Task) soap.HasFault {
	return &methods.Destroy_TaskBody{Res: &types.Destroy_TaskResponse{Returnval: tt.start(ctx, "Destroy_Task", req)}}
}

func (tt *timedTask) ReconfigVMTask(ctx *simulator.Context, req *types.ReconfigVM_Task) soap.HasFault {
	return &methods.ReconfigVM_TaskBody{Res: &types.ReconfigVM_TaskResponse{Returnval: tt.start(ctx, "ReconfigVM_Task", req)}}
}

func (tt *timedTask) CreateSnapshotTask(ctx *simulator.Context, req *types.CreateSnapshot_Task) soap.HasFault {
	return &methods.CreateSnapshot_TaskBody{Res: &types.CreateSnapshot_TaskResponse{Returnval: tt.start(ctx, "CreateSnapshot_Task", req)}}
}

// claim is what a task needs before it runs: units on hosts, of one kind.
type claim struct {
	slots *latency.Slots
	hosts []string
	units int
}

// start creates the task, queued, and plays it on a goroutine of its own.
func (tt *timedTask) start(ctx *simulator.Context, method string, req any) types.ManagedObjectReference {
	t := tt.t
	vm := ctx.Map.Get(tt.vm).(*simulator.VirtualMachine)
	var (
		name     string
		played   time.Duration
		claimFor claim
	)
	ctx.WithLock(vm, func() {
		name = vm.Name
		played, claimFor = t.plan(ctx, vm, method, req)
	})
	task := simulator.CreateTask(vm, timedMethods[method].id, nil)
	task.Info.Name = method
	task.Info.EntityName = name
	ctx.Map.Put(task)
	ctx.WithLock(task, func() {
		task.Info.Key = task.Self.Value
		task.Info.Task = task.Self
	})
	// The task outlives the request: it runs on a context of its own (a
	// lock owner of its own too), ended by Close.
	bg := ctx.For(vim25.Path)
	bg.Context = t.ctx
	bg.Caller = &tt.vm
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.run(bg, task, tt.vm, method, req, played, claimFor)
	}()
	return task.Self
}

// plan is a task's duration as played and the capacity it needs (vm's
// lock held).
func (t *timing) plan(ctx *simulator.Context, vm *simulator.VirtualMachine, method string, req any) (time.Duration, claim) {
	host := ""
	if vm.Runtime.Host != nil {
		host = vm.Runtime.Host.Value
	}
	switch method {
	case "CloneVM_Task":
		r := req.(*types.CloneVM_Task)
		// vcsim places a clone on its source's host unless the spec names
		// one (simulator.VirtualMachine.CloneVMTask): the destination.
		dest := host
		if h := r.Spec.Location.Host; h != nil {
			dest = h.Value
		}
		hosts := []string{host}
		if dest != host {
			hosts = append(hosts, dest)
		}
		switch types.VirtualMachineRelocateDiskMoveOptions(r.Spec.Location.DiskMoveType) {
		case types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking,
			types.VirtualMachineRelocateDiskMoveOptionsMoveChildMostDiskBacking:
			return t.model.Of(latency.CloneLinked), claim{slots: t.units, hosts: hosts, units: latency.UnitsPerLinkedClone}
		}
		full := t.model.Of(latency.CloneFull)
		gib := float64(diskBytes(vm)) / (1 << 30)
		return time.Duration(float64(full) * gib / latency.CloneFullReferenceGiB), claim{slots: t.units, hosts: hosts, units: latency.UnitsPerFullClone}
	case "PowerOnVM_Task":
		return t.model.Of(latency.PowerOnTask), claim{slots: t.powerOns, hosts: []string{host}, units: 1}
	case "PowerOffVM_Task":
		return t.model.Of(latency.PowerOffTask), claim{}
	case "Destroy_Task":
		return t.model.Of(latency.DestroyTask), claim{}
	case "ReconfigVM_Task":
		return t.model.Of(latency.ReconfigTask), claim{}
	case "CreateSnapshot_Task":
		return t.model.Of(latency.SnapshotTask), claim{}
	}
	panic("vcsim: no timing for " + method)
}

// diskBytes is the capacity of vm's disks: what a full clone copies.
func diskBytes(vm *simulator.VirtualMachine) int64 {
	if vm.Config == nil {
		return 0
	}
	var n int64
	for _, d := range vm.Config.Hardware.Device {
		if disk, ok := d.(*types.VirtualDisk); ok {
			if disk.CapacityInBytes > 0 {
				n += disk.CapacityInBytes
			} else {
				n += disk.CapacityInKB * 1024
			}
		}
	}
	return n
}

// run plays a task: queued until it has its capacity, running for its
// duration, then vcsim's own method, whose outcome becomes the task's.
func (t *timing) run(ctx *simulator.Context, task *simulator.Task, vm types.ManagedObjectReference, method string, req any, played time.Duration, c claim) {
	release, err := t.acquire(ctx, c)
	if err != nil {
		return // the server closed
	}
	defer release()
	if t.ended(ctx, task) {
		return // cancelled (CancelTask) while queued
	}
	ctx.Map.AtomicUpdate(ctx, task, []types.PropertyChange{
		{Name: "info.startTime", Val: time.Now()},
		{Name: "info.state", Val: types.TaskInfoStateRunning},
		{Name: "info.progress", Val: int32(0)},
	})
	if err := t.play(ctx, task, played); err != nil {
		return
	}
	if t.ended(ctx, task) {
		return
	}
	result, fault := t.work(ctx, vm, method, req)
	changes := []types.PropertyChange{
		{Name: "info.completeTime", Val: time.Now()},
		{Name: "info.progress", Val: int32(100)},
	}
	if fault != nil {
		changes = append(changes,
			types.PropertyChange{Name: "info.state", Val: types.TaskInfoStateError},
			types.PropertyChange{Name: "info.error", Val: fault})
	} else {
		changes = append(changes,
			types.PropertyChange{Name: "info.state", Val: types.TaskInfoStateSuccess},
			types.PropertyChange{Name: "info.result", Val: result})
	}
	ctx.Map.AtomicUpdate(ctx, task, changes)
}

// acquire waits for one of vCenter's operations and for c's units on each
// of its hosts, in the hosts' order (so two clones between the same two
// hosts never hold one each). The task stays queued meanwhile.
func (t *timing) acquire(ctx *simulator.Context, c claim) (release func(), err error) {
	var releases []func()
	release = func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	waited := false
	if !t.tasks.TryAcquire(1) {
		waited = true
		if err := t.tasks.Acquire(ctx, 1); err != nil {
			return nil, err
		}
	}
	releases = append(releases, func() { t.tasks.Release(1) })
	hosts := append([]string(nil), c.hosts...)
	sort.Strings(hosts)
	for _, h := range hosts {
		if h == "" {
			continue
		}
		r, queued, err := c.slots.Acquire(ctx, h, c.units)
		if err != nil {
			release()
			return nil, err
		}
		waited = waited || queued
		releases = append(releases, r)
	}
	if waited {
		t.queued.Add(1)
	}
	return release, nil
}

// ended reports whether task has ended already (a client cancelled it).
func (t *timing) ended(ctx *simulator.Context, task *simulator.Task) bool {
	var state types.TaskInfoState
	ctx.WithLock(task, func() { state = task.Info.State })
	return state == types.TaskInfoStateSuccess || state == types.TaskInfoStateError
}

// play takes d, reporting progress in tenths when d is a second or more.
func (t *timing) play(ctx *simulator.Context, task *simulator.Task, d time.Duration) error {
	if d < time.Second {
		return t.model.Sleep(ctx, d)
	}
	step := d / 10
	for i := 1; i <= 9; i++ {
		if err := t.model.Sleep(ctx, step); err != nil {
			return err
		}
		ctx.Map.AtomicUpdate(ctx, task, []types.PropertyChange{{Name: "info.progress", Val: int32(i * 10)}})
	}
	return t.model.Sleep(ctx, d-9*step)
}

// work runs vcsim's own method on the VM and waits for its task: its
// result, or its fault.
func (t *timing) work(ctx *simulator.Context, vm types.ManagedObjectReference, method string, req any) (types.AnyType, *types.LocalizedMethodFault) {
	obj := ctx.Map.Get(vm)
	if obj == nil {
		return nil, &types.LocalizedMethodFault{Fault: &types.ManagedObjectNotFound{Obj: vm}, LocalizedMessage: "The object has already been deleted or has not been completely created"}
	}
	fn := reflect.ValueOf(obj).MethodByName(timedMethods[method].goName)
	var res []reflect.Value
	ctx.WithLock(obj, func() {
		res = fn.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})
	})
	body := res[0].Interface().(soap.HasFault)
	if f := body.Fault(); f != nil {
		mf, _ := f.VimFault().(types.BaseMethodFault)
		if mf == nil {
			mf = &types.SystemError{Reason: f.String}
		}
		return nil, &types.LocalizedMethodFault{Fault: mf, LocalizedMessage: f.String}
	}
	ref := reflect.ValueOf(body).Elem().FieldByName("Res").Elem().FieldByName("Returnval").Interface().(types.ManagedObjectReference)
	inner, ok := ctx.Map.Get(ref).(*simulator.Task)
	if !ok {
		return nil, &types.LocalizedMethodFault{Fault: &types.SystemError{Reason: "no task"}, LocalizedMessage: fmt.Sprintf("vcsim: %s answered no task", method)}
	}
	if err := t.done.wait(ctx, inner); err != nil {
		return nil, &types.LocalizedMethodFault{Fault: &types.RequestCanceled{}, LocalizedMessage: "the server closed"}
	}
	var (
		result types.AnyType
		fault  *types.LocalizedMethodFault
	)
	ctx.For(vim25.Path).WithLock(inner, func() {
		result = inner.Info.Result
		if e := inner.Info.Error; e != nil {
			fault = e
		}
	})
	return result, fault
}

// taskDone tells the waiters of vcsim's tasks when one ends: a registry
// handler (vcsim calls it with every change, under the changed object's
// lock), so nothing polls.
type taskDone struct {
	self    types.ManagedObjectReference
	mu      sync.Mutex
	waiters map[types.ManagedObjectReference]chan struct{}
}

func newTaskDone() *taskDone {
	return &taskDone{
		self:    types.ManagedObjectReference{Type: "SandboxTaskDone", Value: fmt.Sprintf("sandbox-task-done-%p", new(byte))},
		waiters: map[types.ManagedObjectReference]chan struct{}{},
	}
}

func (d *taskDone) Reference() types.ManagedObjectReference                       { return d.self }
func (d *taskDone) PutObject(*simulator.Context, mo.Reference)                    {}
func (d *taskDone) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}

func (d *taskDone) UpdateObject(_ *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	ref := obj.Reference()
	if ref.Type != "Task" {
		return
	}
	for _, c := range changes {
		if c.Name != "info.state" {
			continue
		}
		if s, _ := c.Val.(types.TaskInfoState); s == types.TaskInfoStateSuccess || s == types.TaskInfoStateError {
			d.mu.Lock()
			if ch, ok := d.waiters[ref]; ok {
				close(ch)
				delete(d.waiters, ref)
			}
			d.mu.Unlock()
		}
	}
}

// wait returns when task has ended, or with ctx's error. The check of its
// state runs under the task's lock after the waiter is registered, and
// vcsim changes the state under that lock: no end is missed.
func (d *taskDone) wait(ctx *simulator.Context, task *simulator.Task) error {
	ch := make(chan struct{})
	d.mu.Lock()
	d.waiters[task.Self] = ch
	d.mu.Unlock()
	ended := false
	// A lock owner of its own: vcsim's task ends under the lock of the
	// context it ran with, which is ctx.
	ctx.For(vim25.Path).WithLock(task, func() {
		ended = task.Info.State == types.TaskInfoStateSuccess || task.Info.State == types.TaskInfoStateError
	})
	if ended {
		d.mu.Lock()
		delete(d.waiters, task.Self)
		d.mu.Unlock()
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		delete(d.waiters, task.Self)
		d.mu.Unlock()
		return ctx.Err()
	}
}
