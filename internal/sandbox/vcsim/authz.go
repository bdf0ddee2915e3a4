package vcsim

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// vCenter's authorization, as the sandbox enforces it on the provider's
// account (Options.ProviderUser). govmomi's simulator keeps roles and
// permissions (AuthorizationManager: AddAuthorizationRole,
// SetEntityPermissions, RetrieveAllPermissions) but checks none of them
// (its HasPrivilegeOnEntities grants everything). Here every call of the
// provider's account is checked as vCenter's authorization manager checks
// it, from the roles and permissions the simulator holds, read at each call
// (so an administrator's UpdateAuthorizationRole takes effect at once):
//
//   - A permission is a principal, a role and an entity, and propagates to
//     the entity's children or not. The privileges a user holds on an entity
//     are those of the user's permission on the entity itself, else of the
//     nearest propagating one on its ancestors: "Permissions defined for a
//     child object always override the permissions that are propagated from
//     parent objects" (vSphere Security, "Hierarchical Inheritance of
//     Permissions"). A virtual machine inherits "from both the parent virtual
//     machine folder and the parent host, cluster, or resource pool
//     simultaneously" (same page): the union of the two.
//   - Objects that are not entities (the property collector, the view and
//     session managers, the search index) "derive permissions from the root
//     vCenter Server system" (same page): their privileges are checked on
//     the root folder.
//   - Every role holds System.Anonymous, System.View and System.Read
//     (vSphere Security, "System Roles"; the simulator's
//     AddAuthorizationRole adds them the same way).
//   - A missing privilege answers NoPermission with the object and the
//     privilege (vim.fault.NoPermission: object, privilegeId), as vCenter
//     before 8.0 does.
//   - The property collector leaves out, without an error, the objects the
//     session may not read (System.Read): RetrievePropertiesEx and
//     ContinueRetrievePropertiesEx ("Any objects that the user is not
//     permitted to view are silently ignored", vSphere Web Services API,
//     PropertyCollector.RetrievePropertiesEx). WaitForUpdatesEx is not
//     filtered: the provider waits only on objects it created or read.
//   - A method the table below does not list is refused for the provider's
//     account (NotSupported, naming the method), never let through: the
//     sandbox models only what it checks.
//
// Each method's privileges are the "Required Privileges" of the vSphere
// Web Services API reference
// (https://developer.broadcom.com/xapis/vsphere-web-services-api/latest/)
// and, for a clone's placement, vSphere Security's "Required Privileges for
// Common Tasks" ("Deploy a virtual machine from a template"). This is the
// sandbox's own table: it imports nothing of the provider, and
// internal/vsphere's TestSandboxEnforcesTheDocumentedRoles holds its roles
// equal to the least-privilege guide's.

// Role is a vCenter role the provider's account holds: its name and
// privileges (System.Anonymous, System.View and System.Read are in every
// role, and not listed).
type Role struct {
	Name       string
	Privileges []string
}

// ReadOnlyRole is vCenter's system role "Read-only" (id -2): System.Anonymous,
// System.View and System.Read.
const ReadOnlyRole = "ReadOnly"

// Grant is a permission of the provider's account: Role on the object at
// Path (an inventory path; "/" is the root folder), propagating to its
// children or not.
type Grant struct {
	Role      string
	Path      string
	Propagate bool
}

// ProviderRoles are the roles of the least-privilege guide, split by
// object as Cluster API Provider vSphere's are (its CI grants one role on
// the folders and pools of its VMs, kubernetes/k8s.io
// infra/gcp/terraform/.../vsphere roles "capv-ci"): cloning and
// customizing only on the templates, a node's lifecycle only on the node
// folders, placement on the pool, datastore and network alone, and the DRS
// rule, the only cluster-wide privilege, in a role of its own.
var ProviderRoles = []Role{
	{Name: "windows-templates", Privileges: []string{
		"VirtualMachine.Provisioning.Clone", "VirtualMachine.Provisioning.Customize", "VirtualMachine.Provisioning.DeployTemplate",
	}},
	{Name: "windows-nodes", Privileges: nodePrivileges},
	{Name: "windows-golden-images", Privileges: sortedUnion(nodePrivileges, []string{
		"VirtualMachine.Provisioning.Clone", "VirtualMachine.Provisioning.Customize", "VirtualMachine.Provisioning.DeployTemplate",
		"VirtualMachine.Provisioning.MarkAsTemplate", "VirtualMachine.Config.Rename", "VirtualMachine.State.CreateSnapshot",
	})},
	{Name: "windows-resource-pool", Privileges: []string{"Resource.AssignVMToPool"}},
	{Name: "windows-datastore", Privileges: []string{"Datastore.AllocateSpace"}},
	{Name: "windows-network", Privileges: []string{"Network.Assign"}},
	{Name: "windows-anti-affinity", Privileges: []string{"Host.Inventory.EditCluster"}},
}

var nodePrivileges = []string{
	"Folder.Create", "Global.SetCustomField", "StorageProfile.Apply",
	"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.ObjectAttachable",
	"VirtualMachine.Config.AddNewDisk", "VirtualMachine.Config.AddRemoveDevice",
	"VirtualMachine.Config.AdvancedConfig", "VirtualMachine.Config.Annotation", "VirtualMachine.Config.CPUCount",
	"VirtualMachine.Config.DiskExtend", "VirtualMachine.Config.EditDevice", "VirtualMachine.Config.Memory", "VirtualMachine.Config.RemoveDisk",
	"VirtualMachine.GuestOperations.Execute", "VirtualMachine.GuestOperations.Modify", "VirtualMachine.GuestOperations.Query",
	"VirtualMachine.Interact.PowerOff", "VirtualMachine.Interact.PowerOn",
	"VirtualMachine.Inventory.CreateFromExisting", "VirtualMachine.Inventory.Delete",
}

func sortedUnion(a, b []string) []string {
	out := slices.Concat(a, b)
	sort.Strings(out)
	return slices.Compact(out)
}

// ProviderGrants places ProviderRoles on the sandbox's inventory, as the
// guide tells an administrator to: Read-only on the root folder (to find
// the datacenter) and, propagated, on the datacenter (the templates' and
// hosts' properties: a guest file transfer reads its ESXi host's name and
// certificate thumbprint, govmomi guest.FileManager.TransferURL); each
// other role on its object.
func (s *Server) ProviderGrants() []Grant {
	dc := "/" + s.Datacenter
	return []Grant{
		{Role: ReadOnlyRole, Path: "/"},
		{Role: ReadOnlyRole, Path: dc, Propagate: true},
		{Role: "windows-templates", Path: s.TemplateFolder, Propagate: true},
		{Role: "windows-nodes", Path: s.Folder, Propagate: true},
		{Role: "windows-golden-images", Path: s.GoldenFolder, Propagate: true},
		{Role: "windows-resource-pool", Path: clusterPoolPath},
		{Role: "windows-datastore", Path: dc + "/datastore/" + datastoreName},
		// The datastore cluster, propagated: Storage DRS may choose any of
		// its datastores (site.go).
		{Role: "windows-datastore", Path: dc + "/datastore/" + datastoreClusterName, Propagate: true},
		{Role: "windows-network", Path: dc + "/network/" + networkName},
		// The distributed port groups too: a configuration may put the
		// NIC on one (hashicorp/vsphere's forms, TestAccCompose_*).
		{Role: "windows-network", Path: dc + "/network/DC0_DVPG0"},
		{Role: "windows-network", Path: dc + "/network/DC0_DVPG1"},
		{Role: "windows-anti-affinity", Path: clusterPath},
	}
}

// authz is the enforcement's state: whose calls it checks.
type authz struct {
	user string // the provider's account; "" checks nobody
}

// check is one privilege a call needs on one object.
type check struct {
	privilege string
	on        types.ManagedObjectReference
}

// sessionMethods need only a session (System.Anonymous); viewMethods
// System.View, on the root folder (their objects are no entities).
var (
	sessionMethods = map[string]bool{
		"RetrieveServiceContent": true, "Login": true, "Logout": true, "SessionIsActive": true,
		"CreatePropertyCollector": true, "DestroyPropertyCollector": true, "DestroyPropertyFilter": true,
		"CancelWaitForUpdates": true, "DestroyCollector": true,
	}
	viewMethods = map[string]bool{
		"CreateFilter": true, "WaitForUpdatesEx": true, "WaitForUpdates": true,
		"CreateContainerView": true, "CreateListView": true, "ModifyListView": true, "ResetListView": true, "DestroyView": true,
		"FindByInventoryPath": true, "FindByUuid": true, "FindChild": true, "FindAllByUuid": true,
		"CreateCollectorForEvents": true, "ReadNextEvents": true, "ReadPreviousEvents": true, "RewindCollector": true,
		// A Storage DRS recommendation allocates nothing (the clone it
		// leads to is checked for the datastore it names).
		"RecommendDatastores": true,
	}
	// readMethods return properties, filtered by System.Read.
	readMethods = map[string]bool{"RetrievePropertiesEx": true, "ContinueRetrievePropertiesEx": true}
	// onThis: one privilege on the object called.
	onThis = map[string]string{
		"PowerOnVM_Task":                  "VirtualMachine.Interact.PowerOn",
		"PowerOffVM_Task":                 "VirtualMachine.Interact.PowerOff",
		"ShutdownGuest":                   "VirtualMachine.Interact.PowerOff",
		"MarkAsTemplate":                  "VirtualMachine.Provisioning.MarkAsTemplate",
		"Rename_Task":                     "VirtualMachine.Config.Rename",
		"CreateSnapshot_Task":             "VirtualMachine.State.CreateSnapshot",
		"CreateFolder":                    "Folder.Create",
		"ReconfigureComputeResource_Task": "Host.Inventory.EditCluster",
	}
	// guestMethods: the privilege on the VM the guest operation names
	// (vim.vm.guest.ProcessManager, FileManager: "Required Privileges").
	// onEntity: one privilege on the entity the request names
	// (CustomFieldsManager.SetField: "Required Privileges" Global.SetCustomField).
	onEntity     = map[string]string{"SetField": "Global.SetCustomField"}
	guestMethods = map[string]string{
		"StartProgramInGuest":           "VirtualMachine.GuestOperations.Execute",
		"TerminateProcessInGuest":       "VirtualMachine.GuestOperations.Execute",
		"ListProcessesInGuest":          "VirtualMachine.GuestOperations.Query",
		"InitiateFileTransferFromGuest": "VirtualMachine.GuestOperations.Query",
		"InitiateFileTransferToGuest":   "VirtualMachine.GuestOperations.Modify",
		"DeleteFileInGuest":             "VirtualMachine.GuestOperations.Modify",
	}
)

// Modelled reports whether the enforcement knows the privileges of method.
func Modelled(method string) bool {
	switch method {
	case "CloneVM_Task", "ReconfigVM_Task", "Destroy_Task":
		return true
	case "tag-association attach", "tag-association detach", "tag-association list-attached-tags":
		return true // the tagging API's, tagging.go
	}
	_, this := onThis[method]
	_, guest := guestMethods[method]
	_, entity := onEntity[method]
	return sessionMethods[method] || viewMethods[method] || readMethods[method] || this || guest || entity
}

// checks are the privileges method needs, on which objects; ok is false
// for a method the table does not model.
func (a *authz) checks(ctx *simulator.Context, m *simulator.Method) (_ []check, ok bool) {
	root := ctx.Map.Get(serviceInstance).(*simulator.ServiceInstance).Content.RootFolder
	switch {
	case sessionMethods[m.Name]:
		return []check{{"System.Anonymous", root}}, true
	case viewMethods[m.Name]:
		return []check{{"System.View", root}}, true
	case readMethods[m.Name]:
		return []check{{"System.Anonymous", root}}, true
	}
	if p, found := onThis[m.Name]; found {
		return []check{{p, m.This}}, true
	}
	if p, found := onEntity[m.Name]; found {
		req, isSet := m.Body.(*types.SetField)
		if !isSet {
			return nil, false
		}
		return []check{{p, req.Entity}}, true
	}
	if p, found := guestMethods[m.Name]; found {
		vm, has := guestVM(m.Body)
		if !has {
			return nil, false
		}
		return []check{{p, vm}}, true
	}
	switch m.Name {
	case "CloneVM_Task":
		req, isClone := m.Body.(*types.CloneVM_Task)
		if !isClone {
			return nil, false
		}
		return cloneChecks(ctx, m.This, req), true
	case "ReconfigVM_Task":
		req, isReconfig := m.Body.(*types.ReconfigVM_Task)
		if !isReconfig {
			return nil, false
		}
		var cs []check
		for _, p := range configPrivileges(&req.Spec) {
			cs = append(cs, check{p, m.This})
		}
		return cs, true
	case "Destroy_Task":
		// A VM: VirtualMachine.Inventory.Delete on it and on its parent
		// folder (Destroy_Task's "Required Privileges" for a VM). Other
		// entities are not modelled.
		if m.This.Type != "VirtualMachine" {
			return nil, false
		}
		cs := []check{{"VirtualMachine.Inventory.Delete", m.This}}
		if e, isEntity := ctx.Map.Get(m.This).(mo.Entity); isEntity && e.Entity().Parent != nil {
			cs = append(cs, check{"VirtualMachine.Inventory.Delete", *e.Entity().Parent})
		}
		return cs, true
	}
	return nil, false
}

var serviceInstance = types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}

// guestVM is the VM a guest operation's request names.
func guestVM(body any) (types.ManagedObjectReference, bool) {
	switch r := body.(type) {
	case *types.StartProgramInGuest:
		return r.Vm, true
	case *types.TerminateProcessInGuest:
		return r.Vm, true
	case *types.ListProcessesInGuest:
		return r.Vm, true
	case *types.InitiateFileTransferFromGuest:
		return r.Vm, true
	case *types.InitiateFileTransferToGuest:
		return r.Vm, true
	case *types.DeleteFileInGuest:
		return r.Vm, true
	}
	return types.ManagedObjectReference{}, false
}

// cloneChecks are CloneVM_Task's: VirtualMachine.Provisioning.Clone on
// the source, and DeployTemplate when it is a template; Customize on it for
// a customization spec; VirtualMachine.Inventory.CreateFromExisting and the
// config spec's VirtualMachine.Config privileges on the destination folder
// (the new VM does not exist yet); Resource.AssignVMToPool on the pool,
// Datastore.AllocateSpace on the datastore (the source's when the spec
// names none) and Network.Assign on each network a NIC is put on. (API
// reference, CloneVM_Task; vSphere Security, "Required Privileges for
// Common Tasks": "Deploy a virtual machine from a template".)
func cloneChecks(ctx *simulator.Context, source types.ManagedObjectReference, req *types.CloneVM_Task) []check {
	cs := []check{{"VirtualMachine.Provisioning.Clone", source}}
	src, _ := ctx.Map.Get(source).(*simulator.VirtualMachine)
	if src != nil && src.Config != nil && src.Config.Template {
		cs = append(cs, check{"VirtualMachine.Provisioning.DeployTemplate", source})
	}
	if req.Spec.Customization != nil {
		cs = append(cs, check{"VirtualMachine.Provisioning.Customize", source})
	}
	cs = append(cs, check{"VirtualMachine.Inventory.CreateFromExisting", req.Folder})
	if req.Spec.Config != nil {
		for _, p := range configPrivileges(req.Spec.Config) {
			cs = append(cs, check{p, req.Folder})
		}
	}
	switch {
	case req.Spec.Location.Pool != nil:
		cs = append(cs, check{"Resource.AssignVMToPool", *req.Spec.Location.Pool})
	case src != nil && src.ResourcePool != nil:
		cs = append(cs, check{"Resource.AssignVMToPool", *src.ResourcePool})
	}
	switch {
	case req.Spec.Location.Datastore != nil:
		cs = append(cs, check{"Datastore.AllocateSpace", *req.Spec.Location.Datastore})
	case src != nil && len(src.Datastore) > 0:
		cs = append(cs, check{"Datastore.AllocateSpace", src.Datastore[0]})
	}
	// A storage policy on the clone's home or disks: "Apply VM storage
	// policy" (vSphere Security, "VM Storage Policies Privileges").
	if len(req.Spec.Location.Profile) > 0 || slices.ContainsFunc(req.Spec.Location.Disk, func(d types.VirtualMachineRelocateSpecDiskLocator) bool { return len(d.Profile) > 0 }) {
		cs = append(cs, check{"StorageProfile.Apply", req.Folder})
	}
	for _, d := range req.Spec.Location.Disk {
		cs = append(cs, check{"Datastore.AllocateSpace", d.Datastore})
	}
	var changes []types.BaseVirtualDeviceConfigSpec
	if req.Spec.Config != nil {
		changes = req.Spec.Config.DeviceChange
	}
	changes = append(changes, req.Spec.Location.DeviceChange...)
	for _, net := range nicNetworks(ctx, changes) {
		cs = append(cs, check{"Network.Assign", net})
	}
	return cs
}

// nicNetworks are the networks the device changes put a NIC on.
func nicNetworks(ctx *simulator.Context, changes []types.BaseVirtualDeviceConfigSpec) []types.ManagedObjectReference {
	var out []types.ManagedObjectReference
	for _, c := range changes {
		nic, ok := c.GetVirtualDeviceConfigSpec().Device.(types.BaseVirtualEthernetCard)
		if !ok {
			continue
		}
		switch b := nic.GetVirtualEthernetCard().Backing.(type) {
		case *types.VirtualEthernetCardNetworkBackingInfo:
			if b.Network != nil {
				out = append(out, *b.Network)
			}
		case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
			for _, pg := range ctx.Map.All("DistributedVirtualPortgroup") {
				if p, ok := pg.(*simulator.DistributedVirtualPortgroup); ok && p.Key == b.Port.PortgroupKey {
					out = append(out, p.Self)
				}
			}
		}
	}
	return out
}

// configPrivileges are the VirtualMachine.Config privileges of a config
// spec's changes (vSphere Security, "Virtual Machine Configuration
// Privileges"): CPUs, memory, extraConfig (Advanced configuration), the
// annotation (Set annotation), the name (Rename), and per device change:
// a disk removed (Remove disk), grown (Extend virtual disk) or added (Add
// new disk), another device edited (Modify device settings) or added or
// removed (Add or remove device). Any other field counts as "Change
// Settings" (VirtualMachine.Config.Settings), which the provider's roles
// do not hold.
func configPrivileges(spec *types.VirtualMachineConfigSpec) []string {
	set := map[string]bool{}
	if spec.NumCPUs != 0 || spec.NumCoresPerSocket != nil {
		set["VirtualMachine.Config.CPUCount"] = true
	}
	if spec.MemoryMB != 0 {
		set["VirtualMachine.Config.Memory"] = true
	}
	if len(spec.ExtraConfig) > 0 {
		set["VirtualMachine.Config.AdvancedConfig"] = true
	}
	if spec.Annotation != "" {
		set["VirtualMachine.Config.Annotation"] = true
	}
	if spec.Name != "" {
		set["VirtualMachine.Config.Rename"] = true
	}
	if len(spec.VmProfile) > 0 {
		set["StorageProfile.Apply"] = true
	}
	for _, c := range spec.DeviceChange {
		dc := c.GetVirtualDeviceConfigSpec()
		if len(dc.Profile) > 0 {
			set["StorageProfile.Apply"] = true
		}
		_, disk := dc.Device.(*types.VirtualDisk)
		switch {
		case disk && dc.Operation == types.VirtualDeviceConfigSpecOperationRemove:
			set["VirtualMachine.Config.RemoveDisk"] = true
		case disk && dc.Operation == types.VirtualDeviceConfigSpecOperationEdit:
			set["VirtualMachine.Config.DiskExtend"] = true
		case disk:
			set["VirtualMachine.Config.AddNewDisk"] = true
		case dc.Operation == types.VirtualDeviceConfigSpecOperationEdit:
			set["VirtualMachine.Config.EditDevice"] = true
		default:
			set["VirtualMachine.Config.AddRemoveDevice"] = true
		}
	}
	// The fields above, the ones a clone carries that change nothing
	// (Uuid, InstanceUuid: the sandbox's own fix, fidelity.go), and
	// DeviceChange are modelled; anything else needs Change Settings.
	rest := *spec
	rest.NumCPUs, rest.NumCoresPerSocket, rest.MemoryMB, rest.ExtraConfig, rest.Annotation, rest.Name = 0, nil, 0, nil, "", ""
	rest.VmProfile = nil
	rest.DeviceChange, rest.Uuid, rest.InstanceUuid = nil, "", ""
	if !isZeroConfig(&rest) {
		set["VirtualMachine.Config.Settings"] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func isZeroConfig(spec *types.VirtualMachineConfigSpec) bool {
	return reflect.ValueOf(*spec).IsZero()
}

// privileges are the privileges user holds on ref, from the permissions
// and roles the simulator's AuthorizationManager holds.
func (a *authz) privileges(ctx *simulator.Context, user string, ref types.ManagedObjectReference) map[string]bool {
	am := ctx.Map.Get(*ctx.Map.Get(serviceInstance).(*simulator.ServiceInstance).Content.AuthorizationManager).(*simulator.AuthorizationManager)
	var perms []types.Permission
	roles := map[int32][]string{}
	ctx.WithLock(am, func() {
		if body, ok := am.RetrieveAllPermissions(&types.RetrieveAllPermissions{}).(*methods.RetrieveAllPermissionsBody); ok && body.Res != nil {
			perms = body.Res.Returnval
		}
		for _, r := range am.RoleList {
			roles[r.RoleId] = slices.Clone(r.Privilege)
		}
	})
	byEntity := map[types.ManagedObjectReference]types.Permission{}
	for _, p := range perms {
		if p.Entity != nil && !p.Group && p.Principal == user {
			byEntity[*p.Entity] = p
		}
	}
	out := map[string]bool{}
	grant := func(p types.Permission) {
		for _, id := range roles[p.RoleId] {
			out[id] = true
		}
	}
	if p, ok := byEntity[ref]; ok {
		grant(p)
		return out
	}
	e, ok := ctx.Map.Get(ref).(mo.Entity)
	if !ok {
		return out
	}
	starts := []*types.ManagedObjectReference{e.Entity().Parent}
	if vm, isVM := e.(*simulator.VirtualMachine); isVM {
		starts = append(starts, vm.ResourcePool)
	}
	for _, start := range starts {
		for cur := start; cur != nil; {
			if p, ok := byEntity[*cur]; ok && p.Propagate {
				grant(p)
				break
			}
			parent, ok := ctx.Map.Get(*cur).(mo.Entity)
			if !ok {
				break
			}
			cur = parent.Entity().Parent
		}
	}
	return out
}

// authorize checks a call of the provider's account: nil lets it run, a
// handler answers it with the refusal instead.
func (a *authz) authorize(ctx *simulator.Context, m *simulator.Method) mo.Reference {
	if a == nil || a.user == "" || ctx.Session == nil || ctx.Session.UserName != a.user {
		return nil
	}
	cs, ok := a.checks(ctx, m)
	if !ok {
		return a.deny(m, simulator.Fault(fmt.Sprintf("the sandbox's vCenter does not model the privileges of %s, so it refuses it for %s "+
			"(internal/sandbox/vcsim/authz.go)", m.Name, a.user), &types.NotSupported{}))
	}
	held := map[types.ManagedObjectReference]map[string]bool{}
	for _, c := range cs {
		if held[c.on] == nil {
			held[c.on] = a.privileges(ctx, a.user, c.on)
		}
		if !held[c.on][c.privilege] {
			on := c.on
			return a.deny(m, simulator.Fault("Permission to perform this operation was denied.",
				&types.NoPermission{Object: &on, PrivilegeId: c.privilege}))
		}
	}
	if readMethods[m.Name] {
		return a.filterReads(ctx, m)
	}
	return nil
}

// deny points the call at a handler that answers f (a fault returned by
// Registry.Handler itself reaches clients without its message).
func (a *authz) deny(m *simulator.Method, f *soap.Fault) mo.Reference {
	m.This = types.ManagedObjectReference{Type: m.This.Type, Value: "sandbox-denied-" + m.This.Value}
	m.Name = "Deny"
	return &denial{self: m.This, fault: f}
}

type denial struct {
	self  types.ManagedObjectReference
	fault *soap.Fault
}

func (d *denial) Reference() types.ManagedObjectReference { return d.self }

// Deny is called by the simulator in place of the refused method.
func (d *denial) Deny(*simulator.Context, any) soap.HasFault { return &faultBody{Fault_: d.fault} }

type faultBody struct {
	Fault_ *soap.Fault `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *faultBody) Fault() *soap.Fault { return b.Fault_ }

// filterReads runs a property collector's retrieval and leaves out the
// objects the session may not read.
func (a *authz) filterReads(ctx *simulator.Context, m *simulator.Method) mo.Reference {
	pc, ok := ctx.Session.Get(m.This).(*simulator.PropertyCollector)
	if !ok {
		if pc, ok = ctx.Map.Get(m.This).(*simulator.PropertyCollector); !ok {
			return nil
		}
	}
	m.This = types.ManagedObjectReference{Type: m.This.Type, Value: "sandbox-authz-" + m.This.Value}
	return &readFilter{self: m.This, pc: pc, a: a}
}

type readFilter struct {
	self types.ManagedObjectReference
	pc   *simulator.PropertyCollector
	a    *authz
}

func (r *readFilter) Reference() types.ManagedObjectReference { return r.self }

// Lock and Unlock: the collector itself takes no lock for its calls
// (simulator.PropertyCollector embeds a no-op locker); neither does this.
func (r *readFilter) Lock()   {}
func (r *readFilter) Unlock() {}

func (r *readFilter) RetrievePropertiesEx(ctx *simulator.Context, req *types.RetrievePropertiesEx) soap.HasFault {
	res := r.pc.RetrievePropertiesEx(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesExBody); ok && body.Res != nil && body.Res.Returnval != nil {
		body.Res.Returnval.Objects = r.readable(ctx, body.Res.Returnval.Objects)
	}
	return res
}

func (r *readFilter) ContinueRetrievePropertiesEx(ctx *simulator.Context, req *types.ContinueRetrievePropertiesEx) soap.HasFault {
	res := r.pc.ContinueRetrievePropertiesEx(ctx, req)
	if body, ok := res.(*methods.ContinueRetrievePropertiesExBody); ok && body.Res != nil {
		body.Res.Returnval.Objects = r.readable(ctx, body.Res.Returnval.Objects)
	}
	return res
}

// readable leaves out the entities without System.Read; objects that are
// no entities (tasks, views) are the session's own.
func (r *readFilter) readable(ctx *simulator.Context, objs []types.ObjectContent) []types.ObjectContent {
	out := objs[:0]
	for _, o := range objs {
		if _, isEntity := ctx.Map.Get(o.Obj).(mo.Entity); isEntity && !r.a.privileges(ctx, r.a.user, o.Obj)["System.Read"] {
			continue
		}
		out = append(out, o)
	}
	return out
}

// RoleNames is ProviderRoles by name.
func RoleNames() map[string]Role {
	out := map[string]Role{}
	for _, r := range ProviderRoles {
		out[r.Name] = r
	}
	return out
}

// grantProvider creates ProviderRoles and the provider account's
// permissions (providerGrants) through the vSphere API, as an
// administrator does, and gives the sandbox's administrator the Admin role
// on the root folder (vCenter's administrator@vsphere.local holds it).
func (s *Server) grantProvider(ctx context.Context, c *vim25.Client) error {
	am := object.NewAuthorizationManager(c)
	for _, r := range ProviderRoles {
		if _, err := am.AddRole(ctx, r.Name, r.Privileges); err != nil {
			return fmt.Errorf("vcsim: creating role %s: %w", r.Name, err)
		}
	}
	list, err := am.RoleList(ctx)
	if err != nil {
		return fmt.Errorf("vcsim: reading the roles: %w", err)
	}
	root := c.ServiceContent.RootFolder
	grants := []struct {
		Grant
		user string
	}{{Grant{Role: "Admin", Path: "/", Propagate: true}, s.User}}
	for _, g := range s.ProviderGrants() {
		grants = append(grants, struct {
			Grant
			user string
		}{g, s.ProviderUser})
	}
	si := object.NewSearchIndex(c)
	for _, g := range grants {
		role := list.ByName(g.Role)
		if role == nil {
			return fmt.Errorf("vcsim: no role %s", g.Role)
		}
		entity := root
		if g.Path != "/" {
			ref, err := si.FindByInventoryPath(ctx, g.Path)
			if err != nil || ref == nil {
				return fmt.Errorf("vcsim: finding %s to grant %s on it: %v", g.Path, g.Role, err)
			}
			entity = ref.Reference()
		}
		perms, err := am.RetrieveEntityPermissions(ctx, entity, false)
		if err != nil {
			return fmt.Errorf("vcsim: reading the permissions of %s: %w", g.Path, err)
		}
		perms = append(perms, types.Permission{Entity: &entity, Principal: g.user, RoleId: role.RoleId, Propagate: g.Propagate})
		if err := am.SetEntityPermissions(ctx, entity, perms); err != nil {
			return fmt.Errorf("vcsim: granting %s: %w", describeGrant(g.Grant), err)
		}
		if g.user == s.ProviderUser {
			s.logf("vcsim: %s holds %s", g.user, describeGrant(g.Grant))
		}
	}
	return nil
}

// describeGrant is a grant as the sandbox's log says it.
func describeGrant(g Grant) string {
	p := "not propagated"
	if g.Propagate {
		p = "propagated"
	}
	return fmt.Sprintf("%s on %s (%s)", g.Role, g.Path, p)
}
