package acctest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/winsim"
)

var (
	nativeOnce   sync.Once
	nativeReason string
)

// PreCheckHosts is PreCheck for tests that build golden images or join
// nodes: their steps run native programs (containerd.exe --register-service,
// sc.exe create/config/failure, tar.exe, ctr.exe) and check
// $LASTEXITCODE, so they need a simulated host that runs native programs
// (winsim's Process/Program contract with sc.exe, containerd and
// kube-log-runner modelled). A simulator that predates it records such
// statements without running them, and these tests skip with the reason
// instead of failing on a service that was never created.
func PreCheckHosts(t *testing.T) {
	t.Helper()
	PreCheck(t)
	SkipWithoutNativePrograms(t)
}

// SkipWithoutNativePrograms skips a test whose hosts run the bootstrap's
// steps when the simulator cannot run native programs (see PreCheckHosts);
// tests outside the acceptance suite (the kube package's join harness) use
// it directly.
func SkipWithoutNativePrograms(t testing.TB) {
	t.Helper()
	nativeOnce.Do(func() { nativeReason = probeNativePrograms(t.TempDir()) })
	if nativeReason != "" {
		t.Skip(nativeReason)
	}
}

// probeNativePrograms asks a throwaway host to run `sc.exe query` (a
// System32 program): "" when the host models it, else why not.
func probeNativePrograms(dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	off := winsim.PortDisabled
	h, err := winsim.Start(ctx, winsim.HostConfig{ComputerName: "PROBE", AdminPassword: "probe", Dir: dir,
		Ports: &winsim.Ports{WinRM: off, WinRMHTTPS: off, SSH: off}})
	if err != nil {
		return "starting a probe host: " + err.Error()
	}
	defer func() { _ = h.Stop() }()
	var stderr bytes.Buffer
	h.Run(ctx, &winsim.Process{Path: "sc.exe", Args: []string{"query", "probe-no-such-service"}, Stderr: &stderr})
	if strings.Contains(stderr.String(), "does not model the program") {
		return "the Windows host simulator in this tree does not run native programs yet (sc.exe: " + strings.TrimSpace(stderr.String()) +
			"); golden image builds and node joins need it (containerd.exe --register-service, sc.exe, kube-log-runner, $LASTEXITCODE)"
	}
	return ""
}
