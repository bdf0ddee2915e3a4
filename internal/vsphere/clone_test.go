package vsphere_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// cloneSpec is a 2022 node clone with a static IP.
func (e *env) cloneSpec(t testing.TB, name, ip string) vsphere.CloneSpec {
	t.Helper()
	ctx := context.Background()
	tmpl, err := e.c.FindVMByPath(ctx, e.srv.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := e.c.FindFolderByPath(ctx, e.folder, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := e.c.FindResourcePoolByID(ctx, e.pool)
	if err != nil {
		t.Fatal(err)
	}
	spec := vsphere.CloneSpec{
		Source: tmpl, Name: name, Folder: folder, ResourcePool: pool,
		Sysprep: &vsphere.Sysprep{ComputerName: strings.ToUpper(name), AdminPassword: "N0de-Passw0rd!"},
	}
	if ip != "" {
		spec.Sysprep.IPv4 = &vsphere.StaticIPv4{Address: ip, PrefixLength: 8, Gateway: "127.0.0.1", DNSServers: []string{"127.0.0.53"}}
	}
	return spec
}

func TestCloneStaticIP(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	spec := e.cloneSpec(t, "win-0", "127.0.10.1")
	ds, err := e.c.FindDatastoreByID(ctx, e.datastore)
	if err != nil {
		t.Fatal(err)
	}
	net, err := e.c.FindNetworkByID(ctx, e.network)
	if err != nil {
		t.Fatal(err)
	}
	spec.Datastore, spec.Network = ds, net
	spec.NumCPUs, spec.MemoryMB, spec.DiskSizeGB = 4, 8192, 80

	e.counter.reset()
	vm, err := e.c.Clone(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Clone: %d round trips %v", e.counter.n.Load(), e.counter.reset())
	if vm.Name != "win-0" || vm.InventoryPath != e.folder+"/win-0" || vm.BIOSUUID == "" || vm.InstanceUUID == "" || !strings.HasPrefix(vm.ID(), "vm-") {
		t.Errorf("identity = %+v", vm)
	}
	if err := e.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := e.c.WaitForCustomization(ctx, vm); err != nil {
		t.Fatal(err)
	}
	ip, err := e.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if ip != "127.0.10.1" {
		t.Errorf("IP = %s, want 127.0.10.1", ip)
	}
	t.Logf("PowerOn+customization+IP: %d round trips %v", e.counter.n.Load(), e.counter.reset())

	info, err := e.c.ReadVM(ctx, vm)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ReadVM: %d round trips", e.counter.n.Load())
	if info.NumCPUs != 4 || info.MemoryMB != 8192 || len(info.Disks) != 1 || info.Disks[0].SizeGB() != 80 ||
		info.PowerState != vsphere.PoweredOn || info.GuestHostName != "WIN-0" || info.BIOSUUID != vm.BIOSUUID || info.Template {
		t.Errorf("info = %+v", info)
	}
	if got := info.IP(vsphere.IPFilter{}); got != "127.0.10.1" {
		t.Errorf("info IP = %q", got)
	}

	// Finders find it again.
	for name, find := range map[string]func() (types.ManagedObjectReference, error){
		"path":          func() (types.ManagedObjectReference, error) { return e.c.FindVMByPath(ctx, vm.InventoryPath) },
		"id":            func() (types.ManagedObjectReference, error) { return e.c.FindVMByID(ctx, vm.ID()) },
		"instance UUID": func() (types.ManagedObjectReference, error) { return e.c.FindVMByUUID(ctx, vm.InstanceUUID, true) },
		"BIOS UUID":     func() (types.ManagedObjectReference, error) { return e.c.FindVMByUUID(ctx, vm.BIOSUUID, false) },
	} {
		ref, err := find()
		if err != nil || ref != vm.Ref {
			t.Errorf("by %s: %v, %v", name, ref, err)
		}
	}

	if err := e.c.Destroy(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Destroy(ctx, vm); err != nil {
		t.Errorf("destroying a destroyed VM: %v", err)
	}
	_, err = e.c.ReadVM(ctx, vm)
	var nf *vsphere.NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("ReadVM after destroy: %v, want *NotFoundError", err)
	}
	for name, find := range map[string]func() (types.ManagedObjectReference, error){
		"path": func() (types.ManagedObjectReference, error) { return e.c.FindVMByPath(ctx, vm.InventoryPath) },
		"id":   func() (types.ManagedObjectReference, error) { return e.c.FindVMByID(ctx, vm.ID()) },
		"UUID": func() (types.ManagedObjectReference, error) { return e.c.FindVMByUUID(ctx, vm.InstanceUUID, true) },
	} {
		if _, err := find(); !vsphere.IsNotFound(err) {
			t.Errorf("by %s after destroy: %v, want not found", name, err)
		}
	}
	_ = fmt.Sprint
	_ = time.Second
}

// TestCloneInterruptedAfterTheTask: an interrupt that lands after the clone
// task has ended, as the new VM's identity is read (seen in CI), still
// reads it, so the state records the whole VM, and says the clone was
// interrupted after vCenter created it.
func TestCloneInterruptedAfterTheTask(t *testing.T) {
	e := newEnv(t)
	spec := e.cloneSpec(t, "win-late", "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu     sync.Mutex // onCall runs on the requests' goroutines
		cloned bool
		calls  []string
	)
	e.counter.mu.Lock()
	e.counter.onCall = func(method string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, method)
		switch {
		case method == "CloneVM_Task":
			cloned = true
		case cloned && strings.HasPrefix(method, "RetrieveProperties"):
			cancel() // the identity's read: the task has ended
		}
	}
	e.counter.mu.Unlock()
	vm, err := e.c.Clone(ctx, spec)
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() == nil {
		t.Fatalf("the clone never read the new VM's identity after its task (calls %v)", calls)
	}
	if vm == nil || vm.BIOSUUID == "" || vm.InstanceUUID == "" || !strings.HasPrefix(vm.ID(), "vm-") {
		t.Errorf("the interrupted clone returned %+v, want the new VM with its identity", vm)
	}
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "was interrupted (context canceled) after vCenter created vm-") {
		t.Errorf("error %v, want the clone interrupted after vCenter created the VM", err)
	}
}
