package kubeletsim

import (
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/winsim/winsimtest"
)

// A kubelet service without --windows-service never talks to the service
// control manager: Windows fails the start with 1053 after the timeout.
func TestKubeletServiceNeedsWindowsServiceFlag(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Programs = Programs(HookOptions{Logf: t.Logf})
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
