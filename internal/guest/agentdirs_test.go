package guest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestAgentDirsRefuseAStandardUser: a local user who is no administrator
// plants C:\run\flannel (and the file kube-proxy waits for) before the image
// build, as C:\'s stock DACL lets it; after bootstrap.AgentDirsStep, that
// user can create nothing in any agent directory, can neither read nor
// re-grant itself what it planted, and owns none of them.
func TestAgentDirsRefuseAStandardUser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const user, password = "plain", "Plain-Passw0rd!"
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.LocalAccounts = []winsim.LocalAccount{{Name: user, Password: password, Groups: []string{"Users"}}}
	})
	dial := func(user, password string) remote.Transport {
		t.Helper()
		tr, err := remote.Connect(ctx, remote.Config{Protocol: remote.ProtocolWinRM, Host: "127.0.0.1", Port: f.Host.Ports().WinRM,
			NTLM: true, User: user, Password: password, Backoff: remote.Backoff{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}})
		if err != nil {
			t.Fatalf("connecting as %s: %v", user, err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		return tr
	}
	admin, plain := dial("Administrator", f.Password), dial(user, password)

	// The control: before the build, C:\ lets the user plant.
	plant := "$ErrorActionPreference = 'Stop'\n" +
		"New-Item -ItemType Directory -Path 'C:\\run\\flannel' -Force | Out-Null\n" +
		"Set-Content -Path 'C:\\run\\flannel\\subnet.env' -Value 'FLANNEL_SUBNET=6.6.6.0/24'\n" +
		"icacls.exe 'C:\\run' /grant 'plain:(OI)(CI)F' | Out-Null\n" +
		"if ($LASTEXITCODE) { exit $LASTEXITCODE }"
	if r, err := plain.Run(ctx, plant); err != nil {
		t.Fatalf("the user could not plant before the build (the control): %v %+v", err, r)
	}

	step, err := bootstrap.AgentDirsStep()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Run(ctx, step.Script); err != nil {
		t.Fatalf("agent-dirs: %v", err)
	}

	for _, d := range bootstrap.AgentDirs {
		for what, script := range map[string]string{
			"create a folder in": "New-Item -ItemType Directory -Path " + psquote.Single(d+`\planted`),
			"create a file in":   "Set-Content -Path " + psquote.Single(d+`\planted.txt`) + " -Value x",
			"read the DACL of":   "Get-Acl -Path " + psquote.Single(d),
			"grant itself on":    "icacls.exe " + psquote.Single(d) + " /grant 'plain:F'; exit $LASTEXITCODE",
		} {
			if r, err := plain.Run(ctx, "$ErrorActionPreference = 'Stop'\n"+script); err == nil {
				t.Errorf("the user could %s %s: %+v", what, d, r)
			}
		}
		r, err := admin.Run(ctx, "(Get-Acl -Path "+psquote.Single(d)+").Owner")
		if err != nil || strings.TrimSpace(r.Stdout) != `BUILTIN\Administrators` {
			t.Errorf("owner of %s: %q %v, want BUILTIN\\Administrators", d, r.Stdout, err)
		}
	}
	for _, script := range []string{
		"Get-Content -Path 'C:\\run\\flannel\\subnet.env'",
		"Set-Content -Path 'C:\\run\\flannel\\subnet.env' -Value 'FLANNEL_SUBNET=7.7.7.0/24'",
		"icacls.exe 'C:\\run\\flannel\\subnet.env' /grant 'plain:F'; exit $LASTEXITCODE",
		"Remove-Item -Path 'C:\\run\\flannel' -Recurse -Force",
	} {
		if r, err := plain.Run(ctx, "$ErrorActionPreference = 'Stop'\n"+script); err == nil {
			t.Errorf("the user still controls what it planted (%s): %+v", script, r)
		}
	}
	// Rerunnable: it converges.
	if _, err := admin.Run(ctx, step.Script); err != nil {
		t.Fatalf("agent-dirs again: %v", err)
	}
}
