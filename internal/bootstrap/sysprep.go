package bootstrap

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"unicode/utf16"
)

// Defaults of the guest's account and time zone, the ones a configuration
// that leaves them out gets, and an imported resource is assumed to have.
const (
	// DefaultAdminUser is Windows Server's built-in administrator, whose
	// password the answer file (and a node's vSphere customization) sets.
	DefaultAdminUser = "Administrator"
	// DefaultTimeZone is the answer file's time zone id.
	DefaultTimeZone = "UTC"
)

// UnattendConfig shapes the answer file sysprep applies when a clone of the
// template first boots (its computer name and network then come from the
// vSphere customization of windows_node).
type UnattendConfig struct {
	AdministratorPassword string
	TimeZone              string // Windows time zone id, e.g. "UTC", "W. Europe Standard Time"
	Locale                string // e.g. "en-US"
}

// Unattend renders unattend.xml. The administrator password is written in
// the answer file's obscured form (base64 of UTF-16LE password plus the
// element name), never as plain text, and autologon stays off.
func Unattend(cfg UnattendConfig) ([]byte, error) {
	if cfg.AdministratorPassword == "" {
		return nil, fmt.Errorf("the administrator password is empty")
	}
	if cfg.TimeZone == "" {
		cfg.TimeZone = DefaultTimeZone
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
					xmlUserAccounts{AdministratorPassword: xmlPassword{
						Value: obscurePassword(cfg.AdministratorPassword, "AdministratorPassword"), PlainText: false,
					}},
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

// SysprepStep writes the answer file and runs sysprep, which generalizes the
// guest and powers it off; the caller waits for the power-off in vSphere.
// First it removes the OpenSSH host keys, so that each clone's sshd creates
// its own at first start (Win32-OpenSSH's sshd runs ssh-keygen -A when it
// starts as a service: PowerShell/openssh-portable
// contrib/win32/win32compat/wmain_sshd.c, generate_host_keys); sysprep keeps
// them, and every node would otherwise present the template's key. The
// step carries the administrator password: as itself, in the answer file's
// obscured form and in the base64 text of the answer file.
func SysprepStep(cfg UnattendConfig) (Step, error) {
	unattend, err := Unattend(cfg)
	if err != nil {
		return Step{}, err
	}
	content := base64.StdEncoding.EncodeToString(unattend)
	script, err := render("sysprep", "sysprep", map[string]any{
		"Path": UnattendFile, "Content": content, "Exe": SysprepExe,
		"SSHDir": SSHDir, "HostKeys": SSHHostKeyFiles,
	})
	if err != nil {
		return Step{}, err
	}
	secrets := []string{cfg.AdministratorPassword, obscurePassword(cfg.AdministratorPassword, "AdministratorPassword"), content}
	return Step{Name: "sysprep", Script: script, Secrets: secrets}, nil
}

// SSHDir holds OpenSSH's configuration and host keys on Windows.
const SSHDir = `C:\ProgramData\ssh`

// SSHHostKeyFiles are the host keys ssh-keygen -A creates in SSHDir.
var SSHHostKeyFiles = []string{
	"ssh_host_rsa_key", "ssh_host_rsa_key.pub", "ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub",
	"ssh_host_ed25519_key", "ssh_host_ed25519_key.pub",
}

// obscurePassword is the answer-file encoding of a password: base64 of the
// UTF-16LE text of password followed by the element name. It hides the
// password from a casual look, nothing more; the template's owners must still
// guard it.
func obscurePassword(password, element string) string {
	units := utf16.Encode([]rune(password + element))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(b[2*i:], u)
	}
	return base64.StdEncoding.EncodeToString(b)
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

type xmlUserAccounts struct {
	XMLName               xml.Name    `xml:"UserAccounts"`
	AdministratorPassword xmlPassword `xml:"AdministratorPassword"`
}

type xmlPassword struct {
	Value     string `xml:"Value"`
	PlainText bool   `xml:"PlainText"`
}
