package winsim

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// imageSteps reads the bootstrap's golden image steps (a test fixture file;
// the simulator imports nothing of internal/bootstrap).
func imageSteps(b *testing.B) map[string]string {
	raw, err := os.ReadFile("../bootstrap/testdata/image-steps.ps1")
	if err != nil {
		b.Fatal(err)
	}
	steps := map[string]string{}
	for _, part := range strings.Split(string(raw), "########## ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		steps[name] = body
	}
	return steps
}

// BenchmarkGateImageSteps is the syntax gate alone: the tree-sitter parse of
// the whole golden image script.
func BenchmarkGateImageSteps(b *testing.B) {
	raw, err := os.ReadFile("../bootstrap/testdata/image-steps.ps1")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for i := 0; i < b.N; i++ {
		if _, err := pwsh.Parse(string(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunImageSteps parses and runs the image steps that need no
// network (prepare, containerd-service, vmware-tools, firewall,
// windows-build) through powershell.exe -EncodedCommand on a host.
func BenchmarkRunImageSteps(b *testing.B) {
	steps := imageSteps(b)
	h, err := Start(context.Background(), HostConfig{ComputerName: "WIN-BENCH", AdminPassword: "pw", Dir: b.TempDir(),
		Ports: &Ports{WinRM: PortDisabled, WinRMHTTPS: PortDisabled, SSH: PortDisabled}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := h.Stop(); err != nil {
			b.Error(err)
		}
	})
	names := []string{"prepare", "containerd-service", "vmware-tools", "firewall", "windows-build"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range names {
			var o, e bytes.Buffer
			code := h.execute(context.Background(), execRequest{Transport: "bench", User: "Administrator", CommandLine: encoded(steps[n]), Stdout: &o, Stderr: &e})
			if code != 0 {
				b.Fatalf("%s: exit %d: %s", n, code, e.String())
			}
		}
	}
}
