package guest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain/addomaintest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestDomainJoinedStepReadsNetSetupLog: the domain-joined step passes on a
// NetSetup.LOG whose join ended 0x0 and fails on one the sandbox's domain
// refused (a wrong password: 0x52e), with Windows' text and the settings to
// check; without a log, it says no join ran.
func TestDomainJoinedStepReadsNetSetupLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dc := addomaintest.Start(t, addomain.Options{AdminPassword: "Adm1n-Passw0rd!"})
	netsetup := func(password string) string {
		var lines []string
		_, _ = addomain.Join(ctx, addomain.Locators{dc.Domain(): dc}, addomain.JoinRequest{
			Domain: dc.Domain(), User: "Administrator", Password: password, ComputerName: "WIN-A",
			Log: func(l string) { lines = append(lines, l) },
		})
		return strings.Join(lines, "\r\n")
	}

	f := winsimtest.StartHost(t, nil)
	tr, err := remote.Connect(ctx, remote.Config{Protocol: remote.ProtocolWinRM, Host: "127.0.0.1", Port: f.Host.Ports().WinRM,
		NTLM: true, User: "Administrator", Password: f.Password, Backoff: remote.Backoff{Initial: 50 * time.Millisecond, Max: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	step, err := bootstrap.DomainJoinedStep("corp.example.test")
	if err != nil {
		t.Fatal(err)
	}
	place := func(log string) {
		t.Helper()
		script := "New-Item -ItemType Directory -Force -Path 'C:\\Windows\\debug' | Out-Null\nSet-Content -Path " + psquote.Single(bootstrap.NetSetupLog) + " -Value " + psquote.Single(log)
		if r, err := tr.Run(ctx, script); err != nil {
			t.Fatalf("placing NetSetup.LOG: %v %+v", err, r)
		}
	}

	r, err := tr.Run(ctx, step.Script)
	if err == nil || !strings.Contains(r.Stderr+err.Error(), "no domain join ran") {
		t.Fatalf("without NetSetup.LOG: %v %+v", err, r)
	}

	place(netsetup("wrong"))
	r, err = tr.Run(ctx, step.Script)
	out := r.Stdout + r.Stderr
	if err == nil || !strings.Contains(out, "The user name or password is incorrect.") || !strings.Contains(out, "active_directory.join_password") || !strings.Contains(out, "0x52e") {
		t.Fatalf("after a refused join: %v\n%s", err, out)
	}

	place(netsetup("Adm1n-Passw0rd!"))
	r, err = tr.Run(ctx, step.Script)
	if err != nil || !strings.Contains(r.Stdout, "joined corp.example.test") {
		t.Fatalf("after a join: %v %+v", err, r)
	}
}
