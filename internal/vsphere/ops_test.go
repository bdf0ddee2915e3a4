package vsphere_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// setGuestIP plays VMware Tools reporting a DHCP address (vcsim reports
// none for DHCP customizations).
func (e *env) setGuestIP(ctx context.Context, t testing.TB, vm *vsphere.VM, ip string) {
	t.Helper()
	task, err := object.NewVirtualMachine(e.c.Client.Client, vm.Ref).Reconfigure(ctx, types.VirtualMachineConfigSpec{
		ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "SET.guest.ipAddress", Value: ip}},
	})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Error(err)
	}
}

func TestWaitForIPDHCP(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(t, "win-dhcp", ""))
	if err != nil {
		t.Fatal(err)
	}

	// Powered off: no address will come.
	if _, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{}); err == nil || !strings.Contains(err.Error(), "powered off") {
		t.Errorf("WaitForIP of a powered-off VM: %v", err)
	}
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Errorf("powering on a running VM: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		ip, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
		if err != nil {
			t.Error(err)
		}
		got <- ip
	}()
	time.Sleep(100 * time.Millisecond)        // the wait is in place before any address
	e.setGuestIP(ctx, t, vm, "169.254.10.20") // APIPA: never the node IP
	select {
	case ip := <-got:
		t.Fatalf("WaitForIP returned %q for an APIPA address", ip)
	case <-time.After(200 * time.Millisecond):
	}
	e.setGuestIP(ctx, t, vm, "127.0.50.1")
	select {
	case ip := <-got:
		if ip != "127.0.50.1" {
			t.Errorf("IP = %q", ip)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForIP did not see the address")
	}

	// A deadline ends the wait with a message that says what was seen.
	vm2, err := e.c.Clone(ctx, e.cloneSpec(t, "win-noip", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.PowerOn(ctx, vm2); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = e.c.WaitForIP(short, vm2, vsphere.IPFilter{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "VMware Tools") {
		t.Errorf("WaitForIP past its deadline: %v", err)
	}
}

func TestIPFilter(t *testing.T) {
	info := &vsphere.VMInfo{GuestNICs: []vsphere.GuestNIC{
		{Network: "vEthernet (nat)", DeviceConfigID: -1, IPAddresses: []string{"172.20.0.1"}},
		{Network: "VM Network", DeviceConfigID: 4000, IPAddresses: []string{"fe80::1", "169.254.3.4", "2001:db8::5", "10.1.2.3"}},
	}}
	if got := info.IP(vsphere.IPFilter{}); got != "10.1.2.3" {
		t.Errorf("IP = %q, want 10.1.2.3", got)
	}
	info.GuestNICs[1].IPAddresses = []string{"fe80::1", "2001:db8::5"}
	if got := info.IP(vsphere.IPFilter{}); got != "" {
		t.Errorf("IP without IPv6 allowed = %q", got)
	}
	if got := info.IP(vsphere.IPFilter{IPv6: true}); got != "2001:db8::5" {
		t.Errorf("IPv6 = %q", got)
	}
}

func TestConcurrentClones(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const n, parallel = 20, 10
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	specs := make([]vsphere.CloneSpec, n)
	for i := range specs {
		specs[i] = e.cloneSpec(t, fmt.Sprintf("win-%02d", i), fmt.Sprintf("127.0.60.%d", i+1))
	}
	e.counter.reset()
	begin := time.Now()
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ip := fmt.Sprintf("127.0.60.%d", i+1)
			vm, err := e.c.Clone(ctx, specs[i])
			if err == nil {
				err = e.c.PowerOn(ctx, vm)
			}
			var got string
			if err == nil {
				got, err = e.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
			}
			if err == nil && got != ip {
				err = fmt.Errorf("IP %s, want %s", got, ip)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d clones + power-on + IP wait at parallelism %d: %s, %d round trips (%.1f per VM)",
		n, parallel, time.Since(begin).Round(time.Millisecond), e.counter.n.Load(), float64(e.counter.n.Load())/n)
}

func TestReadVMs(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	var refs []types.ManagedObjectReference
	for i := range 4 {
		vm, err := e.c.Clone(ctx, e.cloneSpec(t, fmt.Sprintf("win-r%d", i), fmt.Sprintf("127.0.70.%d", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.c.PowerOn(ctx, vm); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, vm.Ref)
	}
	e.counter.reset()
	infos, err := e.c.ReadVMs(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.counter.n.Load(); n != 1 {
		t.Errorf("ReadVMs of %d VMs took %d round trips, want 1", len(refs), n)
	}
	for i, r := range refs {
		info := infos[r]
		if info == nil || info.PowerState != vsphere.PoweredOn || info.IP(vsphere.IPFilter{}) != fmt.Sprintf("127.0.70.%d", i+1) || info.Parent.Type != "Folder" {
			t.Errorf("%s: %+v", r.Value, info)
		}
	}

	// A destroyed VM is left out; the rest still come back.
	if err := e.c.Destroy(ctx, refs[1]); err != nil {
		t.Fatal(err)
	}
	e.counter.reset()
	infos, err = e.c.ReadVMs(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ReadVMs with one of %d VMs gone: %d round trips", len(refs), e.counter.n.Load())
	if _, ok := infos[refs[1]]; ok || len(infos) != 3 {
		t.Errorf("got %d VMs (destroyed one present: %v)", len(infos), ok)
	}
}

// TestListVMs: a folder's VMs (and below), or the whole inventory with
// its templates, and the VMs' inventory paths, in a fixed number of round
// trips however many VMs exist.
func TestListVMs(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	sub, err := e.c.FindFolderByPath(ctx, e.folder+"/sub", true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i := range 3 {
		spec := e.cloneSpec(t, fmt.Sprintf("win-l%d", i), "")
		if i == 2 {
			spec.Folder = sub // a subfolder is searched too
		}
		vm, err := e.c.Clone(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		want[vm.Ref.Value] = true
	}
	folder, err := e.c.FindFolderByPath(ctx, e.folder, false)
	if err != nil {
		t.Fatal(err)
	}
	e.counter.reset()
	vms, err := e.c.ListVMs(ctx, folder)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.counter.n.Load(); n > 4 {
		t.Errorf("ListVMs took %d round trips, want at most 4 (view, retrieve, destroy view)", n)
	}
	got := map[string]bool{}
	for _, vm := range vms {
		got[vm.Ref.Value] = true
		if vm.InstanceUUID == "" || vm.BIOSUUID == "" || vm.Name == "" {
			t.Errorf("%s: identity not read: %+v", vm.Ref.Value, vm.VM)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ListVMs(%s) = %v, want %v", e.folder, got, want)
	}

	// Their inventory paths: one retrieval for all of them.
	refs := make([]types.ManagedObjectReference, 0, len(vms))
	for _, vm := range vms {
		refs = append(refs, vm.Ref)
	}
	e.counter.reset()
	paths, err := e.c.InventoryPaths(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.counter.n.Load(); n != 1 {
		t.Errorf("InventoryPaths of %d VMs took %d round trips, want 1", len(refs), n)
	}
	for _, vm := range vms {
		want := e.folder + "/" + vm.Name
		if vm.Name == "win-l2" {
			want = e.folder + "/sub/" + vm.Name
		}
		if paths[vm.Ref] != want {
			t.Errorf("InventoryPaths: %s is at %q, want %q", vm.Ref.Value, paths[vm.Ref], want)
		}
		if p, err := e.c.InventoryPath(ctx, vm.Ref); err != nil || p != want {
			t.Errorf("InventoryPath(%s) = %q, %v; want %q", vm.Ref.Value, p, err, want)
		}
	}
	if _, err := e.c.InventoryPaths(ctx, append(refs, vsphere.VMRef("vm-404"))); !vsphere.IsNotFound(err) {
		t.Errorf("InventoryPaths with a missing VM: %v, want a NotFoundError", err)
	}

	all, err := e.c.ListVMs(ctx, types.ManagedObjectReference{})
	if err != nil {
		t.Fatal(err)
	}
	templates := 0
	for _, vm := range all {
		if vm.Template {
			templates++
		}
		delete(want, vm.Ref.Value)
	}
	if len(want) > 0 || templates != len(e.srv.Templates) || len(all) != len(vms)+templates {
		t.Errorf("ListVMs of the inventory: %d VMs with %d templates (want %d VMs, %d templates), missing %v",
			len(all), templates, len(vms)+len(e.srv.Templates), len(e.srv.Templates), want)
	}
}

func TestReconfigureAndGrowDisk(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	vm, err := e.c.Clone(ctx, e.cloneSpec(t, "win-hw", "127.0.80.1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	hw := vsphere.Hardware{NumCPUs: 4, MemoryMB: 8192}
	need, why, err := e.c.NeedsPowerCycle(ctx, vm, hw)
	if err != nil || !need || !strings.Contains(why, "hot-add") {
		t.Errorf("NeedsPowerCycle = %v %q %v", need, why, err)
	}
	var pc *vsphere.PowerCycleRequiredError
	if err := e.c.Reconfigure(ctx, vm, hw); !errors.As(err, &pc) {
		t.Fatalf("Reconfigure of a running VM without hot-add: %v", err)
	}
	if err := e.c.ShutdownGuest(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Reconfigure(ctx, vm, hw); err != nil {
		t.Fatal(err)
	}
	if err := e.c.GrowDisk(ctx, vm, 100); err != nil {
		t.Fatal(err)
	}
	if err := e.c.GrowDisk(ctx, vm, 100); err != nil {
		t.Errorf("growing to the same size: %v", err)
	}
	if err := e.c.GrowDisk(ctx, vm, 50); err == nil || !strings.Contains(err.Error(), "only grow") {
		t.Errorf("shrinking: %v", err)
	}
	info, err := e.c.ReadVM(ctx, vm)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumCPUs != 4 || info.MemoryMB != 8192 || info.Disks[0].SizeGB() != 100 {
		t.Errorf("hardware now %d CPU, %d MB, %d GB", info.NumCPUs, info.MemoryMB, info.Disks[0].SizeGB())
	}
	// Hot-add on: a running VM takes more CPUs and memory.
	task, _ := object.NewVirtualMachine(e.c.Client.Client, vm.Ref).Reconfigure(ctx, types.VirtualMachineConfigSpec{
		CpuHotAddEnabled: types.NewBool(true), MemoryHotAddEnabled: types.NewBool(true)})
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Reconfigure(ctx, vm, vsphere.Hardware{NumCPUs: 8, MemoryMB: 16384}); err != nil {
		t.Errorf("hot-add: %v", err)
	}
	if err := e.c.Reconfigure(ctx, vm, vsphere.Hardware{MemoryMB: 4096}); !errors.As(err, &pc) {
		t.Errorf("removing memory from a running VM: %v", err)
	}
}

func TestTemplateLinkedClonesRenameMove(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	build, err := e.c.Clone(ctx, e.cloneSpec(t, "golden-build", "127.0.90.1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CreateSnapshot(ctx, build, "golden", "for linked clones"); err != nil {
		t.Fatal(err)
	}
	imgFolder, err := e.c.FindFolderByPath(ctx, e.folder+"/images/2022", true)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e.c.FindFolderByPath(ctx, e.folder+"/images/2022", true); err != nil || again != imgFolder {
		t.Errorf("finding the created folder again: %v %v", again, err)
	}
	if err := e.c.Move(ctx, build, imgFolder); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Rename(ctx, build, "golden-2022"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.MarkAsTemplate(ctx, build); err != nil {
		t.Fatal(err)
	}
	tmpl, err := e.c.FindVMByPath(ctx, e.folder+"/images/2022/golden-2022")
	if err != nil || tmpl != build.Ref {
		t.Fatalf("template by path: %v %v", tmpl, err)
	}
	info, err := e.c.ReadVM(ctx, tmpl)
	if err != nil || !info.Template || info.ExtraConfig["guestinfo.windows.build"] != "10.0.20348" {
		t.Fatalf("template info %+v, %v", info, err)
	}

	if clones, err := e.c.LinkedClones(ctx, tmpl); err != nil || len(clones) != 0 {
		t.Errorf("linked clones of a fresh template: %v %v", clones, err)
	}
	spec := e.cloneSpec(t, "win-linked", "127.0.90.2")
	spec.Source, spec.LinkedClone = tmpl, true
	linked, err := e.c.Clone(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	full := e.cloneSpec(t, "win-full", "127.0.90.3")
	full.Source = tmpl
	if _, err := e.c.Clone(ctx, full); err != nil {
		t.Fatal(err)
	}
	e.counter.reset()
	clones, err := e.c.LinkedClones(ctx, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LinkedClones: %d round trips", e.counter.n.Load())
	if len(clones) != 1 || clones[0].Ref != linked.Ref {
		t.Errorf("linked clones = %+v, want only %s", clones, linked.Ref.Value)
	}

	// A template without a snapshot cannot be linked-cloned.
	spec = e.cloneSpec(t, "win-linked-2", "127.0.90.4")
	spec.LinkedClone = true
	if _, err := e.c.Clone(ctx, spec); err == nil || !strings.Contains(err.Error(), "no snapshot") {
		t.Errorf("linked clone of the base template: %v", err)
	}
}

func TestCloneErrors(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	spec := e.cloneSpec(t, "win-nopool", "127.0.95.1")
	spec.ResourcePool = nil
	if _, err := e.c.Clone(ctx, spec); err == nil || !strings.Contains(err.Error(), "resource pool is required") {
		t.Errorf("template clone without a pool: %v", err)
	}
	spec = e.cloneSpec(t, "win-bad", "127.0.95.2")
	spec.Sysprep.ComputerName = "A-NAME-LONGER-THAN-15"
	if _, err := e.c.Clone(ctx, spec); err == nil || !strings.Contains(err.Error(), "15 characters") {
		t.Errorf("long computer name: %v", err)
	}
	spec = e.cloneSpec(t, "win-gone", "127.0.95.3")
	spec.Source = vsphere.VMRef("vm-999999")
	if _, err := e.c.Clone(ctx, spec); !vsphere.IsNotFound(err) {
		t.Errorf("clone of a missing source: %v", err)
	}
	if _, err := e.c.FindResourcePoolByID(ctx, "resgroup-999999"); !vsphere.IsNotFound(err) {
		t.Errorf("missing pool: %v", err)
	}
	if _, err := e.c.FindVMByPath(ctx, "/DC0/vm/nope"); !vsphere.IsNotFound(err) {
		t.Errorf("missing path: %v", err)
	}
	if _, err := e.c.FindFolderByPath(ctx, "relative/path", false); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Errorf("relative path: %v", err)
	}

	// Injected faults surface with the operation and the fault.
	e.srv.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
		MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*", Probability: 1,
		FaultType: simulator.FaultTypeInsufficientResourcesFault, Message: "not enough memory in the cluster", Enabled: true,
	})
	_, err := e.c.Clone(ctx, e.cloneSpec(t, "win-fault", "127.0.95.4"))
	if err == nil || !strings.Contains(err.Error(), "cloning win2022-base to win-fault") || !strings.Contains(err.Error(), "not enough memory") {
		t.Errorf("injected clone fault: %v", err)
	}
	e.srv.Model.Service.ClearFaultRules()

	// A slow vCenter answering past the caller's deadline: the request is
	// not abandoned (vCenter acts on a request it has received), so its
	// answer, here a fault, is what the caller learns.
	e.srv.Model.Service.AddFaultRule(&simulator.FaultInjectionRule{
		MethodName: "CloneVM_Task", ObjectType: "*", ObjectName: "*", Probability: 1, Delay: 1000,
		FaultType: simulator.FaultTypeTimeout, Message: "too slow", Enabled: true,
	})
	defer e.srv.Model.Service.ClearFaultRules()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = e.c.Clone(short, e.cloneSpec(t, "win-slow", "127.0.95.5"))
	if err == nil || !strings.Contains(err.Error(), "too slow") {
		t.Errorf("slow clone past the deadline: %v, want vCenter's fault", err)
	}
}

// TestCloneInterruptedInFlight cancels a clone while its CloneVM_Task
// request is in flight, before vCenter has answered with the task. vCenter
// clones all the same, so Clone must not abandon the request: it waits for
// the reply and the task, and returns the VM with an error saying it was
// interrupted, for the caller to track.
func TestCloneInterruptedInFlight(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	spec := e.cloneSpec(t, "win-held", "127.0.96.1")
	var abandoned atomic.Bool
	var once sync.Once
	e.srv.OnRequest(func(rctx context.Context, method string) {
		if method != "CloneVM_Task" {
			return
		}
		once.Do(func() {
			cancel() // the interrupt, while the request waits for its reply
			// A client that gives up on the request closes its connection
			// at once; one that does not is let through after a second.
			select {
			case <-rctx.Done():
				abandoned.Store(true)
			case <-time.After(time.Second):
			}
		})
	})
	vm, err := e.c.Clone(ctx, spec)
	if abandoned.Load() {
		t.Error("Clone abandoned its CloneVM_Task request when its context ended")
	}
	if err == nil || !strings.Contains(err.Error(), "was interrupted") || !errors.Is(err, context.Canceled) {
		t.Errorf("the interrupted clone's error: %v", err)
	}
	found, ferr := e.c.FindVMByPath(t.Context(), e.folder+"/win-held")
	if ferr != nil {
		t.Fatalf("vCenter made no clone: %v", ferr)
	}
	if vm == nil || vm.Ref != found {
		t.Errorf("Clone returned %v; vCenter made %s", vm, found.Value)
	}
}
