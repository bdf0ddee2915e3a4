package kubeletsim

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAntreaImageInstallsOVSDriver runs the antrea mode's install-ovs-driver
// init container script (rendered by internal/networking, held in
// internal/kube/testdata) against the antrea-windows image's files under a
// container's mount: without TESTSIGNING the image's test-signed driver is
// refused and the container fails; after bcdedit and a restart it installs
// from the staged host path, and a second run finds it installed.
func TestAntreaImageInstallsOVSDriver(t *testing.T) {
	h, err := winsim.Start(context.Background(), winsim.HostConfig{ComputerName: "WIN-OVS", AdminPassword: "pw", Dir: t.TempDir(),
		Ports: &winsim.Ports{WinRM: winsim.PortDisabled, WinRMHTTPS: winsim.PortDisabled, SSH: winsim.PortDisabled}, RebootDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	script, err := os.ReadFile("../../kube/testdata/antrea-agent-windows-Install-OVSDriver.ps1")
	if err != nil {
		t.Fatal(err)
	}
	files := imageFiles("antrea/antrea-windows:v2.2.0")
	if files == nil {
		t.Fatal("the antrea-windows image has no modelled files")
	}
	if imageFiles("antrea/antrea-windows:v2.1.0") != nil || imageFiles("mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0") != nil {
		t.Fatal("files for an image the simulator does not model")
	}
	mount := `C:\C\0123abcd`
	files[`var\lib\antrea-windows\Install-OVSDriver.ps1`] = script
	for name, data := range files {
		if err := h.WriteFile(mount+`\`+name, data); err != nil {
			t.Fatal(err)
		}
	}
	run := func() (int, string) {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code := h.Run(ctx, &winsim.Process{Path: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`,
			Args: []string{"-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", "& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '/var/lib/antrea-windows/Install-OVSDriver.ps1')"},
			Env:  map[string]string{"CONTAINER_SANDBOX_MOUNT_POINT": mount + `\`, "PATH": `C:\Windows\system32;C:\Windows;C:\Windows\System32\WindowsPowerShell\v1.0\`},
			Dir:  mount, Stdout: &out, Stderr: &out})
		return code, out.String()
	}
	if code, out := run(); code == 0 || !strings.Contains(out, "Failed to install OVSExt driver") || !strings.Contains(out, "0x800b0109") {
		t.Fatalf("without TESTSIGNING: exit %d\n%s", code, out)
	}
	if winsim.ReadOVS(h).ExtensionInstalled {
		t.Fatal("the extension is installed without TESTSIGNING")
	}
	var out bytes.Buffer
	if code := h.Run(context.Background(), &winsim.Process{Path: `C:\Windows\System32\bcdedit.exe`, Args: []string{"/set", "testsigning", "on"}, Stdout: &out, Stderr: &out}); code != 0 {
		t.Fatalf("bcdedit: %d %s", code, out.String())
	}
	h.Reboot()
	if code, out := run(); code != 0 || !strings.Contains(out, "OVSExt driver has been installed") {
		t.Fatalf("with TESTSIGNING: exit %d\n%s", code, out)
	}
	if !winsim.ReadOVS(h).ExtensionInstalled || !h.FileExists(`C:\openvswitch\driver\ovsext.inf`) {
		t.Fatal("the driver is not installed from C:\\openvswitch\\driver")
	}
	if code, out := run(); code != 0 || !strings.Contains(out, "already installed") {
		t.Fatalf("again: exit %d\n%s", code, out)
	}
}
