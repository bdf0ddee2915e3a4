package vmtools

import (
	"context"
	"encoding/xml"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// A Windows guest customization as vCenter and VMware Tools run it, in place
// of vcsim's, which completes in the PowerOn task itself (CustomizationStarted,
// then CustomizationSucceeded, before the guest has booted).
//
// Sources:
//   - vSphere API, CustomizationWinOptions.reboot: "reboot: Reboot the machine
//     after running sysprep. This will cause values specified in the
//     sysprep.xml to be applied immediately" (the default);
//     CustomizationSysprep/CustomizationGuiUnattended: "These values are plugged
//     directly into the sysprep.xml file that VirtualCenter stores on the target
//     virtual disk" (https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/CustomizationWinOptions,
//     .../CustomizationSysprep/). VMware's KB 2003797 counts Sysprep's reboots
//     in a customization: "1 (seal & mini-setup)".
//   - VMware Tools' deployPkg (open-vm-tools, open-vm-tools/libDeployPkg
//     linuxDeployment.c, Deploy): it first reports TOOLSDEPLOYPKG_RUNNING to
//     vCenter (SetCustomizationStatusInVmx), runs the package's command, and on
//     success leaves the status to the guest's customization to end. vCenter
//     turns the status into guest.customizationInfo (vSphere API 7.0.2.0:
//     IDLE, PENDING from the clone on, RUNNING, SUCCEEDED, FAILED) and into the
//     events CustomizationStartedEvent, CustomizationSucceeded and the
//     CustomizationFailed family, each with its logLocation: on Windows
//     C:\Windows\TEMP\vmware-imc\guestcust.log, beside toolsDeployPkg.log
//     (VMware's own log collector gathers SysTempDir()\vmware-imc from
//     customized guests). guestcust.log names the accounts it uses and masks
//     their passwords as '*****'.
//   - Windows Setup: sysprep /generalize /oobe /reboot /unattend:<file> runs
//     the generalize pass now; at the next boot the specialize pass (computer
//     name, network, time zone) and then OOBE with the oobeSystem pass, whose
//     Microsoft-Windows-Shell-Setup | UserAccounts | AdministratorPassword sets
//     the built-in Administrator's password
//     (https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/sysprep-command-line-options,
//     .../how-configuration-passes-work). On Windows Server the built-in
//     Administrator must have a password: without one in the answer file, OOBE
//     stops at the page that asks for it (Microsoft Learn, AdministratorPassword:
//     "For Windows Server 2008, the built-in Administrator must have a
//     password"; "Setup prompts you to configure a complex password"), so an
//     unattended customization never ends. The vSphere API sets a blank
//     password when CustomizationGuiUnattended.password is unset.
//
// What the sandbox models of it: the clone's status PENDING (from its first
// power-on: customizationPending says why not from the clone on); then
// VMware Tools starts (tools running), RUNNING and
// CustomizationStartedEvent, the package's logs in vmware-imc, sysprep.xml at
// SysprepAnswerFile and Setup's cached copy (winsim.PlaceAnswerFile); the
// reboot (tools not running for the reboot's downtime); then specialize and
// OOBE, after which the host serves and, once VMware Tools runs again,
// SUCCEEDED and CustomizationSucceeded. Without an AdministratorPassword the
// guest stays at OOBE's password page: no host serves, the status stays
// RUNNING and no event ends it, as on a real vCenter, where the
// customization then never finishes. An encrypted password (PlainText false:
// vCenter decrypts it with its own key) is not modelled: the customization
// fails (FAILED, CustomizationFailed) saying so. Guest operations during the
// customization's boots are not modelled (GuestOperationsUnavailable).

// SysprepAnswerFile is where vCenter's Windows guest customization leaves the
// sysprep.xml it builds from a CustomizationSysprep; Setup, run with it,
// caches it in C:\Windows\Panther (winsim.PlaceAnswerFile). The API names no
// path; C:\sysprep\sysprep.xml is where VMware's Windows customization
// stores it. Nothing removes it after the customization: the guest's owner
// must.
const SysprepAnswerFile = `C:\sysprep\sysprep.xml`

// Where VMware Tools' deployPkg keeps its logs on Windows.
const (
	CustomizationLogDir = `C:\Windows\TEMP\vmware-imc`
	CustomizationLog    = CustomizationLogDir + `\guestcust.log`
	DeployPkgLog        = CustomizationLogDir + `\toolsDeployPkg.log`
)

// Customization phases, reported in Event.Customization as they happen.
const (
	PhaseStarted       = "started"       // VMware Tools ran the package: RUNNING, CustomizationStartedEvent
	PhaseGeneralize    = "generalize"    // sysprep /generalize /oobe /reboot with vCenter's sysprep.xml
	PhaseReboot        = "reboot"        // sysprep's reboot: VMware Tools stops
	PhaseSpecialize    = "specialize"    // the next boot: computer name, network, time zone
	PhaseOOBE          = "oobeSystem"    // the Administrator password, then the host serves
	PhaseWaitsPassword = "oobe-password" // no AdministratorPassword: OOBE waits for one, for ever
	PhaseSucceeded     = "succeeded"     // SUCCEEDED, CustomizationSucceeded
	PhaseFailed        = "failed"        // FAILED, CustomizationFailed
)

// customizationAnswerFile renders the sysprep.xml of a customization: the
// computer name (specialize) and the Administrator password (oobeSystem
// UserAccounts) as the spec gives it, plain text when PlainText is true.
func customizationAnswerFile(s *types.CustomizationSysprep) ([]byte, error) {
	type password struct {
		Value     string `xml:"Value"`
		PlainText bool   `xml:"PlainText"`
	}
	type credentials struct {
		Domain   string `xml:"Domain"`
		Username string `xml:"Username"`
		Password string `xml:"Password"`
	}
	type identification struct {
		Credentials     credentials `xml:"Credentials"`
		JoinDomain      string      `xml:"JoinDomain"`
		MachineObjectOU string      `xml:"MachineObjectOU,omitempty"`
	}
	type component struct {
		Name           string          `xml:"name,attr"`
		ComputerName   string          `xml:"ComputerName,omitempty"`
		Identification *identification `xml:"Identification,omitempty"`
		AdminPassword  *password       `xml:"UserAccounts>AdministratorPassword,omitempty"`
	}
	type settings struct {
		Pass      string    `xml:"pass,attr"`
		Component component `xml:"component"`
	}
	type unattend struct {
		XMLName  xml.Name   `xml:"urn:schemas-microsoft-com:unattend unattend"`
		Settings []settings `xml:"settings"`
	}
	u := unattend{}
	if n, ok := s.UserData.ComputerName.(*types.CustomizationFixedName); ok {
		u.Settings = append(u.Settings, settings{Pass: "specialize", Component: component{Name: "Microsoft-Windows-Shell-Setup", ComputerName: n.Name}})
	}
	if id := s.Identification; id.JoinDomain != "" {
		join := &identification{JoinDomain: id.JoinDomain, MachineObjectOU: id.DomainOU,
			Credentials: credentials{Domain: id.JoinDomain, Username: id.DomainAdmin}}
		if p := id.DomainAdminPassword; p != nil {
			join.Credentials.Password = p.Value
		}
		u.Settings = append(u.Settings, settings{Pass: "specialize", Component: component{Name: "Microsoft-Windows-UnattendedJoin", Identification: join}})
	}
	oobe := component{Name: "Microsoft-Windows-Shell-Setup"}
	if p := s.GuiUnattended.Password; p != nil {
		oobe.AdminPassword = &password{Value: p.Value, PlainText: p.PlainText}
	}
	u.Settings = append(u.Settings, settings{Pass: "oobeSystem", Component: oobe})
	b, err := xml.MarshalIndent(u, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}

// takeCustomization keeps a clone's Windows customization from vcsim (which
// would run it inside the PowerOn task) for the sandbox to run at the
// clone's first boots. It refuses what vCenter refuses before the clone: a
// NicSettingMap whose length is not the clone's adapters' (NicSettingMismatch).
func takeCustomization(src *simulator.VirtualMachine, req *types.CloneVM_Task) (*types.CustomizationSysprep, error) {
	custom := req.Spec.Customization
	if custom == nil || req.Spec.Template {
		return nil, nil
	}
	s, ok := custom.Identity.(*types.CustomizationSysprep)
	if !ok {
		return nil, nil
	}
	if nics := cloneNICs(src, req); len(custom.NicSettingMap) != nics {
		return nil, fmt.Errorf("NicSettingMismatch: the customization configures %d network adapters, the clone %s has %d", len(custom.NicSettingMap), req.Name, nics)
	}
	req.Spec.Customization = nil
	return s, nil
}

// cloneNICs counts the clone's network adapters: the source's, with the
// clone spec's adds and removes.
func cloneNICs(src *simulator.VirtualMachine, req *types.CloneVM_Task) int {
	n := 0
	if src.Config != nil {
		for _, d := range src.Config.Hardware.Device {
			if _, ok := d.(types.BaseVirtualEthernetCard); ok {
				n++
			}
		}
	}
	changes := append([]types.BaseVirtualDeviceConfigSpec(nil), req.Spec.Location.DeviceChange...)
	if req.Spec.Config != nil {
		changes = append(changes, req.Spec.Config.DeviceChange...)
	}
	for _, c := range changes {
		spec := c.GetVirtualDeviceConfigSpec()
		if _, ok := spec.Device.(types.BaseVirtualEthernetCard); !ok {
			continue
		}
		switch spec.Operation {
		case types.VirtualDeviceConfigSpecOperationAdd:
			n++
		case types.VirtualDeviceConfigSpecOperationRemove:
			n--
		}
	}
	return n
}

// customizationPending marks a customized clone as vCenter does once the
// clone exists: config.tools.pendingCustomization and status PENDING. The
// sandbox does it at the clone's first power-on, just before the
// customization runs: vcsim registers the clone before it has its name and
// BIOS UUID, so no hook sees the clone request's VM earlier.
func (h *Hosts) customizationPending(st *vmState) {
	h.updateVM(st, func(vm *simulator.VirtualMachine) []types.PropertyChange {
		return []types.PropertyChange{
			{Name: "config.tools.pendingCustomization", Val: uuid.NewString()},
			{Name: "guest.customizationInfo", Val: &types.GuestInfoCustomizationInfo{CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_PENDING)}},
		}
	})
}

// customizeWindows runs a clone's customization up to the boot in which its
// host serves: the first boot (deployPkg, generalize, reboot), then
// specialize and OOBE. It reports whether the host may start: false when
// OOBE waits for a password or the customization failed.
func (h *Hosts) customizeWindows(ctx context.Context, st *vmState, ev powerEvent, s *types.CustomizationSysprep) (bool, error) {
	h.customizationPending(st)
	start := time.Now()
	// VMware Tools starts in the first boot and runs the package.
	if err := h.play(ctx, latency.WindowsBoot); err != nil {
		return false, err
	}
	h.reportGuest(st, true, false)
	h.emit(Event{ComputerName: st.computer, Up: true, Customization: PhaseStarted})
	h.updateVM(st, func(*simulator.VirtualMachine) []types.PropertyChange {
		return []types.PropertyChange{
			{Name: "config.tools.pendingCustomization", Val: ""},
			{Name: "guest.customizationInfo", Val: &types.GuestInfoCustomizationInfo{CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_RUNNING), StartTime: &start}},
		}
	})
	h.postCustomizationEvent(st, ev, &types.CustomizationStartedEvent{})
	h.guestLog(st, DeployPkgLog, "Reading cabinet file and extracting it to "+CustomizationLogDir,
		"Executing traditional GOSC workflow", "Ran DeployPkg_DeployPackageFromFile successfully")
	if p, d := s.GuiUnattended.Password, s.Identification.DomainAdminPassword; (p != nil && !p.PlainText && p.Value != "") || (d != nil && !d.PlainText && d.Value != "") {
		msg := "sandbox: an encrypted CustomizationPassword (plainText false) is not modelled; give it as plain text"
		h.guestLog(st, CustomizationLog, "Error: "+msg)
		h.failCustomization(st, ev, start, msg)
		return false, nil
	}

	// Generalize, with vCenter's sysprep.xml; Setup caches the answer file.
	answer, err := customizationAnswerFile(s)
	if err != nil {
		return false, err
	}
	if err := winsim.PlaceAnswerFile(st.dir, SysprepAnswerFile, answer); err != nil {
		return false, err
	}
	h.guestLog(st, CustomizationLog, "Customization started", "Running sysprep /generalize /oobe /reboot /quiet /unattend:"+SysprepAnswerFile,
		"Administrator password: '*****'")
	h.emit(Event{ComputerName: st.computer, Customization: PhaseGeneralize})
	if err := h.play(ctx, latency.SysprepGeneralize); err != nil {
		return false, err
	}

	// Sysprep's reboot: VMware Tools stops until the next boot.
	h.reportGuest(st, false, false)
	h.emit(Event{ComputerName: st.computer, Down: true, Customization: PhaseReboot})
	if err := h.rebootPause(ctx); err != nil {
		return false, err
	}

	h.guestLog(st, CustomizationLog, "Specialize: computer name "+st.computer)
	h.emit(Event{ComputerName: st.computer, Customization: PhaseSpecialize})
	if err := h.play(ctx, latency.SysprepSpecialize); err != nil {
		return false, err
	}
	if err := h.unattendedJoin(ctx, st, s); err != nil {
		return false, err
	}
	if p := s.GuiUnattended.Password; p == nil || p.Value == "" {
		// Windows Server's OOBE asks for the Administrator's password and
		// waits; VMware Tools' deployPkg never hears of an end.
		h.logf("guests: %s waits at OOBE for an Administrator password: its customization has none (guiUnattended.password unset)", st.computer)
		h.emit(Event{ComputerName: st.computer, Customization: PhaseWaitsPassword})
		return false, nil
	}
	h.emit(Event{ComputerName: st.computer, Customization: PhaseOOBE})
	if err := h.play(ctx, latency.SysprepOOBE); err != nil {
		return false, err
	}
	h.mu.Lock()
	st.customizing = &customizationRun{start: start, ev: ev}
	h.mu.Unlock()
	return true, nil
}

// customizationRun is a customization waiting for its guest's last boot.
type customizationRun struct {
	start time.Time
	ev    powerEvent
}

// customizationDone ends a customization once VMware Tools runs in its
// guest's last boot: SUCCEEDED and CustomizationSucceeded.
func (h *Hosts) customizationDone(st *vmState) {
	h.mu.Lock()
	run := st.customizing
	st.customizing = nil
	h.mu.Unlock()
	if run == nil {
		return
	}
	end := time.Now()
	h.guestLog(st, CustomizationLog, "Customization completed")
	h.updateVM(st, func(*simulator.VirtualMachine) []types.PropertyChange {
		return []types.PropertyChange{{Name: "guest.customizationInfo", Val: &types.GuestInfoCustomizationInfo{
			CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_SUCCEEDED), StartTime: &run.start, EndTime: &end,
		}}}
	})
	h.postCustomizationEvent(st, run.ev, &types.CustomizationSucceeded{})
	h.emit(Event{ComputerName: st.computer, Customization: PhaseSucceeded})
}

func (h *Hosts) failCustomization(st *vmState, ev powerEvent, start time.Time, msg string) {
	end := time.Now()
	h.updateVM(st, func(*simulator.VirtualMachine) []types.PropertyChange {
		return []types.PropertyChange{{Name: "guest.customizationInfo", Val: &types.GuestInfoCustomizationInfo{
			CustomizationStatus: string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_FAILED), StartTime: &start, EndTime: &end, ErrorMsg: msg,
		}}}
	})
	h.postCustomizationEvent(st, ev, &types.CustomizationFailed{Reason: msg})
	h.emit(Event{ComputerName: st.computer, Customization: PhaseFailed})
}

// rebootPause is sysprep's reboot: the model's restart when it is on, else
// Options.RebootDelay (winsim's default when unset). It ends early, with
// ctx's error, when the VM powers off or the sandbox closes.
func (h *Hosts) rebootPause(ctx context.Context) error {
	if h.opts.Latency.On() {
		return h.play(ctx, latency.WindowsRestart)
	}
	d := h.opts.RebootDelay
	if d == 0 {
		d = winsim.DefaultRebootDelay
	}
	return h.opts.Latency.Sleep(ctx, d)
}

// play takes op's played duration (nothing when the model is off), or less
// when ctx ends: the VM powered off or the sandbox closed.
func (h *Hosts) play(ctx context.Context, op latency.Op) error {
	return h.opts.Latency.Wait(ctx, op)
}

// guestLog appends lines to one of deployPkg's logs on the guest's disk.
func (h *Hosts) guestLog(st *vmState, path string, lines ...string) {
	var b []byte
	for _, l := range lines {
		b = append(b, time.Now().UTC().Format("2006-01-02T15:04:05.000Z")+" "+l+"\r\n"...)
	}
	if err := winsim.PlaceFile(st.dir, path, b, true); err != nil {
		h.logf("guests: %s: %v", st.computer, err)
	}
}

// updateVM applies property changes to a VM under the simulator's lock.
func (h *Hosts) updateVM(st *vmState, changes func(*simulator.VirtualMachine) []types.PropertyChange) {
	vm, ok := h.reg.Get(st.ref).(*simulator.VirtualMachine)
	if !ok {
		return
	}
	ctx := &simulator.Context{Context: context.Background(), Map: h.reg}
	ctx.WithLock(vm, func() {
		if vm.Config != nil && vm.Config.Tools == nil {
			vm.Config.Tools = new(types.ToolsConfigInfo)
		}
		ctx.Update(vm, changes(vm))
	})
}

// postCustomizationEvent posts one of vCenter's customization events for
// the VM, with the guest's log location, as vCenter does.
func (h *Hosts) postCustomizationEvent(st *vmState, ev powerEvent, e types.BaseEvent) {
	vmEvent := types.VmEvent{Event: types.Event{Vm: &types.VmEventArgument{
		EntityEventArgument: types.EntityEventArgument{Name: ev.name}, Vm: st.ref,
	}}}
	custom := types.CustomizationEvent{VmEvent: vmEvent, LogLocation: CustomizationLog}
	switch x := e.(type) {
	case *types.CustomizationStartedEvent:
		x.CustomizationEvent = custom
	case *types.CustomizationSucceeded:
		x.CustomizationEvent = custom
	case *types.CustomizationFailed:
		x.CustomizationEvent = custom
	}
	ctx := &simulator.Context{Context: context.Background(), Map: h.reg, Session: &simulator.Session{}}
	m := h.reg.EventManager()
	ctx.WithLock(m, func() { m.PostEvent(ctx, &types.PostEvent{EventToPost: e}) })
}
