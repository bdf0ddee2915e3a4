package vmtools_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

const nodePassword = "N0de-Passw0rd!"

// vmtoolsConfig is the vmtools transport's configuration for a VM.
func (w *world) vmtoolsConfig(vm *vsphere.VM, password string) remote.Config {
	return remote.Config{Protocol: remote.ProtocolVMTools, User: "Administrator", Password: password,
		Guest: &remote.GuestOperations{Client: w.c.Client.Client, VM: vm.Reference(),
			WaitReady: func(ctx context.Context) error { return w.c.WaitForGuestOperations(ctx, vm) }}}
}

// bootNode clones and powers on a node and waits for its guest operations.
func (w *world) bootNode(t *testing.T, name string) *vsphere.VM {
	t.Helper()
	vm := w.clone(t, name, strings.ToUpper(name), "", nodePassword)
	if err := w.c.PowerOn(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
	return vm
}

// TestVMToolsTransport runs scripts through vCenter's guest operations
// against a simulated guest, as the vmtools transport does: output, exit
// codes, decoded stderr, long scripts, uploads with their hash check and
// skip, and the SOAP calls a Run costs.
func TestVMToolsTransport(t *testing.T) {
	w := start(t)
	vm := w.bootNode(t, "win-tools")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tr, err := remote.Connect(ctx, w.vmtoolsConfig(vm, nodePassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })

	if got := run(t, tr, `$env:COMPUTERNAME`); got != "WIN-TOOLS" {
		t.Errorf("computer name = %q", got)
	}

	// A failing script: its exit code, and its error record decoded from
	// CLIXML as over WinRM.
	res, err := tr.Run(ctx, "Write-Output 'before'\nWrite-Error 'the thing broke'\nexit 7")
	var ee *remote.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 7 || res.ExitCode != 7 {
		t.Fatalf("Run = %+v, %v; want exit 7", res, err)
	}
	if strings.TrimSpace(res.Stdout) != "before" || !strings.Contains(res.Stderr, "the thing broke") || strings.Contains(res.Stderr, "CLIXML") {
		t.Errorf("stdout %q, stderr %q: want the output and the decoded error", res.Stdout, res.Stderr)
	}

	// A script too long for a command line goes as a file.
	long := "$x = '" + strings.Repeat("a", 9000) + "'\nWrite-Output $x.Length"
	if got := run(t, tr, long); got != "9000" {
		t.Errorf("long script printed %q", got)
	}

	// Uploads: sent, verified on the host, skipped when there.
	data := []byte("hello from vCenter\r\n")
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	skipped, err := tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), sha, `C:\k\hello.txt`)
	if err != nil || skipped {
		t.Fatalf("Upload = %v, %v", skipped, err)
	}
	host := w.hosts.ByVM(vm.ID())
	if b, err := host.ReadFile(`C:\k\hello.txt`); err != nil || !bytes.Equal(b, data) {
		t.Errorf("the host has %q, %v", b, err)
	}
	if skipped, err = tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), sha, `C:\k\hello.txt`); err != nil || !skipped {
		t.Errorf("second Upload = %v, %v; want skipped", skipped, err)
	}
	var hm *remote.HashMismatchError
	if _, err := tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), strings.Repeat("0", 64), `C:\k\other.txt`); !errors.As(err, &hm) {
		t.Errorf("Upload with a wrong hash = %v, want a HashMismatchError", err)
	}

	// The calls of a Connect (which proves the session with a Run) and one
	// short Run, counted by vcsim (Close waits for the background deletes).
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	before := w.vc.CallsBy(vsphere.UserAgent)
	tr, err = remote.Connect(ctx, w.vmtoolsConfig(vm, nodePassword))
	if err != nil {
		t.Fatal(err)
	}
	run(t, tr, `Write-Output 'counted'`)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	diff := map[string]int64{}
	var total int64
	for m, n := range w.vc.CallsBy(vsphere.UserAgent) {
		if d := n - before[m]; d > 0 && m != "DestroyPropertyCollector" && m != "DestroyView" { // the shared watch lingering out
			diff[m], total = d, total+d
		}
	}
	t.Logf("SOAP calls of a Connect and a short Run (two Runs: the proof and the script): %d %v", total, diff)
	if diff["StartProgramInGuest"] != 2 || diff["InitiateFileTransferFromGuest"] != 4 || diff["DeleteFileInGuest"] != 4 || diff["ListProcessesInGuest"] < 2 {
		t.Errorf("calls of a Connect and a Run = %v", diff)
	}
	for _, rec := range host.Scripts() {
		if rec.Transport != "vmtools" {
			t.Errorf("script ran over %q", rec.Transport)
		}
	}
}

// TestVMToolsRefusals: a wrong password is refused as vCenter refuses it
// (InvalidGuestLogin, never retried), and so is a guest whose tools are
// not running (GuestOperationsUnavailable).
func TestVMToolsRefusals(t *testing.T) {
	w := start(t)
	vm := w.bootNode(t, "win-refuse")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := w.c.WaitForGuestOperations(ctx, vm); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err := remote.Connect(ctx, w.vmtoolsConfig(vm, "Wr0ng-Passw0rd"))
	var ce *remote.ConnectError
	if !errors.As(err, &ce) || ce.Step != remote.StepAuth || ce.Attempts > 1 || !fault.Is(err, &types.InvalidGuestLogin{}) {
		t.Fatalf("Connect with a wrong password = %v; want one auth failure with InvalidGuestLogin", err)
	}
	if !strings.Contains(err.Error(), "password") || time.Since(start) > 10*time.Second {
		t.Errorf("the error %q (after %s) should name the password, at once", err, time.Since(start))
	}

	// The guest goes down (its tools stop): a guest operation is refused.
	host := w.hosts.ByVM(vm.ID())
	ops := guest.NewOperationsManager(w.c.Client.Client, vm.Reference())
	pm, err := ops.ProcessManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	auth := &types.NamePasswordAuthentication{Username: "Administrator", Password: nodePassword}
	if _, err := pm.ListProcesses(ctx, auth, nil); err != nil {
		t.Fatalf("ListProcesses with the right password: %v", err)
	}
	// A program environment or a working directory for powershell.exe is
	// not modelled: refused, never ignored.
	for _, spec := range []types.GuestProgramSpec{
		{ProgramPath: `C:\Windows\System32\cmd.exe`, Arguments: "/c exit 0", EnvVariables: []string{"X=1"}},
		{ProgramPath: `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, Arguments: "-Command exit 0", WorkingDirectory: `C:\Windows`},
	} {
		if _, err := pm.StartProgram(ctx, auth, &spec); !fault.Is(err, &types.NotImplemented{}) {
			t.Errorf("StartProgramInGuest %+v = %v, want NotImplemented", spec, err)
		}
	}

	down := make(chan struct{})
	var downOnce sync.Once
	defer w.hosts.OnEvent(func(ev vmtools.Event) {
		if ev.Down && strings.EqualFold(ev.ComputerName, "win-refuse") {
			downOnce.Do(func() { close(down) })
		}
	})()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); host.Reboot() }()
	select {
	case <-down:
	case <-time.After(5 * time.Second):
		t.Fatal("the guest did not go down within 5s of its reboot")
	}
	_, err = pm.ListProcesses(ctx, auth, nil)
	wg.Wait()
	if !fault.Is(err, &types.GuestOperationsUnavailable{}) {
		t.Errorf("ListProcesses while the guest restarts = %v, want GuestOperationsUnavailable", err)
	}

	// A guest method the sandbox does not model is refused, not faked.
	fm, err := ops.FileManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fm.ListFiles(ctx, auth, `C:\`, 0, 0, ""); !fault.Is(err, &types.NotImplemented{}) {
		t.Errorf("ListFilesInGuest = %v, want NotImplemented", err)
	}
}

// TestVMToolsRestartUnderScript: a guest that restarts under a running
// script cuts it as a restart cuts a WinRM command (ErrConnectionCut, what
// guest.Session reconnects after), and Connect waits for the guest to take
// guest operations again.
func TestVMToolsRestartUnderScript(t *testing.T) {
	w := start(t)
	vm := w.bootNode(t, "win-reboot")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg := w.vmtoolsConfig(vm, nodePassword)
	tr, err := remote.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Close() }()
	w.hosts.SetFaults("WIN-REBOOT", winsim.Faults{Steps: []winsim.StepFault{{Match: regexp.MustCompile("reboot-under-me"), Reboot: true, Times: 1}}})
	_, err = tr.Run(ctx, "Write-Output 'reboot-under-me'")
	if !errors.Is(err, remote.ErrConnectionCut) {
		t.Fatalf("Run under a restart = %v, want ErrConnectionCut", err)
	}
	tr2, err := remote.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("Connect after the restart: %v", err)
	}
	defer func() { _ = tr2.Close() }()
	if got := run(t, tr2, `$env:COMPUTERNAME`); got != "WIN-REBOOT" {
		t.Errorf("after the restart: %q", got)
	}
}
