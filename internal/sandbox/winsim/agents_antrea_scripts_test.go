package winsim

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAntreaScripts runs the antrea mode's install-cni and antrea-agent
// scripts (internal/kube/testdata, rendered by internal/networking) on a
// host with the antrea-windows image's files under the container's mount:
// the token, CA, CNI plugins and configuration land where antrea-agent and
// containerd read them, and the agent runs with upstream's flags.
func TestAntreaScripts(t *testing.T) {
	var agentArgs []string
	h := startTestHost(t, func(c *HostConfig) {
		c.Programs = map[string]Program{"antrea-agent": func(_ context.Context, p *Process) int {
			agentArgs = append([]string(nil), p.Args...)
			return 0
		}}
	})
	mount := `C:\C\feed\`
	files := map[string][]byte{
		mount + `var\run\secrets\kubernetes.io\serviceaccount\token`:  []byte("tok"),
		mount + `var\run\secrets\kubernetes.io\serviceaccount\ca.crt`: []byte("ca"),
		mount + `k\antrea\cni\antrea.exe`:                             exe("antrea-cni", "v2.2.0"),
		mount + `k\antrea\cni\host-local.exe`:                         exe("host-local", "v1.9.1"),
		mount + `k\antrea\bin\antrea-agent.exe`:                       exe("antrea-agent", "v2.2.0"),
		mount + `var\lib\antrea-windows\antrea-cni.conflist`:          []byte(`{"name":"antrea"}`),
		mount + `var\lib\antrea-windows\antrea-agent.conf`:            []byte("featureGates:\n"),
	}
	for _, f := range []string{"Install-WindowsCNI.ps1", "Run-AntreaAgent.ps1"} {
		b, err := os.ReadFile("../../kube/testdata/antrea-agent-windows-" + f)
		if err != nil {
			t.Fatal(err)
		}
		files[mount+`var\lib\antrea-windows\`+f] = b
	}
	for path, data := range files {
		if err := h.fs.MkdirAll(parentOf(h.fs.Clean(path))); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(path, data); err != nil {
			t.Fatal(err)
		}
	}
	run := func(script string) {
		t.Helper()
		var out syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		code := h.Run(ctx, &Process{Path: powershellPath,
			Args: []string{"-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command",
				"& (Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT '/var/lib/antrea-windows/" + script + "')"},
			Env: map[string]string{"CONTAINER_SANDBOX_MOUNT_POINT": mount, "PATH": defaultPath}, Stdout: &out, Stderr: &out})
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", script, code, out.String())
		}
	}
	run("Install-WindowsCNI.ps1")
	for path, want := range map[string]string{
		`C:\var\run\secrets\kubernetes.io\serviceaccount\token`: "tok",
		`C:\opt\cni\bin\antrea.exe`:                             "antrea-cni",
		`C:\opt\cni\bin\host-local.exe`:                         "host-local",
		`C:\etc\cni\net.d\10-antrea.conflist`:                   `"antrea"`,
	} {
		if b, err := h.ReadFile(path); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %q %v, want it to hold %q", path, b, err, want)
		}
	}
	run("Run-AntreaAgent.ps1")
	if got := strings.Join(agentArgs, " "); !strings.Contains(got, "--config=C:/C/feed/var/lib/antrea-windows/antrea-agent.conf") || !strings.Contains(got, "--log_file_max_num=4") {
		t.Errorf("antrea-agent args %q", got)
	}
}
