package winsim

import (
	"context"
	"fmt"
	"strings"
)

// netcfg.exe, as Antrea's hack/windows/Install-OVS.ps1 (v2.2.0,
// CheckAndInstallOVSDriver) runs it to install the Open vSwitch kernel
// driver, the Hyper-V switch extension OVSExt:
//
//	netcfg -q <id>                      "... is installed" / "... is not installed"
//	netcfg -l <inf> -c s -i <id>        install the service component from its INF
//	netcfg -u <id>                      uninstall it
//
// Source: https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/netcfg
// (-l the INF, -c the class, s for a service, -i the component id, -q
// query, -u uninstall); the wording of the output is the simulator's, with
// the words Install-OVS.ps1 matches ("*is installed*", "*failed*"). Only
// the component OVSExt is modelled; installing it records the Open vSwitch
// Extension on the host (ovs.go), which antrea-agent needs. An install
// fails, with netcfg's "failed" line and the HRESULT, when:
//   - the INF or a file of its package (OVSExt.sys, ovsext.cat) is not
//     there: 0x80070002 ERROR_FILE_NOT_FOUND;
//   - the INF lies under the calling HostProcess container's mount
//     (CONTAINER_SANDBOX_MOUNT_POINT): 0x80070003 ERROR_PATH_NOT_FOUND,
//     the containerd 1.7+ failure Install-OVS.ps1 stages the driver on a
//     host path to avoid ("netcfg tries to access the container's mount
//     path");
//   - the package is test-signed (its catalog says so: DriverCatalog) and
//     the host did not boot with TESTSIGNING (programs_bcdedit.go): 64-bit
//     Windows loads no test-signed kernel-mode code then
//     (learn.microsoft.com/windows-hardware/drivers/install/the-testsigning-boot-configuration-option);
//     0x800B0109 CERT_E_UNTRUSTEDROOT;
//   - it is not signed at all: 0x800B0100 TRUST_E_NOSIGNATURE (kernel-mode
//     code signing policy).
//
// Not modelled: the certificate stores (Install-OVS.ps1 imports the
// driver's signer into LocalMachine\Root and TrustedPublisher; netcfg here
// does not look there) and every other component and class.
func init() { registerProgram("netcfg.exe", SubsystemConsole, runNetcfg) }

// OVSExtComponent is the OVS driver's component id.
const OVSExtComponent = "OVSExt"

// driverCatalogMagic starts a simulated driver catalog (.cat).
const driverCatalogMagic = "winsim driver catalog"

// DriverCatalog is the content of a simulated driver package's catalog
// file: who signed it, and whether with a test certificate.
func DriverCatalog(signer string, testSigned bool) []byte {
	return []byte(fmt.Sprintf("%s\r\nsigner: %s\r\ntest-signed: %t\r\n", driverCatalogMagic, signer, testSigned))
}

func runNetcfg(_ context.Context, p *Process) int {
	refuse := func(what string) int {
		fmt.Fprintf(p.Stderr, "winsim: netcfg.exe: the simulated host does not model %s\r\n", what)
		return 1
	}
	opts := map[string]string{}
	for i := 0; i < len(p.Args); i++ {
		a := strings.ToLower(p.Args[i])
		if len(a) != 2 || (a[0] != '-' && a[0] != '/') || !strings.ContainsRune("lciqu", rune(a[1])) {
			return refuse("the option " + p.Args[i])
		}
		if i+1 >= len(p.Args) {
			return refuse("the option " + p.Args[i] + " without its value")
		}
		opts[a[1:]] = p.Args[i+1]
		i++
	}
	id := opts["i"]
	if q, ok := opts["q"]; ok {
		id = q
	} else if u, ok := opts["u"]; ok {
		id = u
	}
	if !strings.EqualFold(id, OVSExtComponent) {
		return refuse("the component " + id + " (" + OVSExtComponent + " only)")
	}
	installed := ReadOVS(p.Host).ExtensionInstalled
	switch {
	case len(opts) == 1 && opts["q"] != "":
		if installed {
			fmt.Fprintf(p.Stdout, "%s is installed.\r\n", id)
		} else {
			fmt.Fprintf(p.Stdout, "%s is not installed.\r\n", id)
		}
		return 0
	case len(opts) == 1 && opts["u"] != "":
		if !installed {
			return refuse("netcfg -u of a component that is not installed")
		}
		fmt.Fprintf(p.Stdout, "Trying to remove %s ...", id)
		_ = UpdateOVS(p.Host, func(s *OVSState) error { s.ExtensionInstalled, s.ExtensionEnabledOn = false, ""; return nil })
		fmt.Fprintf(p.Stdout, "...done.\r\n")
		return 0
	case len(opts) == 3 && opts["l"] != "" && strings.EqualFold(opts["c"], "s"):
	default:
		return refuse("netcfg " + strings.Join(p.Args, " ") + " (-q, -u, or -l <inf> -c s -i " + OVSExtComponent + ")")
	}
	fmt.Fprintf(p.Stdout, "Trying to install %s ...", id)
	fail := func(hr uint32) int {
		fmt.Fprintf(p.Stdout, "failed. Error code: 0x%08x.\r\n", hr)
		return hresultExit(hr)
	}
	inf := p.Host.fs.Clean(hostPathOf(p, opts["l"]))
	if mount := p.Env["CONTAINER_SANDBOX_MOUNT_POINT"]; mount != "" {
		if m := strings.TrimRight(p.Host.fs.Clean(mount), `\`); strings.HasPrefix(strings.ToLower(inf), strings.ToLower(m)+`\`) {
			return fail(0x80070003)
		}
	}
	infText, err := p.Host.ReadFile(inf)
	if err != nil || !strings.Contains(strings.ToLower(string(infText)), strings.ToLower(id)) {
		return fail(0x80070002)
	}
	dir := parentOf(inf)
	if !p.Host.FileExists(dir + `\OVSExt.sys`) {
		return fail(0x80070002)
	}
	cat, err := p.Host.ReadFile(dir + `\ovsext.cat`)
	if err != nil {
		return fail(0x80070002)
	}
	text := string(cat)
	switch {
	case !strings.HasPrefix(text, driverCatalogMagic):
		return fail(0x800B0100)
	case strings.Contains(text, "test-signed: true") && !p.Host.TestSigning():
		return fail(0x800B0109)
	}
	if err := UpdateOVS(p.Host, func(s *OVSState) error { s.ExtensionInstalled = true; return nil }); err != nil {
		return fail(0x80004005)
	}
	fmt.Fprintf(p.Stdout, "...done.\r\n")
	return 0
}

// hostPathOf reads a path a program was given as the host would: forward
// slashes are separators, a relative path is the process's directory's.
func hostPathOf(p *Process, path string) string {
	path = strings.ReplaceAll(path, "/", `\`)
	if len(path) >= 2 && path[1] == ':' {
		return path
	}
	return strings.TrimRight(p.Dir, `\`) + `\` + path
}
