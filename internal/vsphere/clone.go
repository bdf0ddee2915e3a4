package vsphere

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// CloneSpec says what to clone, where, and how to customize the guest.
type CloneSpec struct {
	// Source is the template or VM to clone.
	Source mo.Reference
	Name   string
	// Folder receives the clone; ResourcePool places it (required for
	// templates, which have no pool of their own). Datastore and Host are
	// optional (vCenter/DRS choose); Network, when set, replaces the backing
	// of the source's first NIC.
	Folder       mo.Reference
	ResourcePool mo.Reference
	Datastore    mo.Reference
	Host         mo.Reference
	Network      mo.Reference
	// DatastoreCluster, in place of Datastore, lets Storage DRS choose the
	// datastore among the cluster's (storage.go).
	DatastoreCluster mo.Reference
	// StoragePolicyID is a storage policy (PBM profile) id for the VM's
	// home and all its disks; "" keeps the datastore's default.
	StoragePolicyID string
	// ExtraDisks are empty disks the clone gets beside its source's;
	// ExtraNetworks one more NIC each, after the source's.
	ExtraDisks    []ExtraDisk
	ExtraNetworks []mo.Reference

	// Hardware; zero keeps the source's value. DiskSizeGB grows the first
	// disk (never shrinks it: a smaller value is an error).
	NumCPUs    int32
	MemoryMB   int64
	DiskSizeGB int64

	// LinkedClone creates the disks as children of the source's current
	// snapshot (fast, space-saving; the clone depends on the source). The
	// source must have a snapshot: Clone never modifies the source (a
	// template cannot take snapshots), so it fails with a message saying
	// how to make one. windows_golden_image templates carry one.
	LinkedClone bool

	// Annotation sets the clone's notes; ExtraConfig adds advanced settings.
	Annotation  string
	ExtraConfig map[string]string

	// Sysprep customizes the Windows guest at first power-on; nil clones
	// without customization.
	Sysprep *Sysprep
}

// Sysprep is a Windows guest customization (CustomizationSysprep).
type Sysprep struct {
	ComputerName  string // NetBIOS name, at most 15 characters
	AdminPassword string // set as plain text in GuiUnattended
	// TimeZone is the Windows time zone index (85 = GMT Standard Time, 4 =
	// Pacific, 35 = Eastern, ...); 0 means 85, as the vSphere provider does.
	TimeZone     int32
	Workgroup    string // default WORKGROUP
	FullName     string // registered owner, default "Administrator"
	Organization string // default "Managed by Terraform"
	// RunOnce commands run once at the first logon of the customization.
	RunOnce []string
	// IPv4 configures the NIC statically; nil means DHCP.
	IPv4 *StaticIPv4
	// DNSSuffixes is the global DNS suffix search list.
	DNSSuffixes []string
	// Domain, when set, joins the guest to an Active Directory domain in
	// the specialize pass instead of a workgroup.
	Domain *DomainJoin
}

// DomainJoin is the Identification of a Windows customization that joins a
// domain (vSphere API CustomizationIdentification: joinDomain, domainAdmin,
// domainAdminPassword, domainOU; vmware/terraform-provider-vsphere's
// windows_options join_domain, domain_admin_user, domain_admin_password,
// domain_ou). vCenter writes them into the sysprep.xml it leaves on the
// guest (Microsoft-Windows-UnattendedJoin | Identification | JoinDomain,
// Credentials, MachineObjectOU); Windows Setup joins in the specialize pass.
type DomainJoin struct {
	Domain   string // the domain's DNS name
	OU       string // the OU's DN; empty: the domain's Computers container
	User     string // the join account
	Password string // sent as plain text in the clone spec, as AdminPassword is
}

// StaticIPv4 is a static NIC configuration.
type StaticIPv4 struct {
	Address      string
	PrefixLength int
	Gateway      string
	DNSServers   []string
	DNSDomain    string
}

// DefaultTimeZone is GMT Standard Time, the vSphere provider's default.
const DefaultTimeZone = 85

// Clone clones spec.Source and returns the new VM's identity as soon as the
// clone task completes: the caller saves it before anything else can fail.
// The clone is powered off; customization (if any) runs at its first PowerOn.
func (c *Client) Clone(ctx context.Context, spec CloneSpec) (*VM, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	src := spec.Source.Reference()
	source, err := c.Lookups().source(ctx, src)
	if err != nil {
		return nil, notFoundOr(err, "clone source", src, "reading")
	}
	if source.Config == nil {
		return nil, fmt.Errorf("clone source %s (%s) has no configuration (is it inaccessible or orphaned?)", source.Name, src.Value)
	}
	cs, err := c.cloneSpec(ctx, spec, source)
	if err != nil {
		return nil, err
	}
	// No more clones at once on a host than it has provisioning units
	// (slots.go): the template's host, which a clone charges wherever it
	// lands, and the destination named, if any.
	units := UnitsPerFullClone
	if spec.LinkedClone {
		units = UnitsPerLinkedClone
	}
	var hosts []string
	if source.Runtime.Host != nil {
		hosts = append(hosts, source.Runtime.Host.Value)
	}
	if spec.Host != nil {
		hosts = append(hosts, spec.Host.Reference().Value)
	}
	release, err := c.slots.acquire(ctx, hosts, units, "clone of "+source.Name+" to "+spec.Name)
	if err != nil {
		return nil, fmt.Errorf("cloning %s to %s: nothing was cloned: %w", source.Name, spec.Name, err)
	}
	defer release()
	folder := object.NewFolder(c.Client.Client, spec.Folder.Reference())
	// The request is not abandoned when ctx ends: vCenter clones once it
	// has received it, and the task its reply names is the only way to
	// learn of that VM. An interrupt is heeded right after the reply.
	reqCtx, cancelReq := context.WithTimeout(context.WithoutCancel(ctx), cloneRequestTimeout)
	task, err := object.NewVirtualMachine(c.Client.Client, src).Clone(reqCtx, folder, spec.Name, *cs)
	cancelReq()
	if err != nil && errors.Is(reqCtx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("cloning %s to %s: vCenter did not answer the clone request within %s: a VM %q may still appear in the folder; delete it or import it", source.Name, spec.Name, cloneRequestTimeout, spec.Name)
	}
	res, err := c.waitTask(ctx, task, err)
	var interrupted error
	if err != nil && task != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C, a deadline) while vCenter clones: the task
		// goes on without us, and the VM it makes must reach the state, not
		// be left behind untracked. So wait for its end, within a bound.
		// It is not cancelled: a cancel that crosses the clone's end leaves
		// a VM all the same, and only the task's outcome tells which.
		interrupted = err
		settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskSettleTimeout)
		defer cancel()
		if res, err = c.waitTask(settle, task, nil); err != nil {
			if settle.Err() != nil {
				return nil, fmt.Errorf("cloning %s to %s was interrupted (%w) and the clone task %s had not ended %s later: a VM %q may still appear in the folder; delete it or import it", source.Name, spec.Name, interrupted, task.Reference().Value, taskSettleTimeout, spec.Name)
			}
			return nil, fmt.Errorf("cloning %s to %s was interrupted (%w), and the clone failed: %w", source.Name, spec.Name, interrupted, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cloning %s to %s: %w", source.Name, spec.Name, err)
	}
	ref, ok := res.(types.ManagedObjectReference)
	if !ok {
		return nil, fmt.Errorf("cloning %s to %s: the task returned %T, not a VM", source.Name, spec.Name, res)
	}
	vm := &VM{Ref: ref, Name: spec.Name}
	// The new VM's identity is what the state records of it, so it is read
	// even when ctx has ended: an interrupt that lands after the clone's end
	// (seen in CI, on a loaded machine) must not leave it unread.
	readCtx, cancelRead := context.WithTimeout(context.WithoutCancel(ctx), taskSettleTimeout)
	defer cancelRead()
	if err := c.identify(readCtx, vm); err != nil {
		// The clone exists: return its reference so it is not lost.
		return vm, fmt.Errorf("cloned %s to %s (%s) but could not read its identity: %w", source.Name, spec.Name, ref.Value, err)
	}
	if interrupted == nil && ctx.Err() != nil {
		interrupted = ctx.Err()
	}
	if interrupted != nil {
		// The VM is whole but the operation was cancelled: the caller
		// tracks it, and stops.
		return vm, fmt.Errorf("cloning %s to %s was interrupted (%w) after vCenter created %s", source.Name, spec.Name, interrupted, ref.Value)
	}
	return vm, nil
}

// cloneRequestTimeout bounds the CloneVM_Task request itself, which is not
// cancelled with the operation: vCenter answers it with a task in moments.
const cloneRequestTimeout = time.Minute

// taskSettleTimeout bounds the wait for a task's end after the operation
// that started it was interrupted, to learn what it made.
const taskSettleTimeout = 5 * time.Minute

// Identify reads a VM's identity (one round trip).
func (c *Client) Identify(ctx context.Context, ref mo.Reference) (*VM, error) {
	vm := &VM{Ref: ref.Reference()}
	if err := c.identify(ctx, vm); err != nil {
		return nil, err
	}
	return vm, nil
}

// identify reads the VM's name, UUIDs and inventory path in one retrieval.
func (c *Client) identify(ctx context.Context, vm *VM) error {
	refs := []types.ManagedObjectReference{vm.Ref}
	content, err := c.retrieveWithAncestors(ctx, refs, []string{"config.uuid", "config.instanceUuid"})
	if err != nil {
		return notFoundOr(err, "virtual machine", vm.Ref, "reading")
	}
	for _, oc := range content {
		if oc.Obj != vm.Ref {
			continue
		}
		for _, p := range oc.PropSet {
			s, _ := p.Val.(string)
			switch p.Name {
			case "name":
				vm.Name = s
			case "config.uuid":
				vm.BIOSUUID = s
			case "config.instanceUuid":
				vm.InstanceUUID = s
			}
		}
	}
	p, ok := c.inventoryPaths(refs, content)[vm.Ref]
	if !ok {
		return fmt.Errorf("reading the inventory path of virtual machine %s: vCenter returned no path up to the root folder", vm.Ref.Value)
	}
	vm.InventoryPath = p
	return nil
}

func (s CloneSpec) validate() error {
	var errs []error
	if s.Source == nil {
		errs = append(errs, errors.New("no source template or VM"))
	}
	if s.Name == "" {
		errs = append(errs, errors.New("no name for the clone"))
	}
	if s.Folder == nil {
		errs = append(errs, errors.New("no folder for the clone"))
	}
	if s.NumCPUs < 0 || s.MemoryMB < 0 || s.DiskSizeGB < 0 {
		errs = append(errs, errors.New("CPU, memory and disk sizes cannot be negative"))
	}
	if s.Datastore != nil && s.DatastoreCluster != nil {
		errs = append(errs, errors.New("a datastore and a datastore cluster: give one"))
	}
	for i, d := range s.ExtraDisks {
		if d.SizeGB < 1 {
			errs = append(errs, fmt.Errorf("extra disk %d: size %d GiB is not at least 1", i+1, d.SizeGB))
		}
	}
	if p := s.Sysprep; p != nil {
		if p.ComputerName == "" || len(p.ComputerName) > 15 {
			errs = append(errs, fmt.Errorf("computer name %q must have 1 to 15 characters (NetBIOS)", p.ComputerName))
		}
		if d := p.Domain; d != nil && (d.Domain == "" || d.User == "" || d.Password == "") {
			errs = append(errs, errors.New("a domain join needs the domain, the join account and its password (CustomizationIdentification)"))
		}
		if p.IPv4 != nil {
			if ip := net.ParseIP(p.IPv4.Address); ip == nil || ip.To4() == nil {
				errs = append(errs, fmt.Errorf("static address %q is not an IPv4 address", p.IPv4.Address))
			}
			if p.IPv4.PrefixLength < 1 || p.IPv4.PrefixLength > 32 {
				errs = append(errs, fmt.Errorf("prefix length %d is not between 1 and 32", p.IPv4.PrefixLength))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid clone request for %q: %w", s.Name, errors.Join(errs...))
	}
	return nil
}

// cloneSpec builds the VirtualMachineCloneSpec.
func (c *Client) cloneSpec(ctx context.Context, spec CloneSpec, source *mo.VirtualMachine) (*types.VirtualMachineCloneSpec, error) {
	cs := &types.VirtualMachineCloneSpec{
		Config: &types.VirtualMachineConfigSpec{
			NumCPUs:    spec.NumCPUs,
			MemoryMB:   spec.MemoryMB,
			Annotation: spec.Annotation,
		},
	}
	for k, v := range spec.ExtraConfig {
		cs.Config.ExtraConfig = append(cs.Config.ExtraConfig, &types.OptionValue{Key: k, Value: v})
	}
	// Which disks are the source's, for the destroy (AddedDisks).
	cs.Config.ExtraConfig = append(cs.Config.ExtraConfig, &types.OptionValue{Key: SourceDisksKey, Value: sourceDiskKeys(source.Config.Hardware.Device)})
	if spec.ResourcePool != nil {
		r := spec.ResourcePool.Reference()
		cs.Location.Pool = &r
	} else if source.Config.Template {
		return nil, fmt.Errorf("cloning template %s: a resource pool is required (templates have none of their own)", source.Name)
	}
	if spec.Datastore != nil {
		r := spec.Datastore.Reference()
		cs.Location.Datastore = &r
	}
	if spec.Host != nil {
		r := spec.Host.Reference()
		cs.Location.Host = &r
	}
	if spec.LinkedClone {
		if source.Snapshot == nil || source.Snapshot.CurrentSnapshot == nil {
			return nil, fmt.Errorf("linked clone of %s: it has no snapshot to share disks from; take a snapshot of the source (a template: convert it to a VM, snapshot it, mark it as a template again) or clone in full", source.Name)
		}
		cs.Snapshot = source.Snapshot.CurrentSnapshot
		cs.Location.DiskMoveType = string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)
	}

	devices := object.VirtualDeviceList(source.Config.Hardware.Device)
	if spec.Network != nil {
		change, err := c.nicChange(ctx, devices, spec.Network.Reference(), source.Name)
		if err != nil {
			return nil, err
		}
		cs.Config.DeviceChange = append(cs.Config.DeviceChange, change)
	}
	if spec.DiskSizeGB > 0 {
		if spec.LinkedClone {
			// A child disk can grow, but only after the clone exists; vCenter
			// refuses to resize during a linked clone.
			return nil, fmt.Errorf("linked clone of %s: disk size cannot be changed while cloning; grow the disk after the clone (GrowDisk)", source.Name)
		}
		change, err := growDiskChange(devices, spec.DiskSizeGB, source.Name)
		if err != nil {
			return nil, err
		}
		if change != nil {
			cs.Config.DeviceChange = append(cs.Config.DeviceChange, change)
		}
	}
	profile := storageProfile(spec.StoragePolicyID)
	changes, slots, err := extraDiskChanges(devices, spec.ExtraDisks, profile, source.Name)
	if err != nil {
		return nil, err
	}
	cs.Config.DeviceChange = append(cs.Config.DeviceChange, changes...)
	if len(slots) > 0 {
		cs.Config.ExtraConfig = append(cs.Config.ExtraConfig, &types.OptionValue{Key: CloneDisksKey, Value: strings.Join(slots, ",")})
	}
	nicChanges, err := c.extraNICChanges(ctx, devices, spec.ExtraNetworks, source.Name)
	if err != nil {
		return nil, err
	}
	cs.Config.DeviceChange = append(cs.Config.DeviceChange, nicChanges...)
	if spec.DatastoreCluster != nil {
		if err := c.recommendDatastore(ctx, spec, cs, source); err != nil {
			return nil, err
		}
	}
	applyStoragePolicy(cs, devices, spec.StoragePolicyID)
	if spec.Sysprep != nil {
		nics := len(devices.SelectByType((*types.VirtualEthernetCard)(nil))) + len(spec.ExtraNetworks)
		if nics == 0 {
			return nil, fmt.Errorf("customizing a clone of %s: the source has no network adapter", source.Name)
		}
		cs.Customization = spec.Sysprep.customizationSpec(nics)
	}
	return cs, nil
}

// nicChange points the first NIC at network.
func (c *Client) nicChange(ctx context.Context, devices object.VirtualDeviceList, network types.ManagedObjectReference, source string) (types.BaseVirtualDeviceConfigSpec, error) {
	nics := devices.SelectByType((*types.VirtualEthernetCard)(nil))
	if len(nics) == 0 {
		return nil, fmt.Errorf("cloning %s: it has no network adapter to connect to network %s", source, network.Value)
	}
	netObj, ok := object.NewReference(c.Client.Client, network).(object.NetworkReference)
	if !ok {
		return nil, fmt.Errorf("%s is not a network", network.Value)
	}
	backing, err := c.Lookups().backing(network, func() (types.BaseVirtualDeviceBackingInfo, error) { return netObj.EthernetCardBackingInfo(ctx) })
	if err != nil {
		return nil, notFoundOr(err, kindName(network.Type), network, "reading the backing of")
	}
	// A copy: the source's devices may be remembered (Lookups) for the
	// next clone.
	nic := copyDevice(nics[0])
	nic.GetVirtualDevice().Backing = backing
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: nic}, nil
}

// growDiskChange grows the first disk to sizeGB; nil when it has that size.
func growDiskChange(devices object.VirtualDeviceList, sizeGB int64, vmName string) (types.BaseVirtualDeviceConfigSpec, error) {
	ds := devices.SelectByType((*types.VirtualDisk)(nil))
	if len(ds) == 0 {
		return nil, fmt.Errorf("%s has no disk to size", vmName)
	}
	disk := copyDevice(ds[0]).(*types.VirtualDisk) // the source's stays as it is
	current := disk.CapacityInBytes
	if current == 0 {
		current = disk.CapacityInKB * 1024
	}
	want := sizeGB * gib
	switch {
	case want == current:
		return nil, nil
	case want < current:
		return nil, fmt.Errorf("disk of %s is %d GiB; disks can only grow, not shrink to %d GiB", vmName, (current+gib-1)/gib, sizeGB)
	}
	// vCenter (and vcsim) need both fields to agree.
	disk.CapacityInBytes = want
	disk.CapacityInKB = want / 1024
	return &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: disk}, nil
}

// customizationSpec is the sysprep spec for a VM with nics network adapters
// (the first one configured, the others DHCP).
func (p *Sysprep) customizationSpec(nics int) *types.CustomizationSpec {
	tz := p.TimeZone
	if tz == 0 {
		tz = DefaultTimeZone
	}
	workgroup := p.Workgroup
	if workgroup == "" {
		workgroup = "WORKGROUP"
	}
	fullName := p.FullName
	if fullName == "" {
		fullName = "Administrator"
	}
	org := p.Organization
	if org == "" {
		org = "Managed by Terraform"
	}
	sysprep := &types.CustomizationSysprep{
		GuiUnattended: types.CustomizationGuiUnattended{
			Password:       &types.CustomizationPassword{Value: p.AdminPassword, PlainText: true},
			TimeZone:       tz,
			AutoLogon:      false,
			AutoLogonCount: 1,
		},
		UserData: types.CustomizationUserData{
			FullName:     fullName,
			OrgName:      org,
			ComputerName: &types.CustomizationFixedName{Name: p.ComputerName},
		},
		Identification: types.CustomizationIdentification{JoinWorkgroup: workgroup},
	}
	if d := p.Domain; d != nil {
		// The API takes a workgroup or a domain, never both.
		sysprep.Identification = types.CustomizationIdentification{
			JoinDomain: d.Domain, DomainAdmin: d.User,
			DomainAdminPassword: &types.CustomizationPassword{Value: d.Password, PlainText: true},
			// domainOU is vSphere API 8.0.2.0's (vCenter 8.0 Update 2); an
			// older vCenter ignores what it does not know.
			DomainOU: d.OU,
		}
	}
	if len(p.RunOnce) > 0 {
		sysprep.GuiRunOnce = &types.CustomizationGuiRunOnce{CommandList: p.RunOnce}
	}
	spec := &types.CustomizationSpec{
		Identity:         sysprep,
		GlobalIPSettings: types.CustomizationGlobalIPSettings{DnsSuffixList: p.DNSSuffixes},
	}
	for i := 0; i < nics; i++ {
		adapter := types.CustomizationIPSettings{Ip: &types.CustomizationDhcpIpGenerator{}}
		if i == 0 && p.IPv4 != nil {
			mask := net.CIDRMask(p.IPv4.PrefixLength, 32)
			adapter = types.CustomizationIPSettings{
				Ip:            &types.CustomizationFixedIp{IpAddress: p.IPv4.Address},
				SubnetMask:    net.IP(mask).String(),
				DnsServerList: p.IPv4.DNSServers,
				DnsDomain:     p.IPv4.DNSDomain,
			}
			if p.IPv4.Gateway != "" {
				adapter.Gateway = []string{p.IPv4.Gateway}
			}
		}
		spec.NicSettingMap = append(spec.NicSettingMap, types.CustomizationAdapterMapping{Adapter: adapter})
	}
	return spec
}

// copyDevice returns a shallow copy of a device, to change its fields
// without changing the list it came from.
func copyDevice(d types.BaseVirtualDevice) types.BaseVirtualDevice {
	v := reflect.ValueOf(d)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return d
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface().(types.BaseVirtualDevice)
}

// retrieveOne reads props of one object.
func (c *Client) retrieveOne(ctx context.Context, ref types.ManagedObjectReference, props []string, dst any) error {
	return property.DefaultCollector(c.Client.Client).RetrieveOne(ctx, ref, props, dst)
}
