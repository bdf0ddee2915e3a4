package vsphere

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Managed object types the finders return.
const (
	TypeVirtualMachine = "VirtualMachine"
	TypeResourcePool   = "ResourcePool"
	TypeDatastore      = "Datastore"
	TypeNetwork        = "Network"
	TypeDVPortgroup    = "DistributedVirtualPortgroup"
	TypeOpaqueNetwork  = "OpaqueNetwork"
	TypeHostSystem     = "HostSystem"
	TypeFolder         = "Folder"
	TypeStoragePod     = "StoragePod"
)

// kindNames name managed object types in messages.
var kindNames = map[string]string{
	TypeVirtualMachine: "virtual machine",
	TypeResourcePool:   "resource pool",
	"VirtualApp":       "vApp",
	TypeDatastore:      "datastore",
	TypeNetwork:        "network",
	TypeDVPortgroup:    "distributed port group",
	TypeOpaqueNetwork:  "opaque network",
	TypeHostSystem:     "host",
	TypeFolder:         "folder",
	TypeStoragePod:     "datastore cluster",
}

func kindName(typ string) string {
	if k, ok := kindNames[typ]; ok {
		return k
	}
	return typ
}

// VMRef returns the reference of the virtual machine (or template) with
// managed object id id ("vm-42").
func VMRef(id string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: TypeVirtualMachine, Value: id}
}

// NetworkRef returns the reference of a network by managed object id, the
// type following vCenter's id prefixes: "dvportgroup-" is a distributed port
// group, everything else a standard network (hashicorp/vsphere's
// vsphere_network data source returns either).
func NetworkRef(id string) types.ManagedObjectReference {
	switch {
	case strings.HasPrefix(id, "dvportgroup-"):
		return types.ManagedObjectReference{Type: TypeDVPortgroup, Value: id}
	default:
		return types.ManagedObjectReference{Type: TypeNetwork, Value: id}
	}
}

// FindByID returns the object of type typ with managed object id id, after
// checking that it exists (one round trip). A missing object is a
// *NotFoundError. For networks use FindNetworkByID, which knows the types a
// network id can have.
func (c *Client) FindByID(ctx context.Context, typ, id string) (types.ManagedObjectReference, error) {
	ref := types.ManagedObjectReference{Type: typ, Value: id}
	if id == "" {
		return ref, fmt.Errorf("no %s id given", kindName(typ))
	}
	var e mo.ManagedEntity
	if err := property.DefaultCollector(c.Client.Client).RetrieveOne(ctx, ref, []string{"name"}, &e); err != nil {
		return ref, notFoundOr(err, kindName(typ), ref, "looking up")
	}
	return ref, nil
}

// FindVMByID returns the virtual machine or template with managed object id id.
func (c *Client) FindVMByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return c.FindByID(ctx, TypeVirtualMachine, id)
}

// FindResourcePoolByID returns the resource pool with managed object id id
// (hashicorp/vsphere's vsphere_resource_pool.id). A vApp id ("resgroup-v...")
// is a resource pool too.
func (c *Client) FindResourcePoolByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	if strings.HasPrefix(id, "resgroup-v") {
		return c.FindByID(ctx, "VirtualApp", id)
	}
	return c.FindByID(ctx, TypeResourcePool, id)
}

// FindDatastoreByID returns the datastore with managed object id id.
func (c *Client) FindDatastoreByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return c.FindByID(ctx, TypeDatastore, id)
}

// FindDatastoreClusterByID returns the datastore cluster (a StoragePod)
// with managed object id id ("group-p12").
func (c *Client) FindDatastoreClusterByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return c.FindByID(ctx, TypeStoragePod, id)
}

// FindHostByID returns the ESXi host with managed object id id.
func (c *Client) FindHostByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return c.FindByID(ctx, TypeHostSystem, id)
}

// FindFolderByID returns the folder with managed object id id ("group-v4").
func (c *Client) FindFolderByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	return c.FindByID(ctx, TypeFolder, id)
}

// FindNetworkByID returns the network (standard, distributed port group) with
// managed object id id.
func (c *Client) FindNetworkByID(ctx context.Context, id string) (types.ManagedObjectReference, error) {
	ref := NetworkRef(id)
	return c.FindByID(ctx, ref.Type, id)
}

// FindVMByPath returns the virtual machine or template at an absolute
// inventory path ("/DC0/vm/templates/win2022-base"), in one round trip.
func (c *Client) FindVMByPath(ctx context.Context, inventoryPath string) (types.ManagedObjectReference, error) {
	ref, err := c.findByPath(ctx, inventoryPath, "virtual machine")
	if err != nil {
		return ref, err
	}
	if ref.Type != TypeVirtualMachine {
		return ref, fmt.Errorf("%s is a %s, not a virtual machine or template", inventoryPath, kindName(ref.Type))
	}
	return ref, nil
}

// FindFolderByPath returns the folder at an absolute inventory path
// ("/DC0/vm/windows"). With create, missing folders below the datacenter's
// VM folder are created (concurrent creators of the same folder both succeed).
func (c *Client) FindFolderByPath(ctx context.Context, inventoryPath string, create bool) (types.ManagedObjectReference, error) {
	ref, err := c.findByPath(ctx, inventoryPath, "folder")
	if err == nil {
		if ref.Type != TypeFolder {
			return ref, fmt.Errorf("%s is a %s, not a folder", inventoryPath, kindName(ref.Type))
		}
		return ref, nil
	}
	if !create || !IsNotFound(err) {
		return ref, err
	}
	parentPath := path.Dir(path.Clean(inventoryPath))
	if parentPath == "/" || strings.Count(parentPath, "/") < 2 {
		// Never create datacenters or a datacenter's top-level folders.
		return ref, err
	}
	parent, perr := c.FindFolderByPath(ctx, parentPath, true)
	if perr != nil {
		return ref, perr
	}
	name := path.Base(inventoryPath)
	f, cerr := object.NewFolder(c.Client.Client, parent).CreateFolder(ctx, name)
	if cerr == nil {
		return f.Reference(), nil
	}
	if isFault(cerr, &types.DuplicateName{}) {
		// Someone else created it meanwhile.
		return c.findByPath(ctx, inventoryPath, "folder")
	}
	return ref, fmt.Errorf("creating folder %s: %w", inventoryPath, cerr)
}

// findByPath resolves an absolute inventory path with the SearchIndex.
func (c *Client) findByPath(ctx context.Context, inventoryPath, kind string) (types.ManagedObjectReference, error) {
	if !strings.HasPrefix(inventoryPath, "/") {
		return types.ManagedObjectReference{}, fmt.Errorf("%s path %q is not absolute: write it as /<datacenter>/vm/<folder>/<name>", kind, inventoryPath)
	}
	p := path.Clean(inventoryPath)
	obj, err := object.NewSearchIndex(c.Client.Client).FindByInventoryPath(ctx, p)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("looking up %s %s: %w", kind, p, err)
	}
	if obj == nil {
		return types.ManagedObjectReference{}, &NotFoundError{Kind: kind, ID: p}
	}
	return obj.Reference(), nil
}

// FindVMByUUID returns the virtual machine with the given instance UUID
// (instance = true: vCenter's own id, stable across BIOS UUID changes) or
// BIOS UUID (the SMBIOS serial the guest and the Kubernetes providerID see).
func (c *Client) FindVMByUUID(ctx context.Context, uuid string, instance bool) (types.ManagedObjectReference, error) {
	kind := "virtual machine with BIOS UUID"
	if instance {
		kind = "virtual machine with instance UUID"
	}
	obj, err := object.NewSearchIndex(c.Client.Client).FindByUuid(ctx, nil, uuid, true, &instance)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("looking up %s %s: %w", kind, uuid, err)
	}
	if obj == nil {
		return types.ManagedObjectReference{}, &NotFoundError{Kind: kind, ID: uuid}
	}
	return obj.Reference(), nil
}

// InventoryPath returns an object's inventory path, in one round trip
// (InventoryPaths).
func (c *Client) InventoryPath(ctx context.Context, ref types.ManagedObjectReference) (string, error) {
	paths, err := c.InventoryPaths(ctx, []types.ManagedObjectReference{ref})
	if err != nil {
		return "", err
	}
	p, ok := paths[ref]
	if !ok {
		return "", fmt.Errorf("reading the inventory path of %s %s: vCenter returned no path up to the root folder", kindName(ref.Type), ref.Value)
	}
	return p, nil
}

// InventoryPaths returns the inventory paths of objects in one round trip,
// however many there are: one property collector retrieval that climbs
// from each object through its parents (a VM in a vApp through its vApp,
// as mo.Ancestors does) and reads their names. An object whose ancestors
// cannot all be read up to the root folder (a role without read access on a
// folder above it) is left out of the result. A missing object is a
// *NotFoundError.
func (c *Client) InventoryPaths(ctx context.Context, refs []types.ManagedObjectReference) (map[types.ManagedObjectReference]string, error) {
	if len(refs) == 0 {
		return map[types.ManagedObjectReference]string{}, nil
	}
	res, err := c.retrieveWithAncestors(ctx, refs, nil)
	if err != nil {
		return nil, err
	}
	return c.inventoryPaths(refs, res), nil
}

// retrieveWithAncestors is one property collector retrieval that climbs
// from each object through its parents (a VM in a vApp through its vApp, as
// mo.Ancestors does) and reads their names and parents, and vmProps of the
// VMs among refs.
func (c *Client) retrieveWithAncestors(ctx context.Context, refs []types.ManagedObjectReference, vmProps []string) ([]types.ObjectContent, error) {
	toParent := []types.BaseSelectionSpec{&types.SelectionSpec{Name: "toParent"}}
	climb := []types.BaseSelectionSpec{
		&types.TraversalSpec{SelectionSpec: types.SelectionSpec{Name: "toParent"}, Type: "ManagedEntity", Path: "parent", SelectSet: toParent},
		&types.TraversalSpec{Type: TypeVirtualMachine, Path: "parentVApp", SelectSet: toParent},
	}
	spec := types.PropertyFilterSpec{PropSet: []types.PropertySpec{
		{Type: "ManagedEntity", PathSet: []string{"name", "parent"}},
		{Type: TypeVirtualMachine, PathSet: append([]string{"parentVApp"}, vmProps...)},
	}}
	for _, r := range refs {
		spec.ObjectSet = append(spec.ObjectSet, types.ObjectSpec{Obj: r, SelectSet: climb})
	}
	res, err := property.DefaultCollector(c.Client.Client).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{spec}})
	if err != nil {
		if missing, ok := managedObjectNotFound(err); ok {
			return nil, &NotFoundError{Kind: kindName(missing.Type), ID: missing.Value}
		}
		return nil, fmt.Errorf("reading inventory paths: %w", err)
	}
	return res.Returnval, nil
}

// inventoryPaths puts together the paths of refs from a retrieval of
// retrieveWithAncestors.
func (c *Client) inventoryPaths(refs []types.ManagedObjectReference, content []types.ObjectContent) map[types.ManagedObjectReference]string {
	out := make(map[types.ManagedObjectReference]string, len(refs))
	type entity struct {
		name   string
		parent *types.ManagedObjectReference
	}
	entities := make(map[types.ManagedObjectReference]entity, len(content))
	for _, oc := range content {
		var e entity
		var vApp *types.ManagedObjectReference
		for _, p := range oc.PropSet {
			ref, isRef := p.Val.(types.ManagedObjectReference)
			switch {
			case p.Name == "name":
				e.name, _ = p.Val.(string)
			case p.Name == "parent" && isRef:
				e.parent = &ref
			case p.Name == "parentVApp" && isRef:
				vApp = &ref
			}
		}
		if e.parent == nil {
			e.parent = vApp
		}
		entities[oc.Obj] = e
	}
	root := c.Client.ServiceContent.RootFolder
	for _, r := range refs {
		var names []string
		// Each step climbs one level; a chain longer than the entities read
		// would be a loop.
		for cur, steps := r, 0; steps <= len(entities); steps++ {
			if cur == root {
				slices.Reverse(names) // the root folder has no name in paths
				out[r] = "/" + strings.Join(names, "/")
				break
			}
			e, ok := entities[cur]
			if !ok || e.name == "" || e.parent == nil {
				break // not readable up to the root folder
			}
			names = append(names, e.name)
			cur = *e.parent
		}
	}
	return out
}

// FindVM finds a VM or template by any form VMKind accepts: inventory path
// ("/dc/vm/x"), managed object id ("vm-42"), BIOS UUID (hashicorp/vsphere's
// vsphere_virtual_machine.id) or instance UUID (its instance_uuid). A UUID
// is looked up as a BIOS UUID first, as hashicorp/vsphere's uuid lookups do,
// then as an instance UUID.
func (c *Client) FindVM(ctx context.Context, ref string) (types.ManagedObjectReference, error) {
	switch {
	case strings.HasPrefix(ref, "/"):
		return c.FindVMByPath(ctx, ref)
	case uuidPattern.MatchString(ref):
		found, err := c.FindVMByUUID(ctx, ref, false)
		if !IsNotFound(err) {
			return found, err
		}
		found, err = c.FindVMByUUID(ctx, ref, true)
		if IsNotFound(err) {
			return found, &NotFoundError{Kind: "virtual machine with BIOS or instance UUID", ID: ref}
		}
		return found, err
	default:
		if err := VMKind.Check(ref); err != nil {
			return types.ManagedObjectReference{}, err
		}
		return c.FindVMByID(ctx, ref)
	}
}

// FindFolder finds a VM folder by any form FolderKind accepts: inventory
// path ("/dc/vm/x"), managed object id ("group-v4"), or a path relative to
// the VM folder of pool's datacenter ("x", as hashicorp/vsphere's
// vsphere_folder and vsphere_virtual_machine resources write it: "relative
// to the datacenter that the resource pool is in"). With create, a missing
// folder given by path is created.
func (c *Client) FindFolder(ctx context.Context, folder string, pool types.ManagedObjectReference, create bool) (types.ManagedObjectReference, error) {
	switch {
	case strings.HasPrefix(folder, "/"):
		return c.FindFolderByPath(ctx, folder, create)
	case folderIDPattern.MatchString(folder):
		return c.FindFolderByID(ctx, folder)
	}
	if err := FolderKind.Check(folder); err != nil {
		return types.ManagedObjectReference{}, err
	}
	if pool.Value == "" {
		return types.ManagedObjectReference{}, fmt.Errorf("folder %q is a relative path, and there is no resource pool here to name its datacenter: "+
			"write the absolute path, /<datacenter>/vm/%s, or the folder's managed object id", folder, folder)
	}
	dc, err := c.DatacenterPath(ctx, pool)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("folder %q is relative to the datacenter of resource pool %s: %w", folder, pool.Value, err)
	}
	return c.FindFolderByPath(ctx, path.Join(dc, "vm", folder), create)
}

// CheckFolder tells, without creating anything, whether FindFolder with
// create would succeed: the folder exists, or it is a path whose missing
// part can be created (an existing folder below a datacenter's top-level
// folders is its ancestor). For a plan, which must not change the
// inventory. A relative path is relative to the datacenter of resource pool
// poolID; without one it is not checked (nil).
func (c *Client) CheckFolder(ctx context.Context, folder, poolID string) error {
	p := folder
	switch {
	case strings.HasPrefix(folder, "/"):
	case folderIDPattern.MatchString(folder):
		_, err := c.FindFolderByID(ctx, folder)
		return err
	default:
		if err := FolderKind.Check(folder); err != nil || poolID == "" {
			return err
		}
		pool, err := c.FindResourcePoolByID(ctx, poolID)
		if err != nil {
			return err
		}
		dc, err := c.DatacenterPath(ctx, pool)
		if err != nil {
			return fmt.Errorf("folder %q is relative to the datacenter of resource pool %s: %w", folder, pool.Value, err)
		}
		p = path.Join(dc, "vm", folder)
	}
	// FindFolderByPath creates below the nearest existing ancestor, never a
	// datacenter or one of its top-level folders.
	for at := path.Clean(p); strings.Count(at, "/") >= 2; at = path.Dir(at) {
		ref, err := c.findByPath(ctx, at, "folder")
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if ref.Type != TypeFolder {
			return fmt.Errorf("%s is a %s, not a folder", at, kindName(ref.Type))
		}
		return nil
	}
	return &NotFoundError{Kind: "folder", ID: path.Clean(p)}
}

// DatacenterPath returns the inventory path of the datacenter ref is in
// ("/dc1", or "/folder/dc1" for a datacenter in a folder), in one round
// trip.
func (c *Client) DatacenterPath(ctx context.Context, ref types.ManagedObjectReference) (string, error) {
	res, err := c.retrieveWithAncestors(ctx, []types.ManagedObjectReference{ref}, nil)
	if err != nil {
		return "", err
	}
	for _, oc := range res {
		if oc.Obj.Type == "Datacenter" {
			if p, ok := c.inventoryPaths([]types.ManagedObjectReference{oc.Obj}, res)[oc.Obj]; ok {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s %s is in no datacenter this session can read", kindName(ref.Type), ref.Value)
}
