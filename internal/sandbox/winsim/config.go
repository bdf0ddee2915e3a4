package winsim

import (
	"regexp"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// Ports selects the TCP ports a host listens on. 0 picks a free port (tests),
// PortDisabled turns a listener off. A nil *Ports in HostConfig means the
// Windows defaults 5985, 5986 and 22.
type Ports struct {
	WinRM      int // HTTP listener
	WinRMHTTPS int // HTTPS listener
	SSH        int
}

// PortDisabled turns a listener off.
const PortDisabled = -1

// DefaultPorts are the ports a Windows Server host uses.
func DefaultPorts() Ports { return Ports{WinRM: 5985, WinRMHTTPS: 5986, SSH: 22} }

// HostConfig describes one simulated Windows Server host.
type HostConfig struct {
	ComputerName string // also $env:COMPUTERNAME and the NTLM target name
	IP           string // listen address, e.g. 127.0.0.2 (default 127.0.0.1)
	// AdminUser is the built-in Administrator account (RID 500), whatever
	// its name (default "Administrator"); AdminPassword its password.
	AdminUser     string
	AdminPassword string
	// LocalAccounts are the other local accounts on the disk, with their
	// groups. A member of Administrators among them logs on over WinRM or
	// SSH with a filtered token unless LocalAccountTokenFilterPolicy is 1
	// (accounts.go, uac.go).
	LocalAccounts []LocalAccount
	WindowsBuild  string // "10.0.20348" (default)
	UBR           int    // update build revision, the fourth version number
	BIOSUUID      string
	// NumCPU and MemoryMB are the VM's hardware, reported by the simulated
	// kubelet as the Node's capacity (defaults 2 and 4096).
	NumCPU   int
	MemoryMB int

	// Dir is the host's on-disk root ($SANDBOX_DIR/hosts/<computer name>/): fs/,
	// scripts.log and services.json live there. Reusing a Dir keeps the disk,
	// like powering a VM on again.
	Dir string

	// TLSCertPEM/TLSKeyPEM serve the HTTPS listener; when empty a self-signed
	// certificate for the computer name and IP is generated.
	TLSCertPEM, TLSKeyPEM []byte
	// SSHHostKeyPEM is the SSH host key (private, PEM) a new disk starts
	// with: written to SSHHostKeyFile when the disk has none at Start. When
	// empty a new Ed25519 key is made, as sshd does at its first start.
	SSHHostKeyPEM []byte
	// AuthorizedKeys lists public keys (authorized_keys format) allowed to log in
	// as the administrator over SSH.
	AuthorizedKeys []byte

	Ports *Ports
	// Firewall turns on Windows Defender Firewall's inbound filtering of
	// the listeners' ports: connections to one that no rule of
	// firewall.json admits (for the profile and the clients' place) are
	// dropped, unanswered, whether a listener serves it or not
	// (firewallAdmits, firewall_drop.go). nil: no filtering. A disk written by Install also decides which listeners
	// exist and the HTTPS certificate, whatever Ports and TLSCertPEM say.
	Firewall *Firewall
	// WinRM is the WinRM service's configuration (winrm get
	// winrm/config/service); nil is a stock Windows Server's (StockWinRM).
	// Which listeners exist is Ports'.
	WinRM *WinRMService

	// BootDelay holds the listeners closed this long after Start, like a guest
	// still booting. RebootDelay is the downtime of a reboot (default 2s).
	BootDelay   time.Duration
	RebootDelay time.Duration
	// Latency times what Windows does (internal/sandbox/latency): service
	// starts, downloads at the site's link speed, a cumulative update's
	// install, the restart that completes it. nil takes no time.
	Latency *latency.Model

	Faults Faults

	// ServiceStartTimeout is how long the service control manager waits for
	// a service program to report SERVICE_RUNNING before failing the start
	// with error 1053 and ending the process: Windows' default, 30 seconds
	// (ServicesPipeTimeout, https://learn.microsoft.com/troubleshoot/windows-server/system-management-components/service-not-start-events-7000-7011-time-out-error).
	// Tests lower it.
	ServiceStartTimeout time.Duration

	// Programs adds native programs to this host by identity (see Process):
	// the simulated kubelet and the node agents plug in here, so the host
	// runs them when a service, a script or a HostProcess container starts
	// their executable, with whatever arguments and environment it was given.
	Programs map[string]Program

	// OnShutdown runs after the guest shut itself down (Stop-Computer,
	// shutdown.exe /s, sysprep.exe ... /shutdown): the script
	// has finished and the host has gone down, and stays down. The sandbox
	// powers the VM off in vSphere there. It runs on its own goroutine.
	OnShutdown func(h *Host)
	// OnStateChange runs when the host starts serving (up) and when it goes
	// down (reboot, shutdown, Stop, and Faults.RefuseConnections, which looks
	// the same from outside): the sandbox reports VMware Tools running or not
	// to vSphere there, which is how vCenter sees a guest reboot. It runs on
	// the goroutine that changed the state and must not block.
	OnStateChange func(h *Host, up bool)
	// OnScript runs when a script (or command line) has finished, with the
	// record Scripts lists: tests act at a step's end without polling the
	// log. It runs on the goroutine that ran the script and must not block.
	OnScript func(h *Host, r ScriptRecord)
	// OnGuestProgram runs when guest operations have started a program
	// (StartProgramInGuest), before the call returns: tests act while a step
	// runs without polling the process list. It must not block.
	OnGuestProgram func(h *Host, p *GuestProcess)
	// OnToolsChange runs when VMware Tools (the VMTools service's
	// vmtoolsd.exe) starts or stops running in the guest: at boot, at a
	// Stop-, Start- or Restart-Service of VMTools, and as the host goes
	// down. The sandbox reports guest.toolsRunningStatus and
	// guest.guestOperationsReady to vSphere there. It runs on the service's
	// goroutine and must not block.
	OnToolsChange func(h *Host, running bool)
}

// WinRMService is what the WinRM service allows, as winrm/config/service
// holds it. The listeners enforce it: an HTTP request whose SOAP message is
// not encrypted is refused unless AllowUnencrypted, Basic credentials are
// refused unless Basic, Negotiate (NTLM) ones unless Negotiate.
type WinRMService struct {
	AllowUnencrypted bool
	Basic            bool
	Negotiate        bool
	Kerberos         bool // offered in the 401's WWW-Authenticate; the simulator authenticates no Kerberos ticket
}

// StockWinRM is the service configuration of a stock Windows Server 2019,
// 2022 or 2025: AllowUnencrypted false, Basic false, Kerberos and Negotiate
// true. Sources: [MS-WSMV] 2.2.4.34 ServiceAuthType (the schema's defaults:
// Basic false, Kerberos true, Negotiate true; learn.microsoft.com/openspecs/
// windows_protocols/ms-wsmv/e4e963f4-cae9-4821-9efa-65e8f839a30b) and the
// service's AllowUnencrypted false that Microsoft's "Compromising yourself
// with WinRM's AllowUnencrypted = True" (devblogs.microsoft.com/powershell,
// 2015) warns against changing; a stock host's HTTP listener answers only
// encrypted Negotiate traffic.
func StockWinRM() WinRMService {
	return WinRMService{Negotiate: true, Kerberos: true}
}

// Faults injects failures; change them at run time with Host.SetFaults.
type Faults struct {
	// RefuseConnections closes every listener (connection refused) until cleared.
	RefuseConnections bool
	// FailAuth rejects every authentication attempt, even with the right password.
	FailAuth bool
	// Steps alter scripts that match; the first matching fault applies.
	Steps []StepFault
	// KubeletNeverReady makes the simulated kubelet register its Node but
	// never report Ready (read when the kubelet service starts).
	KubeletNeverReady bool
	// KubeletNotReady makes the simulated kubelet report its Node NotReady
	// (network plugin not initialized) while it is set, read at each of its
	// status checks, so clearing it (Host.SetFaults) turns the Node Ready at
	// the next one: a join held in its Ready wait for as long as a test
	// needs, without a sleep.
	KubeletNotReady bool
	// KubeProxyStopped stops the simulated kube-proxy on the host while it
	// is set: a running kube-proxy.exe exits with code 1 and every start of
	// it exits at once, as a kube-proxy that crashes on start does
	// (internal/sandbox/kubeletsim StopKubeProxy sets it and empties HNS of
	// the load balancers, which then nothing programs again).
	KubeProxyStopped bool
	// HNSLostOnReboot: the host's HNS networks and load balancer policies
	// are gone after every boot (flannel creates its overlay network
	// non-persistent: hcn.EnableNonPersistent, pkg/backend/vxlan/
	// device_windows.go), and creating one again fails
	// ("hcnCreateNetwork failed in Win32: Element not found."), as on the
	// hosts of sig-windows-tools#89/#94 and flannel#1423 whose network did
	// not come back after a reboot. Read by kubeletsim: its kubelet forgets
	// the HNS state at its first start in a new boot, its flanneld fails to
	// create the network and kube-proxy waits for it.
	HNSLostOnReboot bool
	// Egress, when set, is a site whose guests reach the outside only
	// through its HTTP proxy (egress.go).
	Egress *Egress
	// ServiceExits makes a service's process exit on its own some time
	// after it reported Running, as a crashing service does: the SCM sees
	// the process end without a stop request (recovery actions apply).
	ServiceExits []ServiceExitFault
	// RebootMidReply reboots the host while a WinRM command's output is
	// being received: the Receive response that carries output is cut off
	// mid-body and the connection drops, as when Windows restarts under a
	// running command. It fires for commands whose script matches (Step or
	// Match as in StepFault; both empty match every command), Times times.
	RebootMidReply *StepFault
	// UpdatesNeverInstalled lists KBs whose package the servicing stack
	// accepts and reports installed (DISM and wusa exit 0) but never
	// commits: nothing lands in the servicing store, so Get-HotFix does not
	// list it. It stands for every way a package "succeeds" without
	// installing (an installer whose exit code was never waited for, a
	// servicing failure logged only to CBS.log), for the read-back that
	// must catch it.
	UpdatesNeverInstalled []string
}

// ServiceExitFault makes a service's process exit After it reported Running.
type ServiceExitFault struct {
	Service string
	After   time.Duration
	// Times limits how often it fires (0 = after every start).
	Times int
}

// StepFault changes what happens when a script matches. A script matches when
// Step equals the name in its "# step: <name>" comment (StepComment), or when
// Match matches its text.
type StepFault struct {
	Step  string
	Match *regexp.Regexp

	// ExitCode and Stderr replace the script's result (the script does not run).
	ExitCode int
	Stderr   string
	// FailAt, when set, makes the script fail where FailAt first matches it
	// (at its first group, when it has one; at the script's start when it
	// does not match), as a terminating error with
	// Stderr as its message does there: the host writes the error record
	// powershell.exe writes (CLIXML under -EncodedCommand), whose position
	// message echoes the failing source line as Windows PowerShell 5.1
	// shows it (a 69-character window around the error). ExitCode
	// defaults to 1. This is how a failing line that holds a secret reaches
	// the caller.
	FailAt *regexp.Regexp
	// Delay runs the script after this pause; Hang blocks until the client
	// cancels (Signal, closed session) or the host goes down.
	Delay time.Duration
	Hang  bool
	// Reboot restarts the host as the script arrives: it never completes and
	// the connection drops, as when Windows Update reboots mid-bootstrap.
	Reboot bool
	// RestartService restarts the named service as the script arrives
	// (Restart-Service -Force: its running dependents stop with it), then
	// runs the script: an administrator or an upgrade restarting a service
	// under a running step. VMTools restarted this way forgets the guest
	// operation running the script (guestops.go).
	RestartService string
	// Times limits how often the fault fires (0 = always).
	Times int
}

// Service is one service of the service control manager: its configuration
// as the registry holds it (HKLM\SYSTEM\CurrentControlSet\Services\<Name>)
// and its current status.
type Service struct {
	Name             string
	DisplayName      string
	BinaryPathName   string   // ImagePath: executable path and arguments, as given to New-Service
	StartupType      string   // Automatic, Manual or Disabled
	DelayedAutoStart bool     // Automatic (Delayed Start)
	Status           string   // Running, Stopped, StartPending or StopPending
	Description      string   `json:",omitempty"`
	DependOnService  []string `json:",omitempty"`
	// Environment is the service's own environment (REG_MULTI_SZ
	// NAME=value), added to the SCM's environment block.
	Environment []string `json:",omitempty"`
	ObjectName  string   `json:",omitempty"` // the account, LocalSystem
}

func (c *HostConfig) setDefaults() {
	if c.ComputerName == "" {
		c.ComputerName = "WIN-SIM"
	}
	if c.IP == "" {
		c.IP = "127.0.0.1"
	}
	if c.AdminUser == "" {
		c.AdminUser = "Administrator"
	}
	if c.WindowsBuild == "" {
		c.WindowsBuild = "10.0.20348"
	}
	if c.NumCPU == 0 {
		c.NumCPU = 2
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = 4096
	}
	if c.ServiceStartTimeout == 0 {
		c.ServiceStartTimeout = 30 * time.Second
	}
	if c.RebootDelay == 0 {
		c.RebootDelay = DefaultRebootDelay
	}
	if c.Ports == nil {
		p := DefaultPorts()
		c.Ports = &p
	}
	if c.WinRM == nil {
		svc := StockWinRM()
		c.WinRM = &svc
	}
}

// DefaultRebootDelay is a reboot's downtime when HostConfig.RebootDelay is 0.
const DefaultRebootDelay = 2 * time.Second
