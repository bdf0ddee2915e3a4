package winsim

import (
	"context"
	"fmt"
	"strings"
)

// The services of a stock Windows Server 2019, 2022 or 2025 with VMware
// Tools installed, as the service control manager holds them after setup:
// those the provider and its steps touch or depend on, and the core ones
// they stand on. Each entry is the service's registry key under
// HKLM\SYSTEM\CurrentControlSet\Services (ImagePath, Start,
// DelayedAutostart, ObjectName, DependOnService). Names, display names and
// start types follow Microsoft's "Guidance on disabling system services on Windows
// Server with Desktop Experience"
// (https://learn.microsoft.com/windows-server/security/windows-services/security-guidelines-for-disabling-system-services-in-windows-server:
// "As of Windows Server 2019, the configurations in this article are
// actually the default settings"); the three releases agree on every
// service here. The svchost groups (ImagePath), accounts (ObjectName) and
// dependencies are those `sc.exe qc <name>` prints on a fresh
// installation; no public Microsoft page lists them, so they stand to be
// checked against a real template (issue 33). What the simulator leaves
// out, and why:
//   - Trigger starts (wuauserv, W32Time, Dnscache start on events): not
//     modelled; such a service is Manual or Automatic as its Start value
//     says and starts when something starts it.
//   - Dependencies on kernel drivers (mpssvc on mpsdrv, WinRM on HTTP,
//     LanmanServer on srv2, Dnscache on nsiproxy): drivers are not
//     services the simulator runs, so those entries are left out of
//     DependOnService; dependencies between the services below are kept.
//   - What a service does: none of the Windows services here does
//     anything the simulator models except VMTools (guest operations,
//     vmtoolsd below); stopping one of the others is refused as not
//     modelled (stockStopRefused), never pretended.
//   - Every other service of the installation (Server Core lists about
//     130): not modelled; Get-Service does not show them.

// VMToolsService is VMware Tools' service: vmtoolsd.exe, which carries
// out vCenter's guest operations in the guest (VMware Tools
// Administration, "VMware Tools Services":
// https://docs.vmware.com/en/VMware-Tools/12.4.0/com.vmware.vsphere.vmwaretools.doc/GUID-0BD592B1-A300-4C09-808A-BB447FAE2C2A.html,
// "The VMware Tools services start when the guest operating system
// starts"; "Runs programs, commands, and file-system operations in guest
// operating system to enhance guest automation").
const VMToolsService = "VMTools"

// vmtoolsdPath is where the VMware Tools installer puts vmtoolsd.exe, and
// vmtoolsdVersion the VMware Tools release the stock disk carries.
const (
	vmtoolsdPath    = `C:\Program Files\VMware\VMware Tools\vmtoolsd.exe`
	vmtoolsdVersion = "12.5.0"
	trustedInstPath = `C:\Windows\servicing\TrustedInstaller.exe`
	svchost         = `%SystemRoot%\system32\svchost.exe`
)

// Service accounts as ObjectName holds them.
const (
	accountLocalSystem    = "LocalSystem"
	accountLocalService   = `NT AUTHORITY\LocalService`
	accountNetworkService = `NT AUTHORITY\NetworkService`
)

// stockService is one stock service and whether svchost.exe shares its
// process with others (Type SERVICE_WIN32_SHARE_PROCESS, 0x20).
type stockService struct {
	Service
	shared bool
}

func stockServices() []stockService {
	host := func(name, display, group, account, startup string, delayed bool, deps ...string) stockService {
		return stockService{shared: true, Service: Service{Name: name, DisplayName: display,
			BinaryPathName: svchost + " -k " + group, StartupType: startup, DelayedAutoStart: delayed,
			ObjectName: account, DependOnService: deps}}
	}
	return []stockService{
		host("RpcEptMapper", "RPC Endpoint Mapper", "RPCSS -p", accountNetworkService, StartupAutomatic, false),
		host("DcomLaunch", "DCOM Server Process Launcher", "DcomLaunch -p", accountLocalSystem, StartupAutomatic, false),
		host("RpcSs", "Remote Procedure Call (RPC)", "rpcss -p", accountNetworkService, StartupAutomatic, false, "RpcEptMapper", "DcomLaunch"),
		host("EventLog", "Windows Event Log", "LocalServiceNetworkRestricted -p", accountLocalService, StartupAutomatic, false),
		host("BFE", "Base Filtering Engine", "LocalServiceNoNetworkFirewall -p", accountLocalService, StartupAutomatic, false, "RpcSs"),
		host("mpssvc", "Windows Defender Firewall", "LocalServiceNoNetworkFirewall -p", accountLocalService, StartupAutomatic, false, "BFE"),
		host("SystemEventsBroker", "System Events Broker", "DcomLaunch -p", accountLocalSystem, StartupAutomatic, false, "RpcEptMapper", "RpcSs"),
		host("Schedule", "Task Scheduler", "netsvcs -p", accountLocalSystem, StartupAutomatic, false, "RpcSs", "SystemEventsBroker"),
		host("nsi", "Network Store Interface Service", "LocalService -p", accountLocalService, StartupAutomatic, false, "RpcSs"),
		host("Dnscache", "DNS Client", "NetworkService -p", accountNetworkService, StartupAutomatic, false, "nsi"),
		host("LanmanServer", "Server", "smbsvcs", accountLocalSystem, StartupAutomatic, false),
		host("W32Time", "Windows Time", "LocalService", accountLocalService, StartupManual, false),
		// Windows Remote Management: "Automatic (Delayed Start)" on Windows
		// Server (the guidance above lists WinRM as Automatic; the delayed
		// start is Windows Server's since 2008 R2:
		// https://learn.microsoft.com/windows/win32/winrm/installation-and-configuration-for-windows-remote-management,
		// "the WinRM service starts automatically on Windows Server").
		host("WinRM", "Windows Remote Management (WS-Management)", "NetworkService -p", accountNetworkService, StartupAutomatic, true, "RpcSs"),
		host("wuauserv", "Windows Update", "netsvcs -p", accountLocalSystem, StartupManual, false, "RpcSs"),
		{Service: Service{Name: "TrustedInstaller", DisplayName: "Windows Modules Installer", BinaryPathName: `%SystemRoot%\servicing\TrustedInstaller.exe`,
			StartupType: StartupManual, ObjectName: accountLocalSystem}},
		{Service: Service{Name: VMToolsService, DisplayName: "VMware Tools", BinaryPathName: `"` + vmtoolsdPath + `"`,
			Description: "Provides support for synchronizing objects between the host and guest operating systems.",
			StartupType: StartupAutomatic, ObjectName: accountLocalSystem}},
	}
}

// installStockServices writes the stock services into a new disk's
// registry and, with VMware Tools, vmtoolsd.exe onto its filesystem.
func installStockServices(reg *registry, v *vfs, vmwareTools bool) error {
	t := &serviceTable{reg: reg}
	for _, s := range stockServices() {
		if s.Name == VMToolsService && !vmwareTools {
			continue
		}
		if t.isService(s.Name) {
			continue
		}
		if err := t.create(s.Service); err != nil {
			return err
		}
		if s.shared {
			if err := reg.setMany(serviceKey(s.Name), map[string]RegValue{"Type": {Type: RegDWord, DWord: 0x20}}); err != nil {
				return err
			}
		}
	}
	if !vmwareTools {
		return nil
	}
	if err := v.MkdirAll(parentOf(vmtoolsdPath)); err != nil {
		return err
	}
	return v.WriteFile(vmtoolsdPath, []byte(simulatedExecutableMagic+"\r\nvmtoolsd "+vmtoolsdVersion+"\r\n"), false)
}

// stockProgram reports whether a service's program is one of Windows' own
// service hosts (svchost.exe, TrustedInstaller.exe), whose services the
// simulator holds but does not model the work of.
func stockProgram(program string) bool {
	return program == "svchost.exe" || program == "trustedinstaller.exe"
}

// stockStopRefused is the refusal of a stop of a Windows service whose
// absence the simulator does not model (the host going down stops them all
// the same).
func (h *Host) stockStopRefused(s Service) error {
	exe, _ := splitImagePath(func(string) bool { return false }, expandPercent(s.BinaryPathName, h.ServiceEnvironment()))
	program, _, err := h.ResolveProgram(exe)
	if err != nil || !stockProgram(program) {
		return nil
	}
	return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "stop",
		Refused: fmt.Sprintf("winsim: the simulated host does not model Windows without its %s service (%s); refusing to stop it", s.DisplayName, s.Name)}
}

func init() {
	// svchost.exe and TrustedInstaller.exe run only as the service control
	// manager starts them: the simulator holds their services Running
	// until stopped (the host going down), and models nothing they do.
	host := func(ctx context.Context, p *Process) int {
		if p.Service == "" {
			fmt.Fprintf(p.Stderr, "winsim: %s runs only as a service host; refusing to run it from a command line\r\n", p.Path)
			return 1
		}
		p.ServiceRunning()
		<-ctx.Done()
		return 0
	}
	// Their PE subsystem is not sourced here, and it decides nothing: each
	// refuses to run from a command line, the only place a caller's wait
	// depends on it.
	registerProgram("svchost.exe", SubsystemConsole, host)
	registerProgram("trustedinstaller.exe", SubsystemConsole, host)
	registerProgram("vmtoolsd", SubsystemConsole, runVMToolsd)
}

// runVMToolsd is vmtoolsd.exe as the VMTools service: while it runs, the
// host takes guest operations (guestops.go); when it ends (Stop-Service,
// Restart-Service, the host going down) they fail until it runs again,
// and vmtoolsd's memory of the programs it started goes with it.
func runVMToolsd(ctx context.Context, p *Process) int {
	if !strings.EqualFold(p.Service, VMToolsService) {
		fmt.Fprintf(p.Stderr, "winsim: vmtoolsd.exe is modelled as the %s service only; refusing to run it from a command line\r\n", VMToolsService)
		return 1
	}
	h := p.Host
	h.toolsStarted()
	p.ServiceRunning()
	<-ctx.Done()
	h.toolsStopped()
	return 0
}
