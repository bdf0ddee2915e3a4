package winsim

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A HostProcess container's command: powershell.exe with -Command, its
// environment from the pod (CONTAINER_SANDBOX_MOUNT_POINT), running a script
// from the container's mount; exit codes pass through, and what is not
// modelled still fails.
func TestPowerShellProcess(t *testing.T) {
	h := startTestHost(t, nil)
	if err := h.fs.MkdirAll(`C:\C\abc\etc\cfg`); err != nil {
		t.Fatal(err)
	}
	script := "Write-Output ('node ' + $env:NODE_NAME + ' mount ' + $env:CONTAINER_SANDBOX_MOUNT_POINT)\r\nexit 7\r\n"
	if err := h.WriteFile(`C:\C\abc\etc\cfg\start.ps1`, []byte(script)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := h.Run(context.Background(), &Process{
			Path: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, Args: args,
			Env:    map[string]string{"NODE_NAME": "win-0", "CONTAINER_SANDBOX_MOUNT_POINT": `C:\C\abc\`, "PATH": defaultPath},
			Stdout: &out, Stderr: &errOut,
		})
		return out.String(), errOut.String(), code
	}
	out, stderr, code := run("-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command",
		"& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '/etc/cfg/start.ps1')")
	if code != 7 || !strings.Contains(out, `node win-0 mount C:\C\abc\`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if _, stderr, code := run("-Command", "Star-Service x"); code != 1 || !strings.Contains(stderr, "is not recognized") {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
}
