package communicator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// startHost boots a simulated Windows host on its own loopback address with
// the Windows ports (5985, 5986, 22) and an HTTPS certificate from the
// sandbox CA, as the sandbox does for a powered-on VM.
func startHost(t *testing.T) *winsim.Host {
	t.Helper()
	acctest.PreCheck(t)
	sb := acctest.Sandbox
	var lastErr error
	for range 5 {
		ip := fmt.Sprintf("127.%d.%d.%d", 200+rand.IntN(50), rand.IntN(256), 1+rand.IntN(254))
		certPEM, keyPEM, err := sb.CA.IssueServing(ip, "win-comm")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h, err := winsim.Start(ctx, winsim.HostConfig{
			ComputerName: "WIN-COMM", IP: ip, AdminPassword: sb.AdminPassword,
			Dir: t.TempDir(), TLSCertPEM: certPEM, TLSKeyPEM: keyPEM,
		})
		cancel()
		if err == nil {
			t.Cleanup(func() { _ = h.Stop() })
			return h
		}
		lastErr = err // that address is taken: try another
	}
	t.Fatalf("starting a simulated host: %v", lastErr)
	return nil
}

// config is a terraform_data resource provisioned over Terraform's WinRM
// communicator: HTTPS on 5986, certificate verified against the sandbox CA,
// NTLM authentication.
func config(h *winsim.Host, trigger string, commands ...string) string {
	quoted := make([]string, len(commands))
	for i, c := range commands {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(`
resource "terraform_data" "provision" {
  triggers_replace = %q

  connection {
    type     = "winrm"
    host     = %q
    port     = 5986
    https    = true
    insecure = false
    use_ntlm = true
    cacert   = <<-EOT
%sEOT
    user     = "Administrator"
    password = %q
    timeout  = "1m"
  }

  provisioner "remote-exec" {
    inline = [%s]
  }
}
`, trigger, h.IP(), acctest.Sandbox.CA.CertPEM, acctest.Sandbox.AdminPassword, strings.Join(quoted, ", "))
}

func TestAccRemoteExec_winrm(t *testing.T) {
	h := startHost(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(h, "1",
					`echo provisioned on %COMPUTERNAME%> C:\k\echo.txt`,
					`powershell -NoProfile -NonInteractive -Command "Set-Content -Path 'C:\k\marker.txt' -Value 'hello from terraform'"`,
					`hostname`,
				),
				Check: func(*terraform.State) error {
					for path, want := range map[string]string{
						`C:\k\echo.txt`:   "provisioned on WIN-COMM",
						`C:\k\marker.txt`: "hello from terraform",
					} {
						got, err := h.ReadFile(path)
						if err != nil {
							return fmt.Errorf("the provisioner's output is missing: %w", err)
						}
						if strings.TrimSpace(string(got)) != want {
							return fmt.Errorf("%s = %q, want %q", path, got, want)
						}
					}
					return expectUploadedAndRun(h)
				},
			},
			{
				// A failing command fails the apply (the resource is replaced,
				// so the provisioner runs again).
				Config:      config(h, "2", `echo about to fail`, `exit /b 3`),
				ExpectError: regexp.MustCompile(`(?s)remote-exec provisioner error.*terraform_\d+\.cmd" exit status: 3`),
			},
		},
	})
}

// expectUploadedAndRun checks that Terraform uploaded its script (winrmcp:
// echo chunks, then the restore script) as C:\Temp\terraform_<n>.cmd, ran it
// over HTTPS with exit code 0, and blanked it afterwards (remote-exec uploads
// an empty file over the script), as the host's disk and scripts.log show.
// An empty upload is winrmcp's `echo $null > $dest_file_path`, which in
// Windows PowerShell 5.1 leaves the UTF-16LE byte order mark alone (FF FE:
// about_Redirection, redirection writes Unicode).
func expectUploadedAndRun(h *winsim.Host) error {
	entries, err := os.ReadDir(h.DiskPath(`C:\Temp`))
	if err != nil {
		return err
	}
	var script string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "terraform_") && strings.HasSuffix(e.Name(), ".cmd") {
			script = e.Name()
			if b, err := h.ReadFile(`C:\Temp\` + e.Name()); err != nil || string(b) != "\xff\xfe" {
				return fmt.Errorf("%s was not blanked after the run: %q %v", e.Name(), b, err)
			}
		}
	}
	if script == "" {
		return fmt.Errorf("no C:\\Temp\\terraform_*.cmd was uploaded")
	}
	var chunks, restores, runs int
	for _, r := range h.Scripts() {
		if r.Transport != "winrm-https" || r.User != "Administrator" {
			continue
		}
		switch {
		case strings.HasPrefix(r.Text, "echo ") && strings.Contains(r.Text, "winrmcp-"):
			chunks++
		case winsim.WinrmcpRestoreRE.MatchString(r.Text) && strings.Contains(r.Text, script) && r.ExitCode == 0:
			restores++
		case strings.Contains(r.Text, script) && r.ExitCode == 0:
			runs++
		}
	}
	// Two uploads (the script, then the blank), one run.
	if chunks < 1 || restores != 2 || runs != 1 {
		return fmt.Errorf("scripts.log: %d upload chunks, %d restores, %d runs of %s", chunks, restores, runs, script)
	}
	return nil
}
