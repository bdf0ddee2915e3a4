package winsim

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNetcfgInstallsOVSExt: Antrea's test-signed OVS driver installs with
// netcfg only once the host booted with TESTSIGNING (bcdedit, then a
// restart), not from a HostProcess container's mount, and not without its
// package's files; then netcfg -q says it is installed and the host has the
// Open vSwitch Extension.
func TestNetcfgInstallsOVSExt(t *testing.T) {
	h := startTestHost(t, nil)
	for path, data := range map[string][]byte{
		`C:\openvswitch\driver\ovsext.inf`: []byte("[Version]\r\nSignature=\"$WINDOWS NT$\"\r\n[Install]\r\nOVSExt\r\n"),
		`C:\openvswitch\driver\OVSExt.sys`: exe("ovsext", "3.1.3"),
		`C:\openvswitch\driver\ovsext.cat`: DriverCatalog("Antrea test", true),
		`C:\C\abc\driver\ovsext.inf`:       []byte("OVSExt"),
		`C:\unsigned\ovsext.inf`:           []byte("OVSExt"),
		`C:\unsigned\OVSExt.sys`:           exe("ovsext", "3.1.3"),
		`C:\unsigned\ovsext.cat`:           []byte("not a catalog"),
		`C:\nosys\ovsext.inf`:              []byte("OVSExt"),
	} {
		if err := h.fs.MkdirAll(parentOf(h.fs.Clean(path))); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args string, env map[string]string) (int, string) {
		t.Helper()
		var out syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if env == nil {
			env = map[string]string{}
		}
		env["PATH"] = defaultPath
		code := h.Run(ctx, &Process{Path: powershellPath, Args: []string{"-NoProfile", "-Command", args + "; exit $LASTEXITCODE"}, Env: env, Stdout: &out, Stderr: &out})
		return code, out.String()
	}
	install := `netcfg -l C:\openvswitch\driver\ovsext.inf -c s -i OVSExt`
	for _, c := range []struct {
		cmd  string
		env  map[string]string
		want string
	}{
		{install, nil, "failed. Error code: 0x800b0109"},
		{`netcfg -l C:/C/abc/driver/ovsext.inf -c s -i OVSExt`, map[string]string{"CONTAINER_SANDBOX_MOUNT_POINT": `C:\C\abc\`}, "failed. Error code: 0x80070003"},
		{`netcfg -l C:\unsigned\ovsext.inf -c s -i OVSExt`, nil, "failed. Error code: 0x800b0100"},
		{`netcfg -l C:\nosys\ovsext.inf -c s -i OVSExt`, nil, "failed. Error code: 0x80070002"},
		{`netcfg -l C:\none.inf -c s -i OVSExt`, nil, "failed. Error code: 0x80070002"},
		{`netcfg -l C:\nosys\ovsext.inf -c p -i MS_TCPIP6`, nil, "does not model"},
		{`netcfg -q ovsext`, nil, "ovsext is not installed."},
		{`bcdedit.exe /set testsigning on`, nil, "The operation completed successfully."},
		// Not before the restart.
		{install, nil, "failed. Error code: 0x800b0109"},
	} {
		code, out := run(c.cmd, c.env)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d %q, want %q", c.cmd, code, out, c.want)
		}
		if ReadOVS(h).ExtensionInstalled {
			t.Fatalf("%s: the extension is installed", c.cmd)
		}
	}
	h.Reboot()
	if code, out := run(install, nil); code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("after TESTSIGNING and a restart: exit %d %q", code, out)
	}
	if !ReadOVS(h).ExtensionInstalled {
		t.Fatal("netcfg succeeded but the host has no Open vSwitch Extension")
	}
	if _, out := run(`$(netcfg -q ovsext) -like '*is installed*'`, nil); !strings.Contains(out, "True") {
		t.Errorf("netcfg -q after the install: %q", out)
	}
}

// TestAntreaHostSetupStep runs the antrea mode's antrea-host-setup join
// step (internal/bootstrap's golden file): on a fresh host it installs the
// Hyper-V PowerShell module and sets TESTSIGNING and asks for a restart;
// after the restart both are in effect and the step asks for none.
func TestAntreaHostSetupStep(t *testing.T) {
	b, err := os.ReadFile("../../bootstrap/testdata/join-steps-antrea-host-setup.ps1")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(script, "########## antrea-host-setup\n") || !strings.Contains(script, "Restart-Computer -Force\n") {
		t.Fatalf("unexpected golden file:\n%s", script)
	}
	// The restart is the test's: Restart-Computer's own is asynchronous.
	script = strings.Replace(strings.TrimPrefix(script, "########## antrea-host-setup\n"), "Restart-Computer -Force\n", "", 1)
	h := startTestHost(t, nil)
	out, errOut, code := run(t, h, encoded(script))
	if code != 0 || !strings.Contains(out, "BOOTSTRAP-REBOOT-REQUESTED") {
		t.Fatalf("first run: exit %d, out %q, err %q", code, out, errOut)
	}
	if h.TestSigning() || h.FeatureInstalled("Hyper-V-PowerShell") {
		t.Fatal("in effect before the restart")
	}
	h.Reboot()
	if !h.TestSigning() || !h.FeatureInstalled("Hyper-V-PowerShell") {
		t.Fatalf("after the restart: TESTSIGNING %v, Hyper-V-PowerShell %v", h.TestSigning(), h.FeatureInstalled("Hyper-V-PowerShell"))
	}
	if out, errOut, code := run(t, h, encoded(script)); code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("second run: exit %d, out %q, err %q; want nothing to do", code, out, errOut)
	}
}
