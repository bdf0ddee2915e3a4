package vcsim

import (
	"context"
	"fmt"
	"path"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"
)

// Inventory names of the sandbox site. The datacenter, cluster, datastore and
// network names are the simulator's own.
const (
	clusterPath     = "/DC0/host/DC0_C0"
	clusterPoolPath = clusterPath + "/Resources"
	datastoreName   = "LocalDS_0"
	networkName     = "VM Network"
	templateFolder  = "templates"
	vmFolder        = "windows"
	// goldenFolder holds golden images: the build VMs and the templates
	// they become (the acceptance tests' default, acctest.GoldenFolder).
	goldenFolder = "golden"
)

// WindowsTemplate describes one base template: what a Windows Server image
// built by hand on vSphere looks like.
type WindowsTemplate struct {
	Version string // "2019", "2022", "2025"
	Name    string // VM name in the templates folder
	// GuestID is vSphere's guest OS identifier. Windows Server 2022 is
	// windows2019srvNext_64Guest (windows2022srvNext_64Guest is Server 2025).
	GuestID string
	Build   string // Windows build, e.g. "10.0.20348"
	Product string
	// Prepared marks a template an administrator made reachable over the
	// network before capturing it: an HTTPS WinRM listener with one
	// certificate issued for the template's own name, and OpenSSH Server
	// installed. Its disk (internal/sandbox/vmtools) carries them, and so
	// every clone shares that certificate, its private key and the SSH host
	// key. The others are stock: what Windows setup, VMware Tools and an
	// Administrator password leave.
	Prepared bool
}

// Templates are the base templates every sandbox has.
var Templates = []WindowsTemplate{
	{Version: "2019", Name: "win2019-base", GuestID: "windows2019srv_64Guest", Build: "10.0.17763", Product: "Windows Server 2019 Datacenter"},
	{Version: "2022", Name: "win2022-base", GuestID: "windows2019srvNext_64Guest", Build: "10.0.20348", Product: "Windows Server 2022 Datacenter"},
	// Windows Server 2025's guest id is windows2022srvNext_64Guest (vSphere
	// 8.0 U2 and later: VirtualMachineGuestOsIdentifier in govmomi's types).
	{Version: "2025", Name: "win2025-base", GuestID: "windows2022srvNext_64Guest", Build: "10.0.26100", Product: "Windows Server 2025 Datacenter"},
	{Version: PreparedVersion, Name: "win2022-prep", GuestID: "windows2019srvNext_64Guest", Build: "10.0.20348", Product: "Windows Server 2022 Datacenter", Prepared: true},
}

// PreparedVersion is the Templates key of the prepared template (a Windows
// Server 2022 with a WinRM HTTPS listener and OpenSSH Server).
const PreparedVersion = "2022-prepared"

// Annotation is the template's notes field, as an admin would write it.
func (t WindowsTemplate) Annotation() string {
	if t.Prepared {
		return fmt.Sprintf("%s (build %s); sandbox template prepared with a WinRM HTTPS listener (one certificate, for %s) and OpenSSH Server", t.Product, t.Build, t.Name)
	}
	return fmt.Sprintf("%s (build %s); sandbox base template", t.Product, t.Build)
}

// BuildKey is the ExtraConfig key that records a template's Windows build.
const BuildKey = "guestinfo.windows.build"

// Template hardware: what Microsoft's minimums plus room for containers need.
const (
	templateCPUs     = 2
	templateMemoryMB = 4096
	templateDiskGiB  = 60
)

// buildInventory creates the folders and templates and resolves the ids the
// sandbox exports.
func (s *Server) buildInventory(ctx context.Context, c *vim25.Client, logf func(string, ...any)) error {
	finder := find.NewFinder(c, true)
	dc, err := finder.Datacenter(ctx, s.Datacenter)
	if err != nil {
		return fmt.Errorf("vcsim: finding datacenter %s: %w", s.Datacenter, err)
	}
	finder.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	if err != nil {
		return fmt.Errorf("vcsim: reading folders of %s: %w", s.Datacenter, err)
	}

	pool, err := finder.ResourcePool(ctx, clusterPoolPath)
	if err != nil {
		return fmt.Errorf("vcsim: finding resource pool %s: %w", clusterPoolPath, err)
	}
	ds, err := finder.Datastore(ctx, datastoreName)
	if err != nil {
		return fmt.Errorf("vcsim: finding datastore %s: %w", datastoreName, err)
	}
	network, err := finder.Network(ctx, networkName)
	if err != nil {
		return fmt.Errorf("vcsim: finding network %s: %w", networkName, err)
	}
	s.ResourcePoolID = pool.Reference().Value
	s.DatastoreID = ds.Reference().Value
	s.NetworkID = network.Reference().Value

	tmplFolder, err := folders.VmFolder.CreateFolder(ctx, templateFolder)
	if err != nil {
		return fmt.Errorf("vcsim: creating folder %s: %w", templateFolder, err)
	}
	if _, err := folders.VmFolder.CreateFolder(ctx, vmFolder); err != nil {
		return fmt.Errorf("vcsim: creating folder %s: %w", vmFolder, err)
	}
	if _, err := folders.VmFolder.CreateFolder(ctx, goldenFolder); err != nil {
		return fmt.Errorf("vcsim: creating folder %s: %w", goldenFolder, err)
	}
	vmRoot := path.Join("/", s.Datacenter, "vm")
	s.TemplateFolder = path.Join(vmRoot, templateFolder)
	s.Folder = path.Join(vmRoot, vmFolder)
	s.GoldenFolder = path.Join(vmRoot, goldenFolder)

	s.Templates = make(map[string]string, len(Templates))
	for _, t := range Templates {
		if err := createTemplate(ctx, t, tmplFolder, pool, ds, network); err != nil {
			return err
		}
		s.Templates[t.Version] = path.Join(s.TemplateFolder, t.Name)
		logf("vcsim: created template %s (%s, %s)", s.Templates[t.Version], t.GuestID, t.Build)
	}
	return s.buildSite(ctx, c, finder, folders)
}

// createTemplate creates t's VM in folder and marks it as a template.
func createTemplate(ctx context.Context, t WindowsTemplate, folder *object.Folder, pool *object.ResourcePool,
	ds *object.Datastore, network object.NetworkReference) error {
	devices, err := templateDevices(ctx, network)
	if err != nil {
		return fmt.Errorf("vcsim: devices of template %s: %w", t.Name, err)
	}
	deviceChange, err := devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
	if err != nil {
		return fmt.Errorf("vcsim: devices of template %s: %w", t.Name, err)
	}
	spec := types.VirtualMachineConfigSpec{
		Name:         t.Name,
		GuestId:      t.GuestID,
		NumCPUs:      templateCPUs,
		MemoryMB:     templateMemoryMB,
		Firmware:     string(types.GuestOsDescriptorFirmwareTypeEfi),
		Annotation:   t.Annotation(),
		ExtraConfig:  []types.BaseOptionValue{&types.OptionValue{Key: BuildKey, Value: t.Build}},
		Files:        &types.VirtualMachineFileInfo{VmPathName: fmt.Sprintf("[%s]", ds.Name())},
		DeviceChange: deviceChange,
	}
	task, err := folder.CreateVM(ctx, spec, pool, nil)
	if err != nil {
		return fmt.Errorf("vcsim: creating template %s: %w", t.Name, err)
	}
	res, err := task.WaitForResult(ctx)
	if err != nil {
		return fmt.Errorf("vcsim: creating template %s: %w", t.Name, err)
	}
	vm := object.NewVirtualMachine(folder.Client(), res.Result.(types.ManagedObjectReference))
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return fmt.Errorf("vcsim: marking %s as template: %w", t.Name, err)
	}
	return nil
}

// templateDevices is a Windows VM's hardware: an LSI Logic SAS controller
// (what vSphere picks for Windows Server) with a thin disk, and a VMXNET 3
// NIC on network.
func templateDevices(ctx context.Context, network object.NetworkReference) (object.VirtualDeviceList, error) {
	var devices object.VirtualDeviceList
	scsi, err := devices.CreateSCSIController("lsilogic-sas")
	if err != nil {
		return nil, err
	}
	devices = append(devices, scsi)

	const capacityKB = templateDiskGiB * 1024 * 1024
	disk := &types.VirtualDisk{
		VirtualDevice: types.VirtualDevice{
			Key: devices.NewKey(),
			Backing: &types.VirtualDiskFlatVer2BackingInfo{
				DiskMode:        string(types.VirtualDiskModePersistent),
				ThinProvisioned: types.NewBool(true),
			},
		},
		CapacityInKB:    capacityKB,
		CapacityInBytes: capacityKB * 1024,
	}
	devices.AssignController(disk, scsi.(types.BaseVirtualController))
	devices = append(devices, disk)

	backing, err := network.EthernetCardBackingInfo(ctx)
	if err != nil {
		return nil, err
	}
	nic, err := devices.CreateEthernetCard("vmxnet3", backing)
	if err != nil {
		return nil, err
	}
	return append(devices, nic), nil
}
