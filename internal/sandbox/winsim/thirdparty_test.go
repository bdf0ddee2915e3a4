package winsim_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"
	"github.com/packer-community/winrmcp/winrmcp"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestTerraformStyleUploadAndRun does what Terraform's WinRM communicator does
// for a remote-exec provisioner: winrmcp uploads the script (echo chunks, then
// its restore script) over HTTPS with NTLM, then the script runs by path.
func TestTerraformStyleUploadAndRun(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	cp, err := winrmcp.New(fmt.Sprintf("127.0.0.1:%d", f.Host.Ports().WinRMHTTPS), &winrmcp.Config{
		Auth:                  winrmcp.Auth{User: "Administrator", Password: f.Password},
		Https:                 true,
		CACertBytes:           f.CA.CertPEM,
		OperationTimeout:      5 * time.Second,
		MaxOperationsPerShell: 15,
		TransportDecorator:    func() winrm.Transporter { return &winrm.ClientNTLM{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 100<<10)
	_, _ = rand.Read(payload)
	if err := cp.Write("C:/Temp/payload.bin", bytes.NewReader(payload)); err != nil {
		t.Fatalf("winrmcp upload: %v", err)
	}
	if got, err := f.Host.ReadFile(`C:\Temp\payload.bin`); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("uploaded file differs: %v (%d bytes)", err, len(got))
	}
	for _, r := range f.Host.Scripts() {
		if strings.HasPrefix(r.Text, "echo ") && len(r.Text) > 300 {
			t.Fatalf("an upload chunk was logged in full (%d characters)", len(r.Text))
		}
	}

	if err := cp.Write("C:/Temp/terraform_42.cmd", strings.NewReader("echo provisioned on %COMPUTERNAME%\r\nhostname\r\n")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, f, true, true, f.Password)
	var out, errOut bytes.Buffer
	code, err := c.RunWithContext(context.Background(), "C:/Temp/terraform_42.cmd", &out, &errOut)
	if err != nil || code != 0 {
		t.Fatalf("run: code %d err %v stderr %q", code, err, errOut.String())
	}
	if !strings.Contains(out.String(), "WIN-TEST\r\n") {
		t.Fatalf("stdout %q", out.String())
	}
	// remote-exec blanks its script afterwards by uploading nothing over it
	// (the restore script's `echo $null > $dest_file_path`). In 5.1 that is
	// Out-File in UTF-16LE: its StreamWriter writes the byte order mark when
	// it is disposed even with no text (StreamWriter.Flush, dotnet/runtime
	// src/libraries/System.Private.CoreLib/src/System/IO/StreamWriter.cs:
	// "if (!_haveWrittenPreamble) ... _stream.Write(preamble)").
	if err := cp.Write("C:/Temp/terraform_42.cmd", strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Host.ReadFile(`C:\Temp\terraform_42.cmd`); err != nil || !bytes.Equal(got, []byte{0xFF, 0xFE}) {
		t.Fatalf("blanked script: %q %v", got, err)
	}
}

func TestRestartComputerDropsConnections(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	c := newClient(t, f, false, true, f.Password)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, code, err := c.RunPSWithContext(ctx, "Restart-Computer -Force"); err != nil || code != 0 {
		t.Fatalf("Restart-Computer: code %d err %v", code, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Host.Up() {
		if time.Now().After(deadline) {
			t.Fatal("host did not go down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, _, err := c.RunPSWithContext(ctx, "Write-Output x"); err == nil {
		t.Fatal("a command succeeded while the host was down")
	}
	if err := f.Host.WaitUp(ctx); err != nil {
		t.Fatal(err)
	}
	out, _, _, err := newClient(t, f, false, true, f.Password).RunPSWithContext(ctx, "$env:COMPUTERNAME")
	if err != nil || strings.TrimSpace(out) != "WIN-TEST" {
		t.Fatalf("after reboot: %q %v", out, err)
	}
}

func TestRebootMidStep(t *testing.T) {
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.Faults.Steps = []winsim.StepFault{{Step: "install-updates", Reboot: true, Times: 1}}
	})
	c := newClient(t, f, false, true, f.Password)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, _, err := c.RunPSWithContext(ctx, "# step: install-updates\nWrite-Output 'updated'")
	if err == nil {
		t.Fatal("the step completed although the host rebooted under it")
	}
	if err := f.Host.WaitUp(ctx); err != nil {
		t.Fatal(err)
	}
	out, _, _, err := newClient(t, f, false, true, f.Password).RunPSWithContext(ctx, "# step: install-updates\nWrite-Output 'updated'")
	if err != nil || strings.TrimSpace(out) != "updated" {
		t.Fatalf("re-run after reboot: %q %v", out, err)
	}
}

func TestInvalidShellFault(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	c := newClient(t, f, false, true, f.Password)
	shell := c.NewShell("00000000-0000-0000-0000-000000000000")
	_, err := shell.ExecuteWithContext(context.Background(), "echo x")
	// masterzen/winrm's default transport hands non-200 bodies back as
	// answers, so the fault surfaces as an unexpected action.
	if err == nil || !strings.Contains(err.Error(), "fault") {
		t.Fatalf("err = %v, want the InvalidSelectors fault", err)
	}
}

// BenchmarkHosts50 reports the memory of 50 idle simulated hosts.
func BenchmarkHosts50(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtimeMem
		before.read()
		hosts := make([]*winsim.Host, 0, 50)
		ca := winsimtest.NewCA(b)
		certPEM, keyPEM, err := ca.IssueServing("h", "127.0.0.1")
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 50; j++ {
			h, err := winsim.Start(context.Background(), winsim.HostConfig{
				ComputerName: fmt.Sprintf("WIN-%02d", j), IP: fmt.Sprintf("127.0.1.%d", j+1),
				AdminPassword: "pw", Dir: b.TempDir(), TLSCertPEM: certPEM, TLSKeyPEM: keyPEM,
				Ports: &winsim.Ports{},
			})
			if err != nil {
				b.Fatal(err)
			}
			hosts = append(hosts, h)
		}
		after.read()
		b.ReportMetric(float64(after.heap-before.heap)/50, "bytes/host")
		b.ReportMetric(float64(after.heap-before.heap), "bytes/50hosts")
		b.ReportMetric(float64(after.goroutines-before.goroutines)/50, "goroutines/host")
		for _, h := range hosts {
			_ = h.Stop()
		}
	}
}
