package kubeletsim

import (
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// A kubelet service without --windows-service never talks to the service
// control manager: Windows fails the start with 1053 after the timeout.
func TestKubeletServiceNeedsWindowsServiceFlag(t *testing.T) {
	checker := testChecker(t)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Programs = Programs(HookOptions{Logf: t.Logf, Checker: checker})
		c.ServiceStartTimeout = 500 * time.Millisecond
	})
	h := f.Host
	if err := h.WriteFile(`C:\k\kubelet.exe`, []byte("MZ simulated Windows executable\r\nkubelet v1.36.3\r\n")); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := h.Run(t.Context(), &winsim.Process{Path: `C:\Windows\System32\sc.exe`,
		Args: []string{"create", "kubelet", "binPath=", `C:\k\kubelet.exe --v=2`}, Stdout: &out, Stderr: &errOut})
	if code != 0 {
		t.Fatalf("sc create: %d %s %s", code, out.String(), errOut.String())
	}
	code = h.Run(t.Context(), &winsim.Process{Path: "sc.exe", Args: []string{"start", "kubelet"}, Stdout: &out, Stderr: &errOut})
	if code != 1053 {
		t.Fatalf("sc start without --windows-service: exit %d, want 1053\n%s", code, out.String())
	}
	if s, _ := h.Service("kubelet"); s.Status != winsim.StatusStopped {
		t.Fatalf("kubelet %s", s.Status)
	}
}

// Under nssm (sig-windows-tools PrepareNode.ps1) the kubelet runs without
// --windows-service and its stderr lands in nssm's AppStderr; with the flag
// it cannot reach the service controller and exits.
func TestKubeletUnderNSSM(t *testing.T) {
	checker := testChecker(t)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Programs = Programs(HookOptions{Logf: t.Logf, Checker: checker})
	})
	h := f.Host
	for path, content := range map[string][]byte{
		`C:\k\kubelet.exe`:         []byte("MZ simulated Windows executable\r\nkubelet v1.36.3\r\n"),
		`C:\k\nssm.exe`:            []byte("MZ simulated Windows executable\r\nnssm 2.24\r\n"),
		`C:\var\log\kubelet\.keep`: nil,
	} {
		if err := h.WriteFile(path, content); err != nil {
			t.Fatal(err)
		}
	}
	nssm := func(args ...string) {
		t.Helper()
		var out, errOut strings.Builder
		if code := h.Run(t.Context(), &winsim.Process{Path: `C:\k\nssm.exe`, Args: args, Stdout: &out, Stderr: &errOut}); code != 0 {
			t.Fatalf("nssm %v: %d %s %s", args, code, out.String(), errOut.String())
		}
	}
	logFile := `C:\var\log\kubelet\kubelet.err.log`
	nssm("install", "kubelet", `C:\k\kubelet.exe`, "--network-plugin=cni")
	nssm("set", "kubelet", "AppStderr", logFile)
	nssm("start", "kubelet")
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := h.ReadFile(logFile)
			if strings.Contains(string(b), want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never contained %q:\n%s", logFile, want, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("unknown flag: --network-plugin")
	if s, _ := h.Service("kubelet"); s.Status != winsim.StatusRunning {
		t.Errorf("nssm keeps the service Running while it restarts the kubelet; got %s", s.Status)
	}
	nssm("stop", "kubelet")
	nssm("set", "kubelet", "AppParameters", "--windows-service")
	nssm("start", "kubelet")
	waitFor("failed OS init: The service process could not connect to the service controller.")
	nssm("stop", "kubelet")
}
