package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// uacOps are administrative operations as a script runs them, each with
// what Windows answers a filtered token.
var uacOps = []struct {
	name, script, denied string
}{
	{"hklm", `[Environment]::SetEnvironmentVariable('UAC_PROBE', '1', 'Machine')`, "Requested registry access is not allowed."},
	{"windows-dir", `Set-Content -Path 'C:\Windows\uac-probe.txt' -Value x`, `Access to the path 'C:\Windows\uac-probe.txt' is denied.`},
	{"new-service", `New-Service -Name uacprobe -BinaryPathName 'C:\k\probe.exe'`, "Access is denied"},
	{"sc-create", `& sc.exe create uacprobe2 binPath= C:\k\probe.exe; exit $LASTEXITCODE`, "[SC] OpenSCManager FAILED 5:"},
}

// clientAs is an outside WinRM client (NTLM with message encryption over
// HTTP, as against a stock host) logging on as user.
func clientAs(t *testing.T, f *winsimtest.Fixture, user, password string) *winrm.Client {
	t.Helper()
	ep := &winrm.Endpoint{Host: "127.0.0.1", Port: f.Host.Ports().WinRM, Timeout: 20 * time.Second}
	params := *winrm.DefaultParameters
	params.Timeout = "PT5S"
	params.TransportDecorator = func() winrm.Transporter { return &sealingNTLM{user: user, password: password} }
	c, err := winrm.NewClientWithParameters(ep, user, password, &params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runOps runs each of uacOps (on a fresh host state per op name) and
// reports whether each was refused as Windows refuses a filtered token.
func runOps(ctx context.Context, t *testing.T, c *winrm.Client, wantDenied bool) {
	t.Helper()
	for _, op := range uacOps {
		out, errOut, code, err := c.RunPSWithContext(ctx, "$ErrorActionPreference = 'Stop'\n"+op.script)
		if err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		denied := code != 0 && strings.Contains(out+errOut, op.denied)
		if denied != wantDenied {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want denied=%v", op.name, code, out, errOut, wantDenied)
		}
		if wantDenied && op.name == "sc-create" && code != 5 {
			t.Errorf("sc.exe create exit %d, want 5 (ERROR_ACCESS_DENIED)", code)
		}
	}
}

// UAC remote restrictions through an outside WinRM client: a local
// administrator other than the built-in Administrator is refused
// administrative work until LocalAccountTokenFilterPolicy is 1; the built-in
// Administrator is not, whatever its name, unless FilterAdministratorToken
// is 1.
func TestUACRemoteRestrictions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	accounts := func(c *winsim.HostConfig) {
		c.LocalAccounts = []winsim.LocalAccount{
			{Name: "ops", Password: "Ops-Passw0rd!", Groups: []string{"Administrators", "Users"}},
			{Name: "plain", Password: "Plain-Passw0rd!", Groups: []string{"Users"}},
		}
	}
	policy := func(t *testing.T, f *winsimtest.Fixture, name string, v uint32) {
		t.Helper()
		if err := f.Host.SetRegistryValue(winsim.PolicySystemKey, name, winsim.RegValue{Type: winsim.RegDWord, DWord: v}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("other-admin-filtered", func(t *testing.T) {
		f := winsimtest.StartHost(t, accounts)
		c := clientAs(t, f, "ops", "Ops-Passw0rd!")
		runOps(ctx, t, c, true)
		// Its own work is allowed: a folder at the root, reads.
		out, errOut, code, err := c.RunPSWithContext(ctx, "$ErrorActionPreference = 'Stop'\nNew-Item -ItemType Directory -Path C:\\k | Out-Null; Get-Service | Out-Null; $env:USERNAME")
		if err != nil || code != 0 || strings.TrimSpace(out) != "ops" {
			t.Fatalf("non-administrative work: exit %d %v, stdout %q, stderr %q", code, err, out, errOut)
		}
		if _, ok := f.Host.Service("uacprobe"); ok {
			t.Fatal("the refused New-Service created the service")
		}
	})
	t.Run("standard-user-filtered", func(t *testing.T) {
		f := winsimtest.StartHost(t, accounts)
		runOps(ctx, t, clientAs(t, f, "plain", "Plain-Passw0rd!"), true)
	})
	t.Run("other-admin-with-LocalAccountTokenFilterPolicy", func(t *testing.T) {
		f := winsimtest.StartHost(t, accounts)
		policy(t, f, "LocalAccountTokenFilterPolicy", 1)
		runOps(ctx, t, clientAs(t, f, "ops", "Ops-Passw0rd!"), false)
		if _, ok := f.Host.Service("uacprobe"); !ok {
			t.Fatal("New-Service did not create the service")
		}
	})
	t.Run("built-in-administrator", func(t *testing.T) {
		f := winsimtest.StartHost(t, accounts)
		runOps(ctx, t, clientAs(t, f, "Administrator", winsimtest.Password), false)
	})
	t.Run("renamed-built-in-administrator", func(t *testing.T) {
		f := winsimtest.StartHost(t, func(c *winsim.HostConfig) { accounts(c); c.AdminUser = "LocalRoot" })
		runOps(ctx, t, clientAs(t, f, "LocalRoot", winsimtest.Password), false)
	})
	t.Run("built-in-administrator-with-FilterAdministratorToken", func(t *testing.T) {
		f := winsimtest.StartHost(t, accounts)
		policy(t, f, "FilterAdministratorToken", 1)
		runOps(ctx, t, clientAs(t, f, "Administrator", winsimtest.Password), true)
	})
}
