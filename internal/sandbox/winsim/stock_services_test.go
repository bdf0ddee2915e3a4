package winsim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// startStockHost boots a disk Install wrote for a stock Windows Server.
func startStockHost(t *testing.T) *Host {
	t.Helper()
	dir := t.TempDir()
	if err := Install(dir, StockInstallation()); err != nil {
		t.Fatal(err)
	}
	return startTestHost(t, func(c *HostConfig) { c.Dir = dir })
}

// TestStockServices: a stock disk boots with the stock services as setup
// leaves them (names, start types, accounts, dependencies), the automatic
// ones running, the manual ones stopped; stopping a Windows service the
// simulator does not model the absence of is refused, and a service host
// does not run from a command line.
func TestStockServices(t *testing.T) {
	h := startStockHost(t)
	for _, tc := range []struct {
		name, display, startup, account, status string
		delayed                                 bool
		deps                                    []string
	}{
		{"VMTools", "VMware Tools", StartupAutomatic, "LocalSystem", StatusRunning, false, nil},
		{"WinRM", "Windows Remote Management (WS-Management)", StartupAutomatic, `NT AUTHORITY\NetworkService`, StatusRunning, true, []string{"RpcSs"}},
		{"wuauserv", "Windows Update", StartupManual, "LocalSystem", StatusStopped, false, []string{"RpcSs"}},
		{"TrustedInstaller", "Windows Modules Installer", StartupManual, "LocalSystem", StatusStopped, false, nil},
		{"EventLog", "Windows Event Log", StartupAutomatic, `NT AUTHORITY\LocalService`, StatusRunning, false, nil},
		{"mpssvc", "Windows Defender Firewall", StartupAutomatic, `NT AUTHORITY\LocalService`, StatusRunning, false, []string{"BFE"}},
		{"Schedule", "Task Scheduler", StartupAutomatic, "LocalSystem", StatusRunning, false, []string{"RpcSs", "SystemEventsBroker"}},
		{"LanmanServer", "Server", StartupAutomatic, "LocalSystem", StatusRunning, false, nil},
		{"W32Time", "Windows Time", StartupManual, `NT AUTHORITY\LocalService`, StatusStopped, false, nil},
		{"Dnscache", "DNS Client", StartupAutomatic, `NT AUTHORITY\NetworkService`, StatusRunning, false, []string{"nsi"}},
	} {
		s, ok := h.svcs.get(tc.name)
		if !ok {
			t.Errorf("no service %s", tc.name)
			continue
		}
		if s.DisplayName != tc.display || s.StartupType != tc.startup || s.ObjectName != tc.account || s.DelayedAutoStart != tc.delayed ||
			strings.Join(s.DependOnService, ",") != strings.Join(tc.deps, ",") {
			t.Errorf("%s = %+v", tc.name, s)
		}
		if s.Status != tc.status {
			t.Errorf("%s is %s after boot, want %s", tc.name, s.Status, tc.status)
		}
	}
	if !h.ToolsRunning() {
		t.Error("VMware Tools is not running after boot")
	}
	out, _, code := run(t, h, encoded("Stop-Service -Name 'EventLog'"))
	if code == 0 {
		t.Errorf("Stop-Service EventLog succeeded: %q", out)
	}
	if s, _ := h.svcs.get("EventLog"); s.Status != StatusRunning {
		t.Errorf("EventLog is %s after a refused stop", s.Status)
	}
	if err := h.stopService("mpssvc"); err == nil || !strings.Contains(err.Error(), "does not model") {
		t.Errorf("stopping mpssvc = %v, want refused as not modelled", err)
	}
	if _, stderr, code := runProgram(t, h, `C:\Windows\System32\svchost.exe`, "-k", "netsvcs"); code == 0 || !strings.Contains(stderr, "service host") {
		t.Errorf("svchost.exe from a command line = %d, %q", code, stderr)
	}
	if _, stderr, code := runProgram(t, h, vmtoolsdPath); code == 0 || !strings.Contains(stderr, "VMTools") {
		t.Errorf("vmtoolsd.exe from a command line = %d, %q", code, stderr)
	}
}

// TestStockServicesWithoutTools: an installation without VMware Tools has
// the Windows services but no VMTools, and takes no guest operations.
func TestStockServicesWithoutTools(t *testing.T) {
	dir := t.TempDir()
	if err := Install(dir, Installation{WinRMHTTP: true}); err != nil {
		t.Fatal(err)
	}
	h := startTestHost(t, func(c *HostConfig) { c.Dir = dir })
	if _, ok := h.svcs.get("WinRM"); !ok {
		t.Error("no WinRM service")
	}
	if _, ok := h.svcs.get(VMToolsService); ok {
		t.Error("a VMTools service without VMware Tools")
	}
	if _, err := h.StartProgram(GuestProgram{User: "Administrator", Path: `C:\Windows\System32\cmd.exe`, Arguments: "/c echo x"}); !errors.Is(err, ErrToolsNotRunning) {
		t.Errorf("StartProgram without VMware Tools = %v, want ErrToolsNotRunning", err)
	}
}

// TestVMToolsRestartForgetsProcesses: stopping VMTools ends guest
// operations (ErrToolsNotRunning) and tells OnToolsChange; a restarted
// vmtoolsd lists a process an earlier one started only while it runs, with
// no exit code, and not at all once it ended.
func TestVMToolsRestartForgetsProcesses(t *testing.T) {
	dir := t.TempDir()
	if err := Install(dir, StockInstallation()); err != nil {
		t.Fatal(err)
	}
	changes := make(chan bool, 8)
	h := startTestHost(t, func(c *HostConfig) {
		c.Dir = dir
		c.OnToolsChange = func(_ *Host, running bool) { changes <- running }
	})
	if got := <-changes; !got {
		t.Fatal("the first tools change at boot is not running")
	}
	_ = h.fs.WriteFile(`C:\go.txt`, nil, false)
	p, err := h.StartProgram(GuestProgram{User: "Administrator", Path: powershellPath,
		Arguments: `-NoProfile -Command "while (-not (Test-Path 'C:\done.txt')) { Start-Sleep -Milliseconds 20 }"`})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.stopService(VMToolsService); err != nil {
		t.Fatal(err)
	}
	if got := <-changes; got {
		t.Fatal("stopping VMTools reported tools running")
	}
	if _, err := h.StartProgram(GuestProgram{User: "Administrator", Path: `C:\Windows\System32\cmd.exe`, Arguments: "/c echo x"}); !errors.Is(err, ErrToolsNotRunning) {
		t.Errorf("StartProgram with VMTools stopped = %v, want ErrToolsNotRunning", err)
	}
	if err := h.startService(VMToolsService); err != nil {
		t.Fatal(err)
	}
	if got := <-changes; !got {
		t.Fatal("starting VMTools did not report tools running")
	}
	list := h.Processes([]int64{p.Pid})
	if len(list) != 1 {
		t.Fatalf("the running process of the earlier vmtoolsd: listed %d times, want once", len(list))
	}
	if _, _, ended := list[0].Exited(); ended {
		t.Error("a process of the earlier vmtoolsd is listed as ended while it runs")
	}
	_ = h.fs.WriteFile(`C:\done.txt`, nil, false)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not end")
	}
	if list := h.Processes([]int64{p.Pid}); len(list) != 0 {
		t.Errorf("an ended process of the earlier vmtoolsd is still listed: %+v", list[0])
	}
}
