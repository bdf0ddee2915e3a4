package winsim

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
)

// What Windows Setup keeps of an answer file.
//
// Sources:
//   - Windows Setup Automation Overview
//     (https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/windows-setup-automation-overview):
//     "Because reboots are required during Setup, a copy of the answer file is
//     cached to the %WINDIR%\Panther directory of the Windows installation";
//     %WINDIR%\Panther\Unattend and %WINDIR%\Panther are the first places of
//     the implicit answer file search order, %WINDIR%\System32\Sysprep a later
//     one. Its "Sensitive data in answer files" section says Setup removes
//     sensitive data in the cached copy at the end of each configuration pass,
//     and that the cached answer file must still be deleted before the
//     computer is handed over: what Setup scrubs is what a pass it has run
//     consumed (a specialize pass's domain join credentials are the usual
//     *SENSITIVE*DATA*DELETED*), while oobeSystem's UserAccounts
//     (AdministratorPassword) are read when OOBE runs, and stay. This package
//     keeps the cached copy as it was written; the one secret of a pass
//     before oobeSystem the sandbox writes, a customization's domain join
//     password (specialize), is scrubbed by the platform that runs the pass
//     (internal/sandbox/vmtools, domainjoin.go), which rewrites the cached
//     copy with PlaceFile.
//   - Hide sensitive data in an answer file
//     (https://learn.microsoft.com/en-us/windows-hardware/customize/desktop/wsim/hide-sensitive-data-in-an-answer-file):
//     a hidden password is base64 of its UTF-16LE text with the element name
//     appended; an encoding, not a protection.
//   - Sysprep: sysprep /generalize /oobe /unattend:<file> applies the answer
//     file to the passes that follow, so Setup caches it as above
//     (https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/sysprep-command-line-options).

// PantherAnswerFile is where Windows Setup caches the answer file it uses.
const PantherAnswerFile = `C:\Windows\Panther\unattend.xml`

// cacheAnswerFile copies the answer file at path to Setup's cache, as
// Setup does when sysprep (or setup.exe) is given /unattend.
func (v *vfs) cacheAnswerFile(path string) error {
	if v.Clean(path) == v.Clean(PantherAnswerFile) {
		return nil
	}
	b, err := v.ReadFile(path)
	if err != nil {
		return err
	}
	return v.WriteFile(PantherAnswerFile, b, false)
}

// PlaceAnswerFile is for the platform that customizes a guest before Setup
// runs on it (VMware's guest customization, internal/sandbox/vmtools): it
// writes the answer file at path on the disk in dir, and Windows Setup, run
// with it, caches it in %WINDIR%\Panther. Call it before the host boots.
func PlaceAnswerFile(dir, path string, answer []byte) error {
	v, err := newVFS(filepath.Join(dir, "fs"), nil)
	if err != nil {
		return err
	}
	if err := v.WriteFile(path, answer, false); err != nil {
		return fmt.Errorf("writing the answer file %s: %w", path, err)
	}
	return v.cacheAnswerFile(path)
}

// PlaceFile is for an agent of the platform that writes on the guest's disk
// while no host of this package runs on it (VMware Tools' deployPkg writing
// its customization logs in C:\Windows\TEMP\vmware-imc during the boots a
// customization takes: internal/sandbox/vmtools). appendTo adds to the file.
func PlaceFile(dir, path string, data []byte, appendTo bool) error {
	v, err := newVFS(filepath.Join(dir, "fs"), nil)
	if err != nil {
		return err
	}
	if err := v.WriteFile(path, data, appendTo); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// unattendNamespace is the namespace of every answer file's root element.
const unattendNamespace = "urn:schemas-microsoft-com:unattend"

// configurationPasses are Windows Setup's configuration passes, the only
// values of a settings element's pass attribute (Microsoft Learn, "Windows
// Setup Configuration Passes":
// https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/windows-setup-configuration-passes).
var configurationPasses = map[string]bool{
	"windowsPE": true, "offlineServicing": true, "generalize": true, "specialize": true,
	"auditSystem": true, "auditUser": true, "oobeSystem": true,
}

// adminPasswordPasses are where Microsoft-Windows-Shell-Setup | UserAccounts
// | AdministratorPassword is valid (Microsoft Learn, AdministratorPassword,
// "Valid Configuration Passes": auditSystem, oobeSystem).
var adminPasswordPasses = map[string]bool{"auditSystem": true, "oobeSystem": true}

// checkAnswerFile reads an answer file as Setup validates it before a pass
// uses it: an unattend root in the unattend namespace, settings only for the
// configuration passes, an AdministratorPassword only where it is valid. It
// returns what is wrong, or "" when nothing is. The simulator checks no
// component against its schema beyond that.
func checkAnswerFile(b []byte) string {
	var u struct {
		XMLName  xml.Name
		Settings []struct {
			Pass  string `xml:"pass,attr"`
			Inner []byte `xml:",innerxml"`
		} `xml:"settings"`
	}
	if err := xml.Unmarshal(b, &u); err != nil {
		return "it is not well-formed XML: " + err.Error()
	}
	if u.XMLName.Local != "unattend" || u.XMLName.Space != unattendNamespace {
		return fmt.Sprintf("its root element is {%s}%s, not unattend in %s", u.XMLName.Space, u.XMLName.Local, unattendNamespace)
	}
	for _, s := range u.Settings {
		if !configurationPasses[s.Pass] {
			return fmt.Sprintf("settings for %q, which is no configuration pass", s.Pass)
		}
		if bytes.Contains(s.Inner, []byte("<AdministratorPassword")) && !adminPasswordPasses[s.Pass] {
			return fmt.Sprintf("an AdministratorPassword in the %s pass (valid only in auditSystem and oobeSystem)", s.Pass)
		}
	}
	return ""
}
