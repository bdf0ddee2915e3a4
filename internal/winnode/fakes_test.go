package winnode_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	vimtypes "github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest/guesttest"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// The in-memory vCenter and cluster below implement winnode's own
// interfaces (VSphere, Kube), not vSphere's or Kubernetes' APIs: they keep
// the state an orchestration changes (VMs and their power, Nodes, their
// cordon and annotations, bootstrap tokens) so a test asserts the state a
// failure leaves. Every operation is recorded, honours its context like a
// real client (a cancelled one fails), and fails with fail[op] when set;
// at[op] runs first (a cancellation mid-way). The acceptance tests drive
// the real clients against vcsim and a real control plane.

// ops is what both fakes share: the call log, injected failures and hooks.
type ops struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]error
	at    map[string]func()
}

func newOps() ops { return ops{fail: map[string]error{}, at: map[string]func(){}} }

// enter records an operation and returns the error it fails with. The
// caller holds no lock.
func (o *ops) enter(ctx context.Context, op string, args ...any) error {
	o.mu.Lock()
	call := strings.TrimSpace(op + " " + strings.TrimSpace(fmt.Sprintln(args...)))
	o.calls = append(o.calls, call)
	hook, err := o.at[op], o.fail[op]
	o.mu.Unlock()
	if hook != nil {
		hook()
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// Calls lists the operations, "Op arg ...", in order.
func (o *ops) Calls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

// names lists the operation names alone.
func (o *ops) names() []string {
	var out []string
	for _, c := range o.Calls() {
		op, _, _ := strings.Cut(c, " ")
		out = append(out, op)
	}
	return out
}

// called reports whether op ran.
func (o *ops) called(op string) bool { return slices.Contains(o.names(), op) }

// before reports whether a ran before b (both ran).
func (o *ops) before(a, b string) bool {
	names := o.names()
	i, j := slices.Index(names, a), slices.Index(names, b)
	return i >= 0 && j >= 0 && i < j
}

const (
	templatePath = "/dc/vm/templates/win2022"
	templateID   = "vm-1"
	imageBuild   = "10.0.20348.2340"
)

// fakeVSphere is an in-memory vCenter: VMs by managed object id.
type fakeVSphere struct {
	ops
	vms   map[string]*vsphere.VMInfo
	paths map[string]string // id -> inventory path
	// hotAdd says the running VMs take any CPU and memory change;
	// otherwise Reconfigure of a running VM needs a power cycle.
	hotAdd bool
	// shutdownStalls leaves the VM running after ShutdownGuest.
	shutdownStalls bool
	last           winnode.CloneRequest
	next           int
	// detached are the disks DetachDisks took off VMs: their files remain.
	detached []vsphere.Disk
	// tags are the tag ids on each VM, as SetMetadata left them.
	tags map[string][]string
}

func newFakeVSphere() *fakeVSphere {
	f := &fakeVSphere{ops: newOps(), vms: map[string]*vsphere.VMInfo{}, paths: map[string]string{}, next: 100}
	f.add(templatePath, &vsphere.VMInfo{VM: vsphere.VM{Name: "win2022"}, Template: true,
		ExtraConfig: map[string]string{winnode.ImageBuildKey: imageBuild}})
	return f
}

// add puts a VM at an inventory path; its id is the next free one unless set.
func (f *fakeVSphere) add(path string, vm *vsphere.VMInfo) *vsphere.VMInfo {
	if vm.Ref.Value == "" {
		if strings.HasPrefix(path, "/dc/vm/templates/") {
			vm.Ref = vsphere.VMRef(templateID)
		} else {
			f.next++
			vm.Ref = vsphere.VMRef(fmt.Sprintf("vm-%d", f.next))
		}
	}
	f.vms[vm.ID()] = vm
	f.paths[vm.ID()] = path
	return vm
}

func (f *fakeVSphere) vm(id string) (*vsphere.VMInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	vm, ok := f.vms[id]
	if !ok {
		return nil, &vsphere.NotFoundError{Kind: "virtual machine", ID: id}
	}
	return vm, nil
}

func (f *fakeVSphere) power(id string) vimtypes.VirtualMachinePowerState {
	vm, err := f.vm(id)
	if err != nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return vm.PowerState
}

func (f *fakeVSphere) setPower(id string, state vimtypes.VirtualMachinePowerState) error {
	vm, err := f.vm(id)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	vm.PowerState = state
	return nil
}

func (f *fakeVSphere) CloneNode(ctx context.Context, req winnode.CloneRequest) (winnode.Identity, error) {
	if err := f.enter(ctx, "CloneNode", req.Name); err != nil {
		return winnode.Identity{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = req
	var tmpl *vsphere.VMInfo
	for id, p := range f.paths {
		if p == req.Template {
			tmpl = f.vms[id]
		}
	}
	if tmpl == nil {
		return winnode.Identity{}, &vsphere.NotFoundError{Kind: "virtual machine", ID: req.Template}
	}
	n := f.next + 1
	vm := f.add(req.Folder+"/"+req.Name, &vsphere.VMInfo{
		VM:         vsphere.VM{Name: req.Name, InstanceUUID: fmt.Sprintf("5011aaaa-0000-0000-0000-%012d", n), BIOSUUID: fmt.Sprintf("4211AAAA-0000-0000-0000-%012d", n)},
		PowerState: vimtypes.VirtualMachinePowerStatePoweredOff, NumCPUs: req.NumCPUs, MemoryMB: req.MemoryMB,
		ExtraConfig: maps.Clone(tmpl.ExtraConfig), Disks: slices.Clone(tmpl.Disks),
	})
	maps.Copy(vm.ExtraConfig, req.ExtraConfig)
	return winnode.Identity{VMID: vm.ID(), InstanceUUID: vm.InstanceUUID, BIOSUUID: vm.BIOSUUID, InventoryPath: f.paths[vm.ID()]}, nil
}

// vcenterID is the fake vCenter's instance UUID.
const vcenterID = "vc-0000-1111"

func (f *fakeVSphere) VCenterID() string { return vcenterID }

func (f *fakeVSphere) VMGone(ctx context.Context, vmID string) (bool, error) {
	if err := f.enter(ctx, "VMGone", vmID); err != nil {
		return false, err
	}
	_, err := f.vm(vmID)
	return vsphere.IsNotFound(err), nil
}

func (f *fakeVSphere) FindClone(ctx context.Context, req winnode.CloneRequest) (*vsphere.VMInfo, error) {
	if err := f.enter(ctx, "FindClone", req.Folder+"/"+req.Name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, p := range f.paths {
		if p == req.Folder+"/"+req.Name {
			c := *f.vms[id]
			return &c, nil
		}
	}
	return nil, &vsphere.NotFoundError{Kind: "virtual machine", ID: req.Folder + "/" + req.Name}
}

// DetachDisks takes the disks off the VM and keeps them in detached.
func (f *fakeVSphere) DetachDisks(ctx context.Context, vmID string, keys []int32) error {
	if err := f.enter(ctx, "DetachDisks", vmID, keys); err != nil {
		return err
	}
	if _, err := f.vm(vmID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	vm := f.vms[vmID]
	vm.Disks = slices.DeleteFunc(slices.Clone(vm.Disks), func(d vsphere.Disk) bool {
		if slices.Contains(keys, d.Key) {
			f.detached = append(f.detached, d)
			return true
		}
		return false
	})
	return nil
}

func (f *fakeVSphere) GuestOperations(vmID string) *remote.GuestOperations {
	return &remote.GuestOperations{VM: vsphere.VMRef(vmID)}
}

func (f *fakeVSphere) PowerOn(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "PowerOn", vmID); err != nil {
		return err
	}
	return f.setPower(vmID, vimtypes.VirtualMachinePowerStatePoweredOn)
}

func (f *fakeVSphere) WaitForCustomization(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "WaitForCustomization", vmID); err != nil {
		return err
	}
	_, err := f.vm(vmID)
	return err
}

func (f *fakeVSphere) WaitForIP(ctx context.Context, vmID string) (string, error) {
	if err := f.enter(ctx, "WaitForIP", vmID); err != nil {
		return "", err
	}
	if _, err := f.vm(vmID); err != nil {
		return "", err
	}
	return "192.0.2.21", nil
}

func (f *fakeVSphere) Reconfigure(ctx context.Context, vmID string, hw vsphere.Hardware) error {
	if err := f.enter(ctx, "Reconfigure", vmID); err != nil {
		return err
	}
	vm, err := f.vm(vmID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if vm.PowerState == vimtypes.VirtualMachinePowerStatePoweredOn && !f.hotAdd {
		return &vsphere.PowerCycleRequiredError{VM: vm.Name, Reason: "CPU hot add is not enabled"}
	}
	if hw.NumCPUs != 0 {
		vm.NumCPUs = hw.NumCPUs
	}
	if hw.MemoryMB != 0 {
		vm.MemoryMB = hw.MemoryMB
	}
	return nil
}

func (f *fakeVSphere) GrowDisk(ctx context.Context, vmID string, sizeGB int64) error {
	if err := f.enter(ctx, "GrowDisk", vmID, sizeGB); err != nil {
		return err
	}
	_, err := f.vm(vmID)
	return err
}

// SetMetadata records the call and the VM's tags; SetAnnotation sets
// the VM's notes.
func (f *fakeVSphere) SetMetadata(ctx context.Context, vmID string, had, want vsphere.Metadata) error {
	if err := f.enter(ctx, "SetMetadata", vmID, want.Tags, want.CustomAttributes); err != nil {
		return err
	}
	if _, err := f.vm(vmID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tags == nil {
		f.tags = map[string][]string{}
	}
	// As vsphere.Client.SetMetadata: had's tags not wanted detached,
	// wanted ones attached, others' left alone.
	tags := slices.DeleteFunc(f.tags[vmID], func(t string) bool { return slices.Contains(had.Tags, t) && !slices.Contains(want.Tags, t) })
	tags = append(tags, want.Tags...)
	slices.Sort(tags)
	f.tags[vmID] = slices.Compact(tags)
	return nil
}

func (f *fakeVSphere) AttachedTags(ctx context.Context, vmID string) ([]string, error) {
	if err := f.enter(ctx, "AttachedTags", vmID); err != nil {
		return nil, err
	}
	if _, err := f.vm(vmID); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tags[vmID]), nil
}

func (f *fakeVSphere) SetAnnotation(ctx context.Context, vmID, text string) error {
	if err := f.enter(ctx, "SetAnnotation", vmID, text); err != nil {
		return err
	}
	vm, err := f.vm(vmID)
	if err == nil {
		vm.Annotation = text
	}
	return err
}

func (f *fakeVSphere) ShutdownGuest(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "ShutdownGuest", vmID); err != nil {
		return err
	}
	if f.shutdownStalls {
		_, err := f.vm(vmID)
		return err
	}
	return f.setPower(vmID, vimtypes.VirtualMachinePowerStatePoweredOff)
}

func (f *fakeVSphere) WaitForPoweredOff(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "WaitForPoweredOff", vmID); err != nil {
		return err
	}
	if f.power(vmID) != vimtypes.VirtualMachinePowerStatePoweredOff {
		return context.DeadlineExceeded // the guest did not shut down in time
	}
	return nil
}

// WaitForGuestRestart: the guest the fake restarts is back at once.
func (f *fakeVSphere) WaitForGuestRestart(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "WaitForGuestRestart", vmID); err != nil {
		return err
	}
	_, err := f.vm(vmID)
	return err
}

func (f *fakeVSphere) PowerOff(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "PowerOff", vmID); err != nil {
		return err
	}
	return f.setPower(vmID, vimtypes.VirtualMachinePowerStatePoweredOff)
}

func (f *fakeVSphere) Destroy(ctx context.Context, vmID string) error {
	if err := f.enter(ctx, "Destroy", vmID); err != nil {
		return err
	}
	if _, err := f.vm(vmID); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.vms, vmID)
	delete(f.paths, vmID)
	return nil
}

func (f *fakeVSphere) ReadVM(ctx context.Context, vmID string) (*vsphere.VMInfo, error) {
	if err := f.enter(ctx, "ReadVM", vmID); err != nil {
		return nil, err
	}
	vm, err := f.vm(vmID)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := *vm
	return &c, nil
}

func (f *fakeVSphere) ReadVMs(ctx context.Context, vmIDs []string) (map[string]*vsphere.VMInfo, error) {
	if err := f.enter(ctx, "ReadVMs", vmIDs); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]*vsphere.VMInfo{}
	for _, id := range vmIDs {
		if vm, ok := f.vms[id]; ok {
			c := *vm
			out[id] = &c
		}
	}
	return out, nil
}

func (f *fakeVSphere) InventoryPaths(ctx context.Context, vmIDs []string) (map[string]string, error) {
	if err := f.enter(ctx, "InventoryPaths", vmIDs); err != nil {
		return nil, err
	}
	for _, id := range vmIDs {
		if _, err := f.vm(id); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, id := range vmIDs {
		if p := f.paths[id]; p != "" { // "": vCenter gives no path (a folder above is unreadable)
			out[id] = p
		}
	}
	return out, nil
}

func (f *fakeVSphere) FindVMByUUID(ctx context.Context, uuid string, instance bool) (string, error) {
	if err := f.enter(ctx, "FindVMByUUID", uuid, instance); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, vm := range f.vms {
		have := vm.BIOSUUID
		if instance {
			have = vm.InstanceUUID
		}
		if strings.EqualFold(have, uuid) {
			return id, nil
		}
	}
	return "", &vsphere.NotFoundError{Kind: "virtual machine", ID: uuid}
}

func (f *fakeVSphere) FindVMByPath(ctx context.Context, inventoryPath string) (string, error) {
	if err := f.enter(ctx, "FindVMByPath", inventoryPath); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, p := range f.paths {
		if p == inventoryPath {
			return id, nil
		}
	}
	return "", &vsphere.NotFoundError{Kind: "virtual machine", ID: inventoryPath}
}

func (f *fakeVSphere) ListVMs(ctx context.Context, folder string) ([]*vsphere.VMInfo, error) {
	if err := f.enter(ctx, "ListVMs", folder); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	found := folder == ""
	var out []*vsphere.VMInfo
	for id, p := range f.paths {
		if folder == "" || strings.HasPrefix(p, folder+"/") {
			found = true
			c := *f.vms[id]
			out = append(out, &c)
		}
	}
	if !found {
		return nil, &vsphere.NotFoundError{Kind: "folder", ID: folder}
	}
	slices.SortFunc(out, func(a, b *vsphere.VMInfo) int { return strings.Compare(a.ID(), b.ID()) })
	return out, nil
}

// world is a Manager over the in-memory vCenter, cluster and guest. The
// guest's kubelet-service step registers the Node, as a kubelet would.
type world struct {
	m        *winnode.Manager
	vs       *fakeVSphere
	k        *fakeKube
	g        *guesttest.Guest
	progress []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{vs: newFakeVSphere(), k: newFakeKube(), g: guesttest.New()}
	w.g.Steps["kubelet-service"] = guesttest.Reply{Do: func(context.Context) { w.k.register(testSpec().Name) }}
	w.g.Files[bootstrap.KubeletLogFile] = "I0101 kubelet starting\nE0101 bootstrap: token tok001." + tokenSecret + " rejected: Unauthorized\n"
	w.m = &winnode.Manager{VSphere: w.vs, Kube: w.k, Connect: w.g.Connect,
		Progress: func(stage string, _ map[string]any) { w.progress = append(w.progress, stage) }}
	return w
}

func testSpec() winnode.Spec {
	return winnode.Spec{
		Name: "win-1", Template: templatePath, Folder: "/dc/vm/nodes", ResourcePoolID: "resgroup-9",
		NumCPUs: 4, MemoryMB: 8192, DiskSizeGB: 80,
		AdminUser: "Administrator", AdminPassword: "N0de-Passw0rd!",
		Transport:  remote.Config{Protocol: remote.ProtocolWinRM, HTTPS: true},
		Labels:     map[string]string{"example.com/pool": "web"},
		Taints:     []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		Networking: "kube-system",
	}
}
