package vmtools_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
)

// TestVMToolsServiceRestartUnderScript: a script run over vmtools that
// restarts the VMTools service (what the image build's tools.conf step
// once did) loses its own result: VMware Tools stops (vSphere sees it not
// running), starts again knowing nothing of the process it started, and
// the transport fails the Run with ErrConnectionCut and a message naming
// VMware Tools' restart. The guest takes guest operations again after.
func TestVMToolsServiceRestartUnderScript(t *testing.T) {
	w := start(t)
	vm := w.bootNode(t, "win-toolsrs")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var changes []bool
	defer w.hosts.OnEvent(func(ev vmtools.Event) {
		if ev.Tools != nil && strings.EqualFold(ev.ComputerName, "WIN-TOOLSRS") {
			mu.Lock()
			changes = append(changes, *ev.Tools)
			mu.Unlock()
		}
	})()
	cfg := w.vmtoolsConfig(vm, nodePassword)
	tr, err := remote.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Close() }()
	res, err := tr.Run(ctx, "Restart-Service -Name 'VMTools'\nWrite-Output 'restarted'")
	if !errors.Is(err, remote.ErrConnectionCut) {
		t.Fatalf("Run restarting VMTools = %+v, %v; want ErrConnectionCut", res, err)
	}
	for _, want := range []string{"VMware Tools", "VMTools", "must not restart VMware Tools"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	mu.Lock()
	got := append([]bool(nil), changes...)
	mu.Unlock()
	// The boot's own start may be seen first (it races the hook).
	if len(got) > 0 && got[0] && len(got) == 3 {
		got = got[1:]
	}
	if len(got) != 2 || got[0] || !got[1] {
		t.Errorf("VMware Tools changes seen = %v, want [false true] (stopped, then running again)", got)
	}
	// The script went on running (Windows does not end a process with its
	// parent) and VMware Tools came back: the guest takes guest
	// operations again, through a new connection.
	tr2, err := remote.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("Connect after VMware Tools restarted: %v", err)
	}
	defer func() { _ = tr2.Close() }()
	if got := run(t, tr2, "(Get-Service -Name 'VMTools').Status"); got != "Running" {
		t.Errorf("VMTools after the restart: %q", got)
	}
}

// TestVMToolsServiceStopped: with the VMTools service stopped (over WinRM)
// vCenter answers guest operations with GuestOperationsUnavailable and
// reports VMware Tools not running; started again, the guest takes them.
func TestVMToolsServiceStopped(t *testing.T) {
	w := start(t)
	vm, ip := w.bootClone(t, "2022", "win-toolsoff")
	winrm := w.connect(t, ip, nodePassword)
	// A fresh clone runs what a stock installation starts at boot.
	const list = "foreach ($n in @('VMTools', 'WinRM', 'EventLog', 'mpssvc', 'wuauserv', 'TrustedInstaller')) { $s = Get-Service -Name $n; Write-Output ($s.Name + ' ' + $s.Status + ' ' + $s.StartType) }"
	want := "VMTools Running Automatic\r\nWinRM Running Automatic\r\nEventLog Running Automatic\r\nmpssvc Running Automatic\r\nwuauserv Stopped Manual\r\nTrustedInstaller Stopped Manual"
	if got := run(t, winrm, list); got != want {
		t.Errorf("a fresh clone's services:\n%s\nwant\n%s", got, want)
	}
	if got := run(t, winrm, "Stop-Service -Name 'VMTools'\n(Get-Service -Name 'VMTools').Status"); got != "Stopped" {
		t.Fatalf("VMTools after Stop-Service: %q", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var mvm mo.VirtualMachine
	if err := w.c.Client.RetrieveOne(ctx, vm.Reference(), []string{"guest"}, &mvm); err != nil {
		t.Fatal(err)
	}
	if mvm.Guest.ToolsRunningStatus != string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning) || mvm.Guest.GuestOperationsReady == nil || *mvm.Guest.GuestOperationsReady {
		t.Errorf("with VMTools stopped vSphere reports tools %s, guestOperationsReady %v", mvm.Guest.ToolsRunningStatus, mvm.Guest.GuestOperationsReady)
	}
	pm, err := guest.NewOperationsManager(w.c.Client.Client, vm.Reference()).ProcessManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	auth := &types.NamePasswordAuthentication{Username: "Administrator", Password: nodePassword}
	_, err = pm.StartProgram(ctx, auth, &types.GuestProgramSpec{ProgramPath: `C:\Windows\System32\cmd.exe`, Arguments: "/c echo x"})
	if !fault.Is(err, &types.GuestOperationsUnavailable{}) {
		t.Fatalf("StartProgramInGuest with VMTools stopped = %v, want GuestOperationsUnavailable", err)
	}
	if got := run(t, winrm, "Start-Service -Name 'VMTools'\n(Get-Service -Name 'VMTools').Status"); got != "Running" {
		t.Fatalf("VMTools after Start-Service: %q", got)
	}
	if err := w.c.WaitForGuestOperations(ctx, vm); err != nil {
		t.Fatal(err)
	}
	tr, err := remote.Connect(ctx, w.vmtoolsConfig(vm, nodePassword))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Close() }()
	if got := run(t, tr, "$env:COMPUTERNAME"); got != "WIN-TOOLSOFF" {
		t.Errorf("computer name over vmtools after VMTools started again: %q", got)
	}
}
