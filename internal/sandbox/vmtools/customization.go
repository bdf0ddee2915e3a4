package vmtools

import (
	"encoding/xml"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// SysprepAnswerFile is where vCenter's Windows guest customization leaves the
// sysprep.xml it builds from a CustomizationSysprep; Setup, run with it,
// caches it in C:\Windows\Panther (winsim.PlaceAnswerFile).
//
// Sources: the vSphere API's CustomizationSysprep and CustomizationGuiUnattended
// ("These values are plugged directly into the sysprep.xml file that
// VirtualCenter stores on the target virtual disk":
// https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/CustomizationSysprep/).
// The API names no path; C:\sysprep\sysprep.xml is where VMware's Windows
// customization (deployPkg, logging to C:\Windows\Temp\vmware-imc) stores it.
// Nothing removes it after the customization: the guest's owner must.
const SysprepAnswerFile = `C:\sysprep\sysprep.xml`

// customizationAnswerFile renders the sysprep.xml of a customization: the
// computer name (specialize) and the Administrator password (oobeSystem
// UserAccounts) as the spec gives it, plain text when PlainText is true.
func customizationAnswerFile(s *types.CustomizationSysprep) ([]byte, error) {
	type password struct {
		Value     string `xml:"Value"`
		PlainText bool   `xml:"PlainText"`
	}
	type component struct {
		Name          string    `xml:"name,attr"`
		ComputerName  string    `xml:"ComputerName,omitempty"`
		AdminPassword *password `xml:"UserAccounts>AdministratorPassword,omitempty"`
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

// customize leaves a clone's customization answer file on its disk, at its
// first boot.
func customize(dir string, s *types.CustomizationSysprep) error {
	answer, err := customizationAnswerFile(s)
	if err != nil {
		return err
	}
	return winsim.PlaceAnswerFile(dir, SysprepAnswerFile, answer)
}
