package vcsim

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/hooks"
)

// listViewChange runs ModifyListView and ResetListView on a ListView the
// way vCenter can and vcsim cannot: vcsim changes the view and reports the
// change to its handlers while holding the view's lock, and a
// PropertyFilter over the view takes its own lock in that handler, while a
// WaitForUpdatesEx recomputing the filter holds the filter's lock and
// takes the view's: the two deadlock (a shared watch of many waits puts
// objects into its view while its long poll runs). Here the view changes
// under its lock, and the handlers hear of it after.
type listViewChange struct {
	self types.ManagedObjectReference
	lv   *simulator.ListView
}

func (c *listViewChange) Reference() types.ManagedObjectReference { return c.self }

// add is vcsim's ListView.add: an object the session cannot see is
// unresolved, and in the view all the same.
func (c *listViewChange) add(ctx *simulator.Context, refs []types.ManagedObjectReference) []types.ManagedObjectReference {
	var unresolved []types.ManagedObjectReference
	for _, ref := range refs {
		if ctx.Session.Get(ref) == nil {
			unresolved = append(unresolved, ref)
		}
		c.lv.View = append(c.lv.View, ref)
	}
	return unresolved
}

// changed tells the handlers (the filters over the view, the collectors)
// outside the view's lock; the view itself has changed already.
func (c *listViewChange) changed(ctx *simulator.Context) {
	ctx.Update(c.lv, nil)
}

func (c *listViewChange) ModifyListView(ctx *simulator.Context, req *types.ModifyListView) soap.HasFault {
	var unresolved []types.ManagedObjectReference
	ctx.WithLock(c.lv, func() {
		unresolved = c.add(ctx, req.Add)
		for _, ref := range req.Remove {
			simulator.RemoveReference(&c.lv.View, ref)
		}
	})
	if len(req.Add) != 0 || len(req.Remove) != 0 {
		c.changed(ctx)
	}
	return &methods.ModifyListViewBody{Res: &types.ModifyListViewResponse{Returnval: unresolved}}
}

func (c *listViewChange) ResetListView(ctx *simulator.Context, req *types.ResetListView) soap.HasFault {
	var unresolved []types.ManagedObjectReference
	ctx.WithLock(c.lv, func() {
		c.lv.View = nil
		unresolved = c.add(ctx, req.Obj)
	})
	c.changed(ctx)
	return &methods.ResetListViewBody{Res: &types.ResetListViewResponse{Returnval: unresolved}}
}

// CloneHook observes a CloneVM_Task request after the sandbox's fixes (so
// req.Spec.Config.Uuid is the clone's BIOS UUID) and before the simulator
// runs it. An error refuses the clone: the call fails with an
// InvalidArgument fault carrying the error's text.
type CloneHook func(source *simulator.VirtualMachine, req *types.CloneVM_Task) error

// methodHooks is the simulator's one method handler (Registry.Handler),
// shared by the sandbox's fixes and its observers.
type methodHooks struct {
	mu    sync.Mutex
	clone []CloneHook
	call  hooks.List[CallHook] // sessions.go
}

// OnClone adds a hook run for every CloneVM_Task request.
func (s *Server) OnClone(h CloneHook) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.clone = append(s.hooks.clone, h)
}

// installHandler counts every call (calls.go), makes clones behave as on
// vCenter where vcsim differs, and runs the hooks. vcsim's clone does not copy the source's extraConfig
// (vCenter does: the Windows build recorded on a template reaches its
// clones), derives the BIOS and instance UUIDs from the VM's path (vCenter
// generates fresh ones: a VM recreated at the same path is a new machine
// with a new providerID) and ignores linked clones (vCenter creates child
// disks whose parent is the source's disk: LinkedClones relies on that).
func (s *Server) installHandler() {
	s.Model.Map().AddHandler(&s.notes) // notes.go
	s.Model.Map().Handler = func(ctx *simulator.Context, m *simulator.Method) (mo.Reference, types.BaseMethodFault) {
		s.calls.add(ctx, m.Name)
		s.observe(ctx, m)
		if ctx.Session == nil {
			return nil, nil // the simulator refuses the call (NotAuthenticated) or answers it without a session
		}
		if m.Name == "WaitForUpdatesEx" || m.Name == "WaitForUpdates" {
			s.waits.add(ctx, m.This) // before the check: it may point the call elsewhere
		}
		if h := s.authz.authorize(ctx, m); h != nil {
			return h, nil
		}
		if h, fault, ok := s.routeGuest(m); ok {
			return h, fault
		}
		switch m.Name {
		case "ModifyListView", "ResetListView":
			if lv, ok := ctx.Session.Get(m.This).(*simulator.ListView); ok {
				// Dispatched to listViewChange (the registry's object
				// would win over a handler returned for its own reference).
				m.This = types.ManagedObjectReference{Type: "ListView", Value: "sandbox-" + m.This.Value}
				return &listViewChange{self: m.This, lv: lv}, nil
			}
		}
		if m.Name != "CloneVM_Task" {
			return s.timing.handler(ctx, m), nil
		}
		req, ok := m.Body.(*types.CloneVM_Task)
		if !ok {
			return nil, nil
		}
		src, ok := ctx.Map.Get(m.This).(*simulator.VirtualMachine)
		if !ok {
			return nil, nil // the simulator answers ManagedObjectNotFound
		}
		var err error
		ctx.WithLock(src, func() {
			fixClone(ctx, src, req)
			s.notes.expect(src, req)
			s.hooks.mu.Lock()
			hooks := s.hooks.clone
			s.hooks.mu.Unlock()
			for _, h := range hooks {
				if err = h(src, req); err != nil {
					return
				}
			}
		})
		if err != nil {
			// The simulator prefers the registry's object for m.This over a
			// handler returned here, so point the call at one it lacks.
			m.This = types.ManagedObjectReference{Type: "VirtualMachine", Value: "sandbox-refusal"}
			return &refusal{self: m.This, msg: err.Error()}, nil
		}
		return s.timing.handler(ctx, m), nil
	}
}

// refusal answers a CloneVM_Task call with a fault that carries a message
// (a fault returned by Registry.Handler itself reaches clients without one).
type refusal struct {
	self types.ManagedObjectReference
	msg  string
}

func (r *refusal) Reference() types.ManagedObjectReference { return r.self }

// CloneVMTask is called by the simulator in place of the VM's own method.
func (r *refusal) CloneVMTask(*simulator.Context, *types.CloneVM_Task) soap.HasFault {
	return &methods.CloneVM_TaskBody{Fault_: simulator.Fault(r.msg, &types.InvalidArgument{InvalidProperty: "spec"})}
}

func fixClone(ctx *simulator.Context, src *simulator.VirtualMachine, req *types.CloneVM_Task) {
	if req.Spec.Config == nil {
		req.Spec.Config = &types.VirtualMachineConfigSpec{}
	}
	cfg := req.Spec.Config
	if cfg.Uuid == "" {
		cfg.Uuid = uuid.NewString()
	}
	if cfg.InstanceUuid == "" {
		cfg.InstanceUuid = uuid.NewString()
	}
	if src.Config == nil {
		return
	}
	set := map[string]bool{}
	for _, o := range cfg.ExtraConfig {
		set[o.GetOptionValue().Key] = true
	}
	for _, o := range src.Config.ExtraConfig {
		ov := o.GetOptionValue()
		if !set[ov.Key] && !strings.HasPrefix(ov.Key, "SET.") {
			cfg.ExtraConfig = append(cfg.ExtraConfig, &types.OptionValue{Key: ov.Key, Value: ov.Value})
		}
	}
	switch types.VirtualMachineRelocateDiskMoveOptions(req.Spec.Location.DiskMoveType) {
	case types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking,
		types.VirtualMachineRelocateDiskMoveOptionsMoveChildMostDiskBacking:
		if change := linkedDisk(ctx, src, req); change != nil {
			req.Spec.Location.DeviceChange = append(req.Spec.Location.DeviceChange, change)
		}
	}
}

// vmPathRE splits "[datastore] dir/file.vmx".
var vmPathRE = regexp.MustCompile(`^\[([^\]]+)\]`)

// linkedDisk makes the clone's first disk a child of the source's: an edit
// of the disk the simulator created, at the path it created it.
func linkedDisk(ctx *simulator.Context, src *simulator.VirtualMachine, req *types.CloneVM_Task) types.BaseVirtualDeviceConfigSpec {
	var disk *types.VirtualDisk
	for _, d := range src.Config.Hardware.Device {
		if vd, ok := d.(*types.VirtualDisk); ok {
			disk = vd
			break
		}
	}
	if disk == nil {
		return nil
	}
	backing, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	if !ok {
		return nil
	}
	ds := ""
	if m := vmPathRE.FindStringSubmatch(src.Config.Files.VmPathName); m != nil {
		ds = m[1]
	}
	if ref := req.Spec.Location.Datastore; ref != nil {
		if d, ok := ctx.Map.Get(*ref).(*simulator.Datastore); ok {
			ds = d.Name
		}
	}
	parent := *backing
	child := *backing
	child.Parent = &parent
	child.FileName = fmt.Sprintf("[%s] %s/%s.vmdk", ds, req.Name, req.Name)
	child.Uuid = ""
	edited := *disk
	edited.Backing = &child
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &edited}
}
