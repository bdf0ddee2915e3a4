package bootstrap

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"

	"github.com/wincluster/terraform-provider-windows/internal/timezone"
)

// DefaultAdminUser is Windows Server's built-in administrator, whose
// password the answer file (and a node's vSphere customization) sets: the
// account a configuration that leaves it out gets, and an imported resource
// is assumed to have.
const DefaultAdminUser = "Administrator"

// UnattendConfig shapes the answer file sysprep applies when a clone of the
// template first boots (its computer name, network and Administrator
// password then come from the vSphere customization of windows_node).
type UnattendConfig struct {
	TimeZone string // Windows time zone id, e.g. "UTC", "W. Europe Standard Time"
	Locale   string // e.g. "en-US"
}

// Unattend renders unattend.xml. It holds no password: Windows Setup keeps a
// copy of the answer file in C:\Windows\Panther on the template itself, and
// every clone would inherit it (setup_answerfile.go of the simulator cites
// Microsoft Learn). Each clone's password comes from its vSphere
// customization instead, as kubernetes-sigs/image-builder's Windows images
// get theirs from the platform at first boot: their sysprep
// (images/capi/packer/{azure/scripts,nutanix/windows}/sysprep.ps1) first
// deletes C:\Windows\System32\Sysprep\unattend.xml and runs sysprep with
// cloudbase-init's Unattend.xml, which carries no password. Autologon
// stays off.
func Unattend(cfg UnattendConfig) ([]byte, error) {
	if cfg.TimeZone == "" {
		cfg.TimeZone = timezone.Default
	}
	if !timezone.Valid(cfg.TimeZone) {
		return nil, fmt.Errorf("time zone %q is not a Windows time zone ID", cfg.TimeZone)
	}
	if cfg.Locale == "" {
		cfg.Locale = "en-US"
	}
	component := func(name string, inner ...any) xmlComponent {
		return xmlComponent{
			Name: name, ProcessorArchitecture: "amd64", PublicKeyToken: "31bf3856ad364e35",
			Language: "neutral", VersionScope: "nonSxS", Inner: inner,
		}
	}
	u := xmlUnattend{
		XMLNS: "urn:schemas-microsoft-com:unattend", WCM: "http://schemas.microsoft.com/WMIConfig/2002/State",
		Settings: []xmlSettings{
			{Pass: "generalize", Components: []xmlComponent{
				component("Microsoft-Windows-Security-SPP", xmlElem{XMLName: xml.Name{Local: "SkipRearm"}, Value: "1"}),
			}},
			{Pass: "specialize", Components: []xmlComponent{
				component("Microsoft-Windows-Shell-Setup",
					// "*": the name comes from the vSphere customization of each clone.
					xmlElem{XMLName: xml.Name{Local: "ComputerName"}, Value: "*"},
					xmlElem{XMLName: xml.Name{Local: "TimeZone"}, Value: cfg.TimeZone},
				),
			}},
			{Pass: "oobeSystem", Components: []xmlComponent{
				component("Microsoft-Windows-International-Core",
					xmlElem{XMLName: xml.Name{Local: "InputLocale"}, Value: cfg.Locale},
					xmlElem{XMLName: xml.Name{Local: "SystemLocale"}, Value: cfg.Locale},
					xmlElem{XMLName: xml.Name{Local: "UILanguage"}, Value: cfg.Locale},
					xmlElem{XMLName: xml.Name{Local: "UserLocale"}, Value: cfg.Locale},
				),
				component("Microsoft-Windows-Shell-Setup",
					xmlOOBE{HideEULAPage: true, HideOnlineAccountScreens: true, HideWirelessSetupInOOBE: true, ProtectYourPC: 3},
					xmlElem{XMLName: xml.Name{Local: "TimeZone"}, Value: cfg.TimeZone},
				),
			}},
		},
	}
	out, err := xml.MarshalIndent(u, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// AnswerFiles are what Setup and vCenter's guest customization leave on a
// guest that holds, or may hold, the Administrator password: Setup's cached
// answer files (%WINDIR%\Panther and %WINDIR%\Panther\Unattend, the first
// places of its implicit search order), the one sysprep takes from
// %WINDIR%\System32\Sysprep, the sysprep.xml vCenter's guest customization
// stores on the disk (C:\sysprep), and VMware Tools' customization folder
// (CustomizationDir). Microsoft Learn ("Windows Setup Automation Overview",
// Sensitive data in answer files) says to delete the cached answer file once
// Setup is done; the image's sysprep step deletes them before generalizing (a
// stock template's own install left some), and each node's first step after
// its customization.
var AnswerFiles = []string{
	`C:\Windows\Panther\unattend.xml`, `C:\Windows\Panther\Unattend\unattend.xml`,
	`C:\Windows\Panther\Unattend\autounattend.xml`, UnattendFile, `C:\sysprep`, CustomizationDir,
}

// CustomizationDir is where VMware Tools' deployPkg extracts vCenter's
// customization package and keeps its logs on Windows (guestcust.log,
// toolsDeployPkg.log: the log location of vCenter's customization events;
// VMware's log collector gathers it from %SystemRoot%\TEMP). On Linux
// open-vm-tools deletes its extracted package once the customization is done
// (libDeployPkg linuxDeployment.c, DeleteTempDeploymentDirectory); the
// Windows deployPkg is not open source, so what it leaves here is not known
// to hold no secret. A node removes it once its customization has
// succeeded: a failed one keeps it for its logs (the provider's customization
// error points at guestcust.log).
const CustomizationDir = `C:\Windows\TEMP\vmware-imc`

// SysprepStep sets the guest's time zone (the time-zone step of a join: the
// template keeps it), writes the answer file and runs sysprep, which generalizes the
// guest and powers it off; the caller waits for the power-off in vSphere.
// First it removes the answer files an earlier Setup or customization left
// (AnswerFiles), then the OpenSSH host keys, so that each clone's sshd
// creates its own at first start (Win32-OpenSSH's sshd runs ssh-keygen -A
// when it starts as a service: PowerShell/openssh-portable
// contrib/win32/win32compat/wmain_sshd.c, generate_host_keys); sysprep keeps
// them, and every node would otherwise present the template's key. The
// answer file carries no secret.
func SysprepStep(cfg UnattendConfig) (Step, error) {
	if cfg.TimeZone == "" {
		cfg.TimeZone = timezone.Default // as Unattend has it: the script sets what the answer file says
	}
	unattend, err := Unattend(cfg)
	if err != nil {
		return Step{}, err
	}
	content := base64.StdEncoding.EncodeToString(unattend)
	script, err := render("sysprep", "sysprep", map[string]any{
		"Path": UnattendFile, "Content": content, "Exe": SysprepExe,
		"SSHDir": SSHDir, "HostKeys": SSHHostKeyFiles, "AnswerFiles": AnswerFiles, "TimeZone": cfg.TimeZone,
	})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "sysprep", Script: script}, nil
}

// SSHDir holds OpenSSH's configuration and host keys on Windows.
const SSHDir = `C:\ProgramData\ssh`

// SSHHostKeyFiles are the host keys ssh-keygen -A creates in SSHDir.
var SSHHostKeyFiles = []string{
	"ssh_host_rsa_key", "ssh_host_rsa_key.pub", "ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub",
	"ssh_host_ed25519_key", "ssh_host_ed25519_key.pub",
}

type xmlUnattend struct {
	XMLName  xml.Name      `xml:"unattend"`
	XMLNS    string        `xml:"xmlns,attr"`
	WCM      string        `xml:"xmlns:wcm,attr"`
	Settings []xmlSettings `xml:"settings"`
}

type xmlSettings struct {
	Pass       string         `xml:"pass,attr"`
	Components []xmlComponent `xml:"component"`
}

type xmlComponent struct {
	Name                  string `xml:"name,attr"`
	ProcessorArchitecture string `xml:"processorArchitecture,attr"`
	PublicKeyToken        string `xml:"publicKeyToken,attr"`
	Language              string `xml:"language,attr"`
	VersionScope          string `xml:"versionScope,attr"`
	Inner                 []any
}

type xmlElem struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

type xmlOOBE struct {
	XMLName                  xml.Name `xml:"OOBE"`
	HideEULAPage             bool     `xml:"HideEULAPage"`
	HideOnlineAccountScreens bool     `xml:"HideOnlineAccountScreens"`
	HideWirelessSetupInOOBE  bool     `xml:"HideWirelessSetupInOOBE"`
	ProtectYourPC            int      `xml:"ProtectYourPC"`
}
