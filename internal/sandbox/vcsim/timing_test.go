package vcsim

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// startTimed starts a server playing model, and logs in to it.
func startTimed(t *testing.T, model *latency.Model) (*Server, *vim25.Client) {
	t.Helper()
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Options{
		Certificate: cert, RootCAs: ca.Pool(), Latency: model,
		User: "administrator@vsphere.local", Password: "S3cret-pw!x", Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, err := connect(t.Context(), t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// cloneTemplate starts a full clone of the 2022 base template.
func cloneTemplate(ctx context.Context, t *testing.T, s *Server, c *vim25.Client, name string) *object.Task {
	t.Helper()
	finder := find.NewFinder(c, true)
	tmpl, err := finder.VirtualMachine(ctx, s.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := finder.Folder(ctx, s.Folder)
	if err != nil {
		t.Fatal(err)
	}
	pool := types.ManagedObjectReference{Type: "ResourcePool", Value: s.ResourcePoolID}
	task, err := tmpl.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &pool}})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// A host runs 4 full clones of a template at once (16 units, 4 each, on the
// template's host); a fifth and a sixth are queued, as vCenter shows them,
// then run, and none fails.
func TestClonesBeyondAHostsUnitsAreQueuedNotFailed(t *testing.T) {
	model := latency.New(50, latency.Median) // a 60 GiB full clone: 120 s / 50, time for all six to reach vCenter while the first run
	s, c := startTimed(t, model)
	ctx := t.Context()
	clone := model.Of(latency.CloneFull)
	const n = 6
	perHost := latency.ProvisioningUnitsPerHost / latency.UnitsPerFullClone
	start := time.Now()
	tasks := make([]*object.Task, n)
	refs := make([]types.ManagedObjectReference, n)
	for i := range tasks {
		tasks[i] = cloneTemplate(ctx, t, s, c, fmt.Sprintf("queued-%d", i))
		refs[i] = tasks[i].Reference()
	}
	// At once, while the first ones run: the others are queued.
	var now []mo.Task
	if err := property.DefaultCollector(c).Retrieve(ctx, refs, []string{"info"}, &now); err != nil {
		t.Fatal(err)
	}
	states := map[types.TaskInfoState]int{}
	for _, tk := range now {
		states[tk.Info.State]++
	}
	if time.Since(start) < clone/2 && states[types.TaskInfoStateQueued] != n-perHost {
		t.Errorf("right after %d clones of one template: states %v, want %d queued (a host runs %d)", n, states, n-perHost, perHost)
	}
	for i, tk := range tasks {
		if _, err := tk.WaitForResult(ctx); err != nil {
			t.Fatalf("clone %d failed: %v; a queued task must run once its host has units", i, err)
		}
	}
	elapsed := time.Since(start)
	if elapsed < 2*clone {
		t.Errorf("%d full clones on one host took %s, want at least two rounds of %s", n, elapsed, clone)
	}
	var done []mo.Task
	if err := property.DefaultCollector(c).Retrieve(ctx, refs, []string{"info"}, &done); err != nil {
		t.Fatal(err)
	}
	// The queued ones started only when an earlier clone ended and gave
	// its units back: after the first end.
	first := *done[0].Info.CompleteTime
	for _, tk := range done {
		if tk.Info.CompleteTime != nil && tk.Info.CompleteTime.Before(first) {
			first = *tk.Info.CompleteTime
		}
	}
	waited := 0
	for _, tk := range done {
		if tk.Info.State != types.TaskInfoStateSuccess || tk.Info.StartTime == nil || tk.Info.CompleteTime == nil {
			t.Fatalf("task %s: state %s, start %v, end %v", tk.Info.Key, tk.Info.State, tk.Info.StartTime, tk.Info.CompleteTime)
		}
		if ran := tk.Info.CompleteTime.Sub(*tk.Info.StartTime); ran < clone {
			t.Errorf("task %s ran %s, want the clone's %s", tk.Info.Key, ran, clone)
		}
		if !tk.Info.StartTime.Before(first) {
			waited++
		}
		if tk.Info.Name != "CloneVM_Task" || tk.Info.EntityName != "win2022-base" {
			t.Errorf("task %s: name %q on %q, want CloneVM_Task on win2022-base", tk.Info.Key, tk.Info.Name, tk.Info.EntityName)
		}
	}
	if waited != n-perHost || s.QueuedTasks() != int64(n-perHost) {
		t.Errorf("%d tasks started after the first clone ended (server counted %d queued), want %d", waited, s.QueuedTasks(), n-perHost)
	}
}

// Each timed task takes the model's time for it; the clone's result is the
// new VM, made only at its end.
func TestTimedTasksTakeTheModelsDurations(t *testing.T) {
	model := latency.New(100, latency.Median)
	s, c := startTimed(t, model)
	ctx := t.Context()
	start := time.Now()
	task := cloneTemplate(ctx, t, s, c, "timed")
	if _, err := find.NewFinder(c, true).VirtualMachine(ctx, s.Folder+"/timed"); err == nil {
		t.Error("the clone exists while its task runs; vCenter's appears at its end")
	}
	res, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, want := time.Since(start), model.Of(latency.CloneFull); d < want {
		t.Errorf("full clone of 60 GiB took %s, want at least %s", d, want)
	}
	vm := object.NewVirtualMachine(c, res.Result.(types.ManagedObjectReference))
	for _, step := range []struct {
		op  latency.Op
		run func(context.Context) (*object.Task, error)
	}{
		{latency.PowerOnTask, vm.PowerOn},
		{latency.PowerOffTask, vm.PowerOff},
		{latency.ReconfigTask, func(ctx context.Context) (*object.Task, error) {
			return vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{Annotation: "timed"})
		}},
		{latency.SnapshotTask, func(ctx context.Context) (*object.Task, error) { return vm.CreateSnapshot(ctx, "s", "", false, false) }},
		{latency.DestroyTask, vm.Destroy},
	} {
		began := time.Now()
		tk, err := step.run(ctx)
		if err == nil {
			err = tk.Wait(ctx)
		}
		if err != nil {
			t.Fatalf("%s: %v", step.op, err)
		}
		if d, want := time.Since(began), model.Of(step.op); d < want {
			t.Errorf("%s took %s, want at least %s", step.op, d, want)
		}
	}
}

// Close ends tasks still queued or running at once: nothing waits for a
// clone's real time.
func TestCloseEndsQueuedTasks(t *testing.T) {
	s, c := startTimed(t, latency.New(1, latency.Median)) // real time: 120 s a clone
	for i := range 6 {
		cloneTemplate(t.Context(), t, s, c, fmt.Sprintf("closing-%d", i))
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for queued and running tasks")
	}
}

// A clone takes units of its destination host too: four full clones of one
// template onto another host fill that host, and a clone of a template
// elsewhere onto it waits, though its own host is free.
func TestCloneChargesItsDestinationHostToo(t *testing.T) {
	model := latency.New(100, latency.Median)
	s, c := startTimed(t, model)
	ctx := t.Context()
	finder := find.NewFinder(c, true)
	hostOf := func(path string) (*object.VirtualMachine, types.ManagedObjectReference) {
		vm, err := finder.VirtualMachine(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var m mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"runtime.host"}, &m); err != nil {
			t.Fatal(err)
		}
		return vm, *m.Runtime.Host
	}
	first, a := hostOf(s.Templates["2022"])
	var (
		other *object.VirtualMachine
		b     types.ManagedObjectReference
	)
	for _, v := range []string{"2019", "2025", PreparedVersion} {
		if vm, h := hostOf(s.Templates[v]); h != a {
			other, b = vm, h
			break
		}
	}
	if other == nil {
		t.Skip("vcsim placed every template on one host")
	}
	folder, err := finder.Folder(ctx, s.Folder)
	if err != nil {
		t.Fatal(err)
	}
	pool := types.ManagedObjectReference{Type: "ResourcePool", Value: s.ResourcePoolID}
	onto := func(src *object.VirtualMachine, name string) *object.Task {
		task, err := src.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &pool, Host: &b}})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	var tasks []*object.Task
	for i := range latency.ProvisioningUnitsPerHost / latency.UnitsPerFullClone {
		tasks = append(tasks, onto(first, fmt.Sprintf("dest-%d", i)))
	}
	last := onto(other, "dest-other")
	var info mo.Task
	if err := last.Properties(ctx, last.Reference(), []string{"info"}, &info); err != nil {
		t.Fatal(err)
	}
	if info.Info.State != types.TaskInfoStateQueued {
		t.Errorf("a clone onto a host four clones fill: state %s, want queued", info.Info.State)
	}
	for _, tk := range append(tasks, last) {
		if _, err := tk.WaitForResult(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if s.QueuedTasks() != 1 {
		t.Errorf("%d tasks queued, want 1", s.QueuedTasks())
	}
}
