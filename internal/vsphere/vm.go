package vsphere

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// VM is a virtual machine's identity: what a resource saves to state the
// moment the VM exists, and what finds it again.
type VM struct {
	Ref           types.ManagedObjectReference
	Name          string
	InventoryPath string
	// InstanceUUID is vCenter's id of the VM; BIOSUUID is the SMBIOS UUID
	// the guest sees (the Kubernetes providerID is vsphere://<BIOSUUID>).
	InstanceUUID string
	BIOSUUID     string
}

// ID is the managed object id ("vm-42").
func (v *VM) ID() string { return v.Ref.Value }

// Reference makes a *VM usable wherever a managed object reference is.
func (v *VM) Reference() types.ManagedObjectReference { return v.Ref }

// Disk is one virtual disk.
type Disk struct {
	Key   int32
	Label string
	// ControllerKey and UnitNumber are its slot (CloneDisksKey).
	ControllerKey int32
	UnitNumber    *int32
	CapacityBytes int64
	FileName      string
	// ParentFileNames is the backing chain below FileName (delta disks of
	// snapshots and linked clones), nearest first.
	ParentFileNames []string
}

// SizeGB is the capacity in GiB, rounded up.
func (d Disk) SizeGB() int64 { return (d.CapacityBytes + gib - 1) / gib }

const gib = 1 << 30

// GuestNIC is one network adapter as VMware Tools reports it.
type GuestNIC struct {
	Network    string
	MACAddress string
	// DeviceConfigID is the virtual NIC's device key; -1 marks an adapter
	// inside the guest with no virtual NIC behind it (HNS vEthernet, ...).
	DeviceConfigID int32
	IPAddresses    []string
}

// VMInfo is what Read needs of a VM, read in one round trip by ReadVMs.
type VMInfo struct {
	VM
	Parent       types.ManagedObjectReference // folder
	ResourcePool *types.ManagedObjectReference
	Template     bool
	PowerState   types.VirtualMachinePowerState
	NumCPUs      int32
	MemoryMB     int64
	CPUHotAdd    bool
	CPUHotRemove bool
	MemoryHotAdd bool
	GuestID      string
	Annotation   string
	// CustomAttributes are the VM's custom attribute values by custom
	// field key, those with a value only (customValue; hashicorp/vsphere's
	// customattribute.ReadFromResource leaves out empty ones, as a cleared
	// attribute is an empty value).
	CustomAttributes map[string]string
	ExtraConfig      map[string]string
	Disks            []Disk
	NetworkIDs       []string // managed object ids of the networks the NICs use
	GuestIP          string   // guest.ipAddress as reported
	GuestHostName    string
	GuestNICs        []GuestNIC
	CurrentSnapshot  *types.ManagedObjectReference
}

// IP picks the node IP from what the guest reports, as WaitForIP does.
func (i *VMInfo) IP(filter IPFilter) string {
	return filter.pick(i.GuestNICs, i.GuestIP)
}

// vmProperties are the properties ReadVMs fetches.
var vmProperties = []string{
	"name", "parent", "resourcePool", "runtime.powerState",
	"config.template", "config.uuid", "config.instanceUuid", "config.guestId", "config.annotation",
	"config.hardware.numCPU", "config.hardware.memoryMB", "config.hardware.device",
	"config.cpuHotAddEnabled", "config.cpuHotRemoveEnabled", "config.memoryHotAddEnabled",
	"config.extraConfig", "customValue", "network", "snapshot",
	"guest.ipAddress", "guest.hostName", "guest.net",
}

// ReadVMs reads the given VMs in one RetrievePropertiesEx round trip (more
// only when VMs have vanished: each vanished VM costs one retry, and is left
// out of the result, so a missing key means "gone"). Inventory paths are not
// read (that takes a round trip per VM); use InventoryPath when needed.
func (c *Client) ReadVMs(ctx context.Context, refs []types.ManagedObjectReference) (map[types.ManagedObjectReference]*VMInfo, error) {
	out := make(map[types.ManagedObjectReference]*VMInfo, len(refs))
	pending := slices.Clone(refs)
	for len(pending) > 0 {
		var vms []mo.VirtualMachine
		err := c.retrieve(ctx, pending, vmProperties, &vms)
		if missing, ok := managedObjectNotFound(err); ok {
			n := len(pending)
			pending = slices.DeleteFunc(pending, func(r types.ManagedObjectReference) bool { return r == missing })
			if len(pending) == n {
				return nil, fmt.Errorf("reading virtual machines: %w", err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading virtual machines: %w", err)
		}
		for i := range vms {
			info := vmInfo(&vms[i])
			out[info.Ref] = info
		}
		break
	}
	return out, nil
}

// ReadVM reads one VM (one round trip). A missing VM is a *NotFoundError.
func (c *Client) ReadVM(ctx context.Context, ref mo.Reference) (*VMInfo, error) {
	r := ref.Reference()
	m, err := c.ReadVMs(ctx, []types.ManagedObjectReference{r})
	if err != nil {
		return nil, err
	}
	info, ok := m[r]
	if !ok {
		return nil, &NotFoundError{Kind: "virtual machine", ID: r.Value}
	}
	return info, nil
}

// retrieve is one RetrievePropertiesEx for refs (all of one type), paging
// through ContinueRetrievePropertiesEx only if vCenter splits the answer.
func (c *Client) retrieve(ctx context.Context, refs []types.ManagedObjectReference, props []string, dst any) error {
	if len(refs) == 0 {
		return nil
	}
	spec := types.PropertyFilterSpec{
		PropSet: []types.PropertySpec{{Type: refs[0].Type, PathSet: props}},
	}
	for _, r := range refs {
		spec.ObjectSet = append(spec.ObjectSet, types.ObjectSpec{Obj: r})
	}
	pc := property.DefaultCollector(c.Client.Client)
	res, err := pc.RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{spec}})
	if err != nil {
		return err
	}
	return mo.LoadObjectContent(res.Returnval, dst)
}

func vmInfo(vm *mo.VirtualMachine) *VMInfo {
	info := &VMInfo{
		VM:           VM{Ref: vm.Self, Name: vm.Name},
		ResourcePool: vm.ResourcePool,
		PowerState:   vm.Runtime.PowerState,
	}
	if vm.Parent != nil {
		info.Parent = *vm.Parent
	}
	if cfg := vm.Config; cfg != nil {
		info.Template = cfg.Template
		info.BIOSUUID = cfg.Uuid
		info.InstanceUUID = cfg.InstanceUuid
		info.GuestID = cfg.GuestId
		info.Annotation = cfg.Annotation
		info.NumCPUs = cfg.Hardware.NumCPU
		info.MemoryMB = int64(cfg.Hardware.MemoryMB)
		info.CPUHotAdd = boolValue(cfg.CpuHotAddEnabled)
		info.CPUHotRemove = boolValue(cfg.CpuHotRemoveEnabled)
		info.MemoryHotAdd = boolValue(cfg.MemoryHotAddEnabled)
		info.Disks = disks(cfg.Hardware.Device)
		if len(cfg.ExtraConfig) > 0 {
			info.ExtraConfig = make(map[string]string, len(cfg.ExtraConfig))
			for _, o := range cfg.ExtraConfig {
				ov := o.GetOptionValue()
				info.ExtraConfig[ov.Key] = fmt.Sprint(ov.Value)
			}
		}
	}
	for _, cv := range vm.CustomValue {
		if v, ok := cv.(*types.CustomFieldStringValue); ok && v.Value != "" {
			if info.CustomAttributes == nil {
				info.CustomAttributes = map[string]string{}
			}
			info.CustomAttributes[strconv.Itoa(int(v.Key))] = v.Value
		}
	}
	for _, n := range vm.Network {
		info.NetworkIDs = append(info.NetworkIDs, n.Value)
	}
	if vm.Snapshot != nil {
		info.CurrentSnapshot = vm.Snapshot.CurrentSnapshot
	}
	if g := vm.Guest; g != nil {
		info.GuestIP = g.IpAddress
		info.GuestHostName = g.HostName
		info.GuestNICs = guestNICs(g.Net)
	}
	return info
}

func boolValue(b *bool) bool { return b != nil && *b }

func disks(devices []types.BaseVirtualDevice) []Disk {
	var out []Disk
	for _, d := range devices {
		vd, ok := d.(*types.VirtualDisk)
		if !ok {
			continue
		}
		disk := Disk{Key: vd.Key, CapacityBytes: vd.CapacityInBytes, ControllerKey: vd.ControllerKey, UnitNumber: vd.UnitNumber}
		if disk.CapacityBytes == 0 {
			disk.CapacityBytes = vd.CapacityInKB * 1024
		}
		if vd.DeviceInfo != nil {
			disk.Label = vd.DeviceInfo.GetDescription().Label
		}
		disk.FileName, disk.ParentFileNames = backingChain(vd.Backing)
		out = append(out, disk)
	}
	return out
}

// backingChain returns a disk backing's file and its parents' files.
func backingChain(b types.BaseVirtualDeviceBackingInfo) (string, []string) {
	var file string
	var parents []string
	for i := 0; b != nil; i++ {
		name, next := diskBacking(b)
		if i == 0 {
			file = name
		} else if name != "" {
			parents = append(parents, name)
		}
		b = next
	}
	return file, parents
}

// diskBacking returns the file of one link of a disk's backing chain and the
// next link (nil at the end, or for a backing that has no chain). The backing
// types that have a parent each have their own Parent field type, so the
// switch has a case per type, each one line.
func diskBacking(b types.BaseVirtualDeviceBackingInfo) (string, types.BaseVirtualDeviceBackingInfo) {
	switch x := b.(type) {
	case *types.VirtualDiskFlatVer2BackingInfo:
		return x.FileName, parentBacking(x.Parent)
	case *types.VirtualDiskSeSparseBackingInfo:
		return x.FileName, parentBacking(x.Parent)
	case *types.VirtualDiskSparseVer2BackingInfo:
		return x.FileName, parentBacking(x.Parent)
	case *types.VirtualDiskFlatVer1BackingInfo:
		return x.FileName, parentBacking(x.Parent)
	case *types.VirtualDiskRawDiskMappingVer1BackingInfo:
		return x.FileName, parentBacking(x.Parent)
	}
	return "", nil
}

// parentBacking turns a nil *T parent into a nil interface (not an interface
// holding a nil pointer, which would not end the chain).
func parentBacking[T any, P interface {
	*T
	types.BaseVirtualDeviceBackingInfo
}](p P) types.BaseVirtualDeviceBackingInfo {
	if p == nil {
		return nil
	}
	return p
}

func guestNICs(nics []types.GuestNicInfo) []GuestNIC {
	out := make([]GuestNIC, 0, len(nics))
	for _, n := range nics {
		g := GuestNIC{Network: n.Network, MACAddress: n.MacAddress, DeviceConfigID: n.DeviceConfigId, IPAddresses: n.IpAddress}
		if n.IpConfig != nil {
			for _, a := range n.IpConfig.IpAddress {
				if !slices.Contains(g.IPAddresses, a.IpAddress) {
					g.IPAddresses = append(g.IPAddresses, a.IpAddress)
				}
			}
		}
		out = append(out, g)
	}
	return out
}

// IPFilter chooses the node IP among the guest's addresses.
type IPFilter struct {
	// Network, when set, limits the choice to addresses inside it (the
	// static IP's subnet, or a user's node_ip_cidr).
	Network *net.IPNet
	// IPv6 allows global IPv6 addresses when no IPv4 address qualifies.
	IPv6 bool
}

// pick returns the first acceptable address: of the guest's virtual NICs in
// device order (APIPA 169.254/16, IPv6 link-local and adapters with no
// virtual NIC behind them, such as HNS vEthernet switches, never count),
// IPv4 before IPv6; guest.ipAddress only when no NIC list is reported.
func (f IPFilter) pick(nics []GuestNIC, primary string) string {
	var cands []string
	for _, n := range nics {
		if n.DeviceConfigID < 0 || strings.HasPrefix(strings.ToLower(n.Network), "vethernet") {
			continue
		}
		cands = append(cands, n.IPAddresses...)
	}
	if len(nics) == 0 && primary != "" {
		cands = append(cands, primary)
	}
	var v6 string
	for _, a := range cands {
		ip := net.ParseIP(a)
		if ip == nil || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		if f.Network != nil && !f.Network.Contains(ip) {
			continue
		}
		if ip.To4() != nil {
			return ip.String()
		}
		if f.IPv6 && v6 == "" {
			v6 = ip.String()
		}
	}
	return v6
}

// ListVMs reads every virtual machine and template in a folder and its
// subfolders (the whole inventory when folder is the zero reference), with
// the properties ReadVMs reads: one container view and one retrieval,
// however many VMs there are. Inventory paths are not read.
func (c *Client) ListVMs(ctx context.Context, folder types.ManagedObjectReference) ([]*VMInfo, error) {
	root := folder
	if root.Value == "" {
		root = c.Client.ServiceContent.RootFolder
	}
	v, err := view.NewManager(c.Client.Client).CreateContainerView(ctx, root, []string{TypeVirtualMachine}, true)
	if err != nil {
		return nil, fmt.Errorf("listing virtual machines: %w", err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{TypeVirtualMachine}, vmProperties, &vms); err != nil {
		return nil, fmt.Errorf("listing virtual machines: %w", err)
	}
	out := make([]*VMInfo, 0, len(vms))
	for i := range vms {
		out = append(out, vmInfo(&vms[i]))
	}
	return out, nil
}
