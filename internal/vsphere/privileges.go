package vsphere

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Privilege is what one vSphere API method the provider calls requires,
// from the "Required Privilege" of the method in VMware's vSphere Web
// Services API reference (https://developer.broadcom.com/xapis/vsphere-web-services-api/latest/),
// and on which object.
type Privilege struct {
	// Privileges are the privilege ids (as a role lists them).
	Privileges []string
	// On says which object the privileges are checked on.
	On string
	// Resources are the provider's resources and data sources that call it;
	// "provider" stands for any. The acceptance tests record the calls of
	// each resource (by operationID, WithOperation) and fail on a resource
	// missing here (CheckResourcePrivileges).
	Resources []string
}

// Resource groups, for Privilege.Resources.
var (
	allResources  = []string{"provider"}
	machines      = []string{"windows_node", "windows_node_pool", "windows_golden_image"}
	goldenImage   = []string{"windows_golden_image"}
	readsMachines = []string{"windows_node", "windows_node_pool", "windows_golden_image", "windows_node (list)", "windows_update_status"}
	// findsMachines: a VM named by its UUID (FindVM) is looked up through
	// the search index.
	findsMachines = append(slices.Clone(machines), "windows_update_status")
)

// PrivilegesFile is this file, which a method missing from MethodPrivileges
// must be added to.
const PrivilegesFile = "internal/vsphere/privileges.go"

// MethodPrivileges maps every vSphere API method the provider calls to its
// privileges. The acceptance tests record every method the provider's
// sessions call in the sandbox (vcsim counts them by user agent) and fail
// on one missing here (acctest.Main, CheckPrivileges); the least-privilege
// guide's vSphere table is generated from it (TestPrivilegesGuide).
//
// The recorded acceptance runs (node, pool, image, import, fault and
// credential tests) called 21 of these. The other five are on paths those
// runs did not take, read from the code: RetrieveServiceContent and Login
// (before a session exists, so not counted by user agent),
// ContinueRetrievePropertiesEx (when vCenter splits an answer),
// ResetListView (the shared watch after an error), Rename_Task; and
// TerminateProcessInGuest (a vmtools step cancelled) and
// InitiateFileTransferToGuest (a vmtools script too long for a command line).
// Since then: FindChild (every node create), RemoveDisk in ReconfigVM_Task
// (a destroy of a VM with an added disk), CreateCollectorForEvents and
// DestroyCollector (a vCenter older than 7.0U2, which vcsim is not).
var MethodPrivileges = map[string]Privilege{
	// Sessions and reads. Every object the provider reads also needs
	// System.Read on it (the Read-only role): the property collector leaves
	// out, without an error, what the session may not read.
	"RetrieveServiceContent": {Privileges: []string{"System.Anonymous"}, On: "the service instance", Resources: allResources},
	"Login":                  {Privileges: []string{"System.Anonymous"}, On: "the session manager", Resources: allResources},
	// The provider process logs out when Terraform is done with it (main.go).
	"Logout":               {Privileges: []string{"System.Anonymous"}, On: "the session manager", Resources: allResources},
	"RetrievePropertiesEx": {Privileges: []string{"System.Anonymous", "System.Read"}, On: "the property collector; System.Read on each object read", Resources: allResources},
	"ContinueRetrievePropertiesEx": {Privileges: []string{"System.Anonymous", "System.Read"}, On: "the property collector; System.Read on each object read",
		Resources: readsMachines},
	"CreatePropertyCollector":  {Privileges: []string{"System.Anonymous"}, On: "the property collector", Resources: machines},
	"DestroyPropertyCollector": {Privileges: []string{"System.Anonymous"}, On: "the session's property collector", Resources: machines},
	"CreateFilter":             {Privileges: []string{"System.View"}, On: "the property collector", Resources: machines},
	"WaitForUpdatesEx":         {Privileges: []string{"System.View"}, On: "the property collector", Resources: machines},
	"CreateContainerView":      {Privileges: []string{"System.View"}, On: "the view manager", Resources: readsMachines},
	"CreateListView":           {Privileges: []string{"System.View"}, On: "the view manager", Resources: machines},
	"ModifyListView":           {Privileges: []string{"System.View"}, On: "the list view", Resources: machines},
	"ResetListView":            {Privileges: []string{"System.View"}, On: "the list view", Resources: machines},
	"DestroyView":              {Privileges: []string{"System.View"}, On: "the view", Resources: readsMachines},
	"FindByInventoryPath":      {Privileges: []string{"System.View"}, On: "the search index", Resources: readsMachines},
	"FindByUuid":               {Privileges: []string{"System.View"}, On: "the search index", Resources: findsMachines},
	// A node's create looks for an earlier clone of it (one its create
	// never recorded) at the clone's place: FindVMInFolder.
	"FindChild": {Privileges: []string{"System.View"}, On: "the search index", Resources: machines},
	// The customization wait of a vCenter older than 7.0U2 reads the VM's
	// events (vsphere.waitForCustomizationEvents). CreateCollectorForEvents
	// needs System.View (its "Required Privileges" in the API reference);
	// DestroyCollector removes the session's own collector, as
	// DestroyPropertyCollector does its own.
	"CreateCollectorForEvents": {Privileges: []string{"System.View"}, On: "the event manager", Resources: machines},
	"DestroyCollector":         {Privileges: []string{"System.Anonymous"}, On: "the session's event history collector", Resources: machines},

	// Machines.
	"CreateFolder": {Privileges: []string{"Folder.Create"}, On: "the parent folder of a VM folder that does not exist yet", Resources: machines},
	// CloneVM_Task: VirtualMachine.Provisioning.Clone on the source, and,
	// as the reference lists with it: DeployTemplate when the source is a
	// template, CreateFromExisting on the folder, AssignVMToPool on the
	// pool, AllocateSpace on the datastore, Network.Assign on the network
	// of a changed NIC, Customize for a customization spec, and the
	// VirtualMachine.Config privileges of the config spec (CPUs, memory,
	// extraConfig: the clone's marks and source disks; the grown disk, the
	// NIC; the annotation, whose privilege is "Set annotation",
	// VirtualMachine.Config.Annotation, in vSphere's "Virtual Machine Change
	// Configuration Privileges", not Config.Rename).
	"CloneVM_Task": {Privileges: []string{
		"VirtualMachine.Provisioning.Clone", "VirtualMachine.Provisioning.DeployTemplate", "VirtualMachine.Provisioning.Customize",
		"VirtualMachine.Inventory.CreateFromExisting", "Resource.AssignVMToPool", "Datastore.AllocateSpace", "Network.Assign",
		"VirtualMachine.Config.CPUCount", "VirtualMachine.Config.Memory", "VirtualMachine.Config.AdvancedConfig",
		"VirtualMachine.Config.DiskExtend", "VirtualMachine.Config.EditDevice", "VirtualMachine.Config.Annotation",
		// The extra disks ("Add new disk"), the extra NICs ("Add or remove
		// device"), a storage_policy_id (vSphere Security, "VM Storage
		// Policies Privileges": "Apply VM storage policy").
		"VirtualMachine.Config.AddNewDisk", "VirtualMachine.Config.AddRemoveDevice", "StorageProfile.Apply",
	}, On: "the source template (Clone, DeployTemplate, Customize); the destination folder (CreateFromExisting, and the Config privileges of the new VM); the resource pool; the datastore; the network", Resources: machines},
	// Storage DRS's placement of a clone in a datastore cluster
	// (datastore_cluster_id): a recommendation only, which allocates
	// nothing; the clone then needs Datastore.AllocateSpace on the
	// datastore recommended. Modelled as System.View on the storage
	// resource manager, which is no entity.
	"RecommendDatastores": {Privileges: []string{"System.View"}, On: "the storage resource manager", Resources: machines},
	// tags: the tagging API (REST, not SOAP: vCenter's tag-association
	// attach and detach), "Assign or Unassign vSphere Tag" and "Assign or
	// Unassign vSphere Tag on Object" (vSphere Security, "vSphere Tagging
	// Privileges"), on the VM.
	"tag-association attach": {Privileges: []string{"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.ObjectAttachable"}, On: "the VM", Resources: machines},
	"tag-association detach": {Privileges: []string{"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.ObjectAttachable"}, On: "the VM", Resources: machines},
	// A node's refresh reads its tags back (when it sets tags): the
	// tagging API's list_attached_tags needs "the read privilege on the
	// input object" (vSphere Automation API, Tagging Tag Association).
	"tag-association list-attached-tags": {Privileges: []string{"System.Read"}, On: "the VM", Resources: []string{"windows_node"}},
	// custom_attributes: CustomFieldsManager.SetField's "Required
	// Privileges" (Global.SetCustomField), on the VM.
	"SetField": {Privileges: []string{"Global.SetCustomField"}, On: "the VM", Resources: machines},
	// ReconfigVM_Task: the VirtualMachine.Config privilege of each change
	// the spec makes: CPUs and memory (hardware changes), extraConfig (the
	// provider's markers), growing a disk (DiskExtend: "Extend virtual
	// disk"), removing the disks a VM did not get from its template before
	// it is destroyed (RemoveDisk: "Remove disk").
	// And the annotation changed in place ("Set annotation").
	"ReconfigVM_Task": {Privileges: []string{"VirtualMachine.Config.CPUCount", "VirtualMachine.Config.Memory", "VirtualMachine.Config.AdvancedConfig", "VirtualMachine.Config.DiskExtend", "VirtualMachine.Config.RemoveDisk", "VirtualMachine.Config.Annotation"},
		On: "the VM", Resources: machines},
	"PowerOnVM_Task":      {Privileges: []string{"VirtualMachine.Interact.PowerOn"}, On: "the VM", Resources: machines},
	"PowerOffVM_Task":     {Privileges: []string{"VirtualMachine.Interact.PowerOff"}, On: "the VM", Resources: machines},
	"ShutdownGuest":       {Privileges: []string{"VirtualMachine.Interact.PowerOff"}, On: "the VM", Resources: machines},
	"Destroy_Task":        {Privileges: []string{"VirtualMachine.Inventory.Delete"}, On: "the VM and its parent folder", Resources: machines},
	"MarkAsTemplate":      {Privileges: []string{"VirtualMachine.Provisioning.MarkAsTemplate"}, On: "the VM", Resources: goldenImage},
	"Rename_Task":         {Privileges: []string{"VirtualMachine.Config.Rename"}, On: "the VM", Resources: goldenImage},
	"CreateSnapshot_Task": {Privileges: []string{"VirtualMachine.State.CreateSnapshot"}, On: "the VM", Resources: goldenImage},
	// Guests reached through vCenter (transport type "vmtools":
	// internal/remote/vmtools.go), checked on the VM.
	"StartProgramInGuest":           {Privileges: []string{"VirtualMachine.GuestOperations.Execute"}, On: "the VM (transport vmtools)", Resources: machines},
	"TerminateProcessInGuest":       {Privileges: []string{"VirtualMachine.GuestOperations.Execute"}, On: "the VM (transport vmtools, a cancelled step)", Resources: machines},
	"ListProcessesInGuest":          {Privileges: []string{"VirtualMachine.GuestOperations.Query"}, On: "the VM (transport vmtools)", Resources: machines},
	"InitiateFileTransferFromGuest": {Privileges: []string{"VirtualMachine.GuestOperations.Query"}, On: "the VM (transport vmtools)", Resources: machines},
	"InitiateFileTransferToGuest":   {Privileges: []string{"VirtualMachine.GuestOperations.Modify"}, On: "the VM (transport vmtools)", Resources: machines},
	"DeleteFileInGuest":             {Privileges: []string{"VirtualMachine.GuestOperations.Modify"}, On: "the VM (transport vmtools)", Resources: machines},

	// A pool's anti-affinity rule (DRS).
	"ReconfigureComputeResource_Task": {Privileges: []string{"Host.Inventory.EditCluster"}, On: "the cluster", Resources: []string{"windows_node_pool"}},
}

// Role is one vCenter role of the least-privilege guide, and where an
// administrator grants it to the provider's user. The split follows
// Cluster API Provider vSphere's: cloning and customizing only where the
// templates are, a VM's lifecycle only in the folders of the provider's
// VMs, placement on the pool, datastore and network alone, and nothing
// cluster-wide but the optional DRS rule. A node VM therefore cannot be
// cloned or customized by the provider's user (it would give a copy of a
// running node, its kubelet's key reachable over guest operations, a new
// Administrator password), nor any VM outside those folders be changed.
type Role struct {
	Name string
	// On is the object it is granted on; Propagate whether to its children.
	On        string
	Propagate bool
	// Privileges, besides System.Anonymous, System.View and System.Read
	// (in every role).
	Privileges []string
	// When it is needed; "" is always.
	When string
}

var (
	cloneFromHere = []string{"VirtualMachine.Provisioning.Clone", "VirtualMachine.Provisioning.Customize", "VirtualMachine.Provisioning.DeployTemplate"}
	nodeLifecycle = []string{
		"Folder.Create",
		"Global.SetCustomField", "StorageProfile.Apply",
		"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.ObjectAttachable",
		"VirtualMachine.Config.AddNewDisk", "VirtualMachine.Config.AddRemoveDevice",
		"VirtualMachine.Config.AdvancedConfig", "VirtualMachine.Config.Annotation", "VirtualMachine.Config.CPUCount",
		"VirtualMachine.Config.DiskExtend", "VirtualMachine.Config.EditDevice", "VirtualMachine.Config.Memory", "VirtualMachine.Config.RemoveDisk",
		"VirtualMachine.GuestOperations.Execute", "VirtualMachine.GuestOperations.Modify", "VirtualMachine.GuestOperations.Query",
		"VirtualMachine.Interact.PowerOff", "VirtualMachine.Interact.PowerOn",
		"VirtualMachine.Inventory.CreateFromExisting", "VirtualMachine.Inventory.Delete",
	}
	goldenImages = sortedSet(nodeLifecycle, cloneFromHere,
		[]string{"VirtualMachine.Provisioning.MarkAsTemplate", "VirtualMachine.Config.Rename", "VirtualMachine.State.CreateSnapshot"})
)

// Roles are the guide's roles, each granted to the provider's user on its
// object. The sandbox's vCenter grants exactly these and checks every call
// against them (internal/sandbox/vcsim/authz.go keeps its own copy;
// TestSandboxEnforcesTheDocumentedRoles holds the two equal).
var Roles = []Role{
	{Name: "ReadOnly", On: "the vCenter root folder", Privileges: nil,
		When: "always (the system role Read-only: the provider finds the datacenter from the root)"},
	{Name: "ReadOnly", On: "the datacenter", Propagate: true, Privileges: nil,
		When: "always (the system role Read-only: the provider reads the templates, placement and ESXi hosts; a guest file transfer (transport vmtools) reads its host's name and certificate thumbprint)"},
	{Name: "windows-templates", On: "the folder of the base templates (a golden image's `source_template`, a node's template)", Propagate: true, Privileges: cloneFromHere},
	{Name: "windows-nodes", On: "each node folder (`folder` of windows_node and windows_node_pool)", Propagate: true, Privileges: nodeLifecycle},
	{Name: "windows-golden-images", On: "the folder of the golden images (`folder` of windows_golden_image): build VMs, and the templates nodes clone", Propagate: true, Privileges: goldenImages,
		When: "with windows_golden_image"},
	{Name: "windows-resource-pool", On: "each resource pool VMs are placed in", Privileges: []string{"Resource.AssignVMToPool"}},
	{Name: "windows-datastore", On: "each datastore VMs are placed on", Privileges: []string{"Datastore.AllocateSpace"}},
	{Name: "windows-datastore", On: "each datastore cluster of a `datastore_cluster_id`, propagated to its datastores (any of which Storage DRS may choose)", Propagate: true,
		Privileges: []string{"Datastore.AllocateSpace"}, When: "with `datastore_cluster_id`"},
	{Name: "windows-network", On: "each network (port group) a NIC is put on", Privileges: []string{"Network.Assign"}},
	{Name: "windows-anti-affinity", On: "the DRS cluster of a pool's resource pool", Privileges: []string{"Host.Inventory.EditCluster"},
		When: "only for a windows_node_pool with `anti_affinity = true` (its DRS rule); without it, grant nothing on the cluster"},
}

func sortedSet(lists ...[]string) []string {
	out := slices.Concat(lists...)
	sort.Strings(out)
	return slices.Compact(out)
}

// RolesMarkdown renders the guide's table of roles.
func RolesMarkdown() string {
	var b strings.Builder
	b.WriteString("| Role | Granted on | Propagate | Privileges | When |\n|---|---|---|---|---|\n")
	for _, r := range Roles {
		privs := "`System.Anonymous`, `System.View`, `System.Read`"
		if len(r.Privileges) > 0 {
			privs = "`" + strings.Join(r.Privileges, "`, `") + "`"
		}
		when := r.When
		if when == "" {
			when = "always"
		}
		prop := "no"
		if r.Propagate {
			prop = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Name, r.On, prop, privs, when)
	}
	return b.String()
}

// MissingPrivileges returns the recorded methods that MethodPrivileges
// lacks, sorted.
func MissingPrivileges(recorded map[string]int64) []string {
	var missing []string
	for m := range recorded {
		if _, ok := MethodPrivileges[m]; !ok {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	return missing
}

// CheckPrivileges fails when the provider called a vSphere method whose
// privileges are not documented.
func CheckPrivileges(recorded map[string]int64) error {
	missing := MissingPrivileges(recorded)
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("the provider called vSphere method(s) %s, whose required privileges are not documented: "+
		"add each to MethodPrivileges in %s (its \"Required Privilege\" in the vSphere Web Services API reference), "+
		"then run `go test ./internal/vsphere -run TestPrivilegesGuide -update` to regenerate the guide",
		strings.Join(missing, ", "), PrivilegesFile)
}

// CheckResourcePrivileges fails when a resource called a method whose
// MethodPrivileges entry does not name it among its Resources (the guide
// would leave the method's privileges out of that resource's row).
// byOperation is the provider's calls by operationID (WithOperation); calls
// without one are the provider's own, not one resource's (its login, its
// shared watch of tasks and VMs), and CheckPrivileges covers them. It
// returns the methods each resource was seen calling, sorted.
func CheckResourcePrivileges(byOperation map[string]map[string]int64) (map[string][]string, error) {
	called := map[string]map[string]bool{}
	for id, methods := range byOperation {
		label, ok := OperationResource(id)
		if !ok {
			continue
		}
		if called[label] == nil {
			called[label] = map[string]bool{}
		}
		for m := range methods {
			called[label][m] = true
		}
	}
	seen := map[string][]string{}
	var undocumented []string
	for label, methods := range called {
		for m := range methods {
			seen[label] = append(seen[label], m)
			p, ok := MethodPrivileges[m]
			if ok && !slices.Contains(p.Resources, label) && !slices.Contains(p.Resources, "provider") {
				undocumented = append(undocumented, label+" calls "+m)
			}
		}
		sort.Strings(seen[label])
	}
	if len(undocumented) == 0 {
		return seen, nil
	}
	sort.Strings(undocumented)
	return seen, fmt.Errorf("%s, which MethodPrivileges in %s does not list among the method's Resources: "+
		"add the resource there, then run `go test ./internal/vsphere -run TestPrivilegesGuide -update` to regenerate the guide",
		strings.Join(undocumented, "; "), PrivilegesFile)
}

// RolePrivileges is every privilege of MethodPrivileges, sorted: the role.
// System.Anonymous, System.View and System.Read belong to every role.
func RolePrivileges() []string {
	set := map[string]bool{}
	for _, p := range MethodPrivileges {
		for _, id := range p.Privileges {
			set[id] = true
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// PrivilegesMarkdown renders the guide's vSphere tables: the role's
// privileges with the methods and resources needing each, then every
// method.
func PrivilegesMarkdown() string {
	var b strings.Builder
	byPriv := map[string][]string{}
	resByPriv := map[string]map[string]bool{}
	for m, p := range MethodPrivileges {
		for _, id := range p.Privileges {
			byPriv[id] = append(byPriv[id], m)
			if resByPriv[id] == nil {
				resByPriv[id] = map[string]bool{}
			}
			for _, r := range p.Resources {
				resByPriv[id][r] = true
			}
		}
	}
	b.WriteString("The roles, each granted to the provider's user on its object:\n\n")
	b.WriteString(RolesMarkdown())
	b.WriteString("\nEvery privilege, with the resources and methods that need it:\n\n")
	b.WriteString("| Privilege | Needed by | Methods |\n|---|---|---|\n")
	for _, id := range RolePrivileges() {
		var res []string
		for r := range resByPriv[id] {
			res = append(res, r)
		}
		sort.Strings(res)
		ms := byPriv[id]
		sort.Strings(ms)
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", id, strings.Join(res, ", "), strings.Join(ms, "`, `"))
	}
	b.WriteString("\n<details><summary>Every method, with the object its privileges are checked on</summary>\n\n")
	b.WriteString("| Method | Privileges | On |\n|---|---|---|\n")
	methods := make([]string, 0, len(MethodPrivileges))
	for m := range MethodPrivileges {
		methods = append(methods, m)
	}
	slices.Sort(methods)
	for _, m := range methods {
		p := MethodPrivileges[m]
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", m, "`"+strings.Join(p.Privileges, "`, `")+"`", p.On)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}
