package winsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exe is the content of a simulated executable.
func exe(name, version string) []byte {
	return []byte(simulatedExecutableMagic + "\r\n" + name + " " + version + "\r\n")
}

// scmHost is a host with a short start timeout and test programs:
// "svc" reports Running and runs until stopped (recording its environment),
// "console" never talks to the SCM, "crash" exits 100 ms after Running.
type scmHost struct {
	*Host
	mu     sync.Mutex
	envs   []map[string]string
	starts atomic.Int32
	order  []string
}

func startSCMHost(t *testing.T, edit func(*HostConfig)) *scmHost {
	t.Helper()
	sh := &scmHost{}
	sh.Host = startTestHost(t, func(c *HostConfig) {
		c.ServiceStartTimeout = 300 * time.Millisecond
		c.Programs = map[string]Program{
			"svc": func(ctx context.Context, p *Process) int {
				sh.starts.Add(1)
				sh.mu.Lock()
				sh.envs = append(sh.envs, p.Env)
				sh.order = append(sh.order, p.Service)
				sh.mu.Unlock()
				fmt.Fprintf(p.Stdout, "out of %s\r\n", p.Service)
				p.ServiceRunning()
				<-ctx.Done()
				return 0
			},
			"console": func(ctx context.Context, p *Process) int {
				fmt.Fprintf(p.Stdout, "working\r\n")
				<-ctx.Done()
				return 1
			},
			"crash": func(ctx context.Context, p *Process) int {
				sh.starts.Add(1)
				p.ServiceRunning()
				select {
				case <-time.After(100 * time.Millisecond):
					return 1
				case <-ctx.Done():
					return 0
				}
			},
			"app": func(ctx context.Context, p *Process) int {
				sh.starts.Add(1)
				fmt.Fprintf(p.Stdout, "app %s %q in %s\r\n", p.Env["APPVAR"], p.Args, p.Dir)
				fmt.Fprintf(p.Stderr, "app error line\r\n")
				select {
				case <-time.After(150 * time.Millisecond):
					return 0
				case <-ctx.Done():
					return 0
				}
			},
		}
		if edit != nil {
			edit(c)
		}
	})
	for _, n := range []string{"svc", "console", "crash", "app"} {
		if err := sh.WriteFile(`C:\bin\`+n+`.exe`, exe(n, "v1.0.0")); err != nil {
			t.Fatal(err)
		}
	}
	return sh
}

func (sh *scmHost) create(t *testing.T, s Service) {
	t.Helper()
	if err := sh.svcs.create(s); err != nil {
		t.Fatal(err)
	}
}

// runProgram runs a native program as a script would.
func runProgram(t *testing.T, h *Host, path string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = h.Run(context.Background(), &Process{Path: path, Args: args, Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), code
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var se *ServiceError
	if !errors.As(err, &se) || se.Code() != code {
		t.Fatalf("error %v (%T), want Win32 error %d", err, err, code)
	}
}

func TestServiceStartFailures(t *testing.T) {
	h := startSCMHost(t, nil)
	if err := h.WriteFile(`C:\bin\notes.exe`, []byte("just text")); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(`C:\bin\unknown.exe`, exe("mystery", "v1")); err != nil {
		t.Fatal(err)
	}
	h.create(t, Service{Name: "missing", BinaryPathName: `C:\bin\nope.exe`})
	h.create(t, Service{Name: "text", BinaryPathName: `C:\bin\notes.exe`})
	h.create(t, Service{Name: "console", BinaryPathName: `C:\bin\console.exe --foreground`})
	h.create(t, Service{Name: "unknown", BinaryPathName: `C:\bin\unknown.exe`})
	h.create(t, Service{Name: "off", BinaryPathName: `C:\bin\svc.exe`, StartupType: StartupDisabled})
	wantCode(t, h.startService("missing"), 2)
	wantCode(t, h.startService("text"), 193)
	begin := time.Now()
	err := h.startService("console")
	wantCode(t, err, 1053)
	if d := time.Since(begin); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("1053 after %s, want the start timeout", d)
	}
	if !strings.Contains(err.Error(), "Service 'console (console)' cannot be started") {
		t.Errorf("message %q", err)
	}
	if s, _ := h.Service("console"); s.Status != StatusStopped {
		t.Errorf("after 1053 the service is %s", s.Status)
	}
	var se *ServiceError
	if err := h.startService("unknown"); !errors.As(err, &se) || se.Refused == "" || !strings.Contains(err.Error(), "does not model") {
		t.Errorf("unmodelled program: %v", err)
	}
	wantCode(t, h.startService("off"), 1058)
	wantCode(t, h.startService("nosuch"), 1060)
}

func TestServiceDependenciesAndStop(t *testing.T) {
	h := startSCMHost(t, nil)
	h.create(t, Service{Name: "containerd", BinaryPathName: `C:\bin\svc.exe`, StartupType: StartupManual})
	h.create(t, Service{Name: "kubelet", BinaryPathName: `"C:\bin\svc.exe" --windows-service`, DependOnService: []string{"containerd"}})
	h.create(t, Service{Name: "broken", BinaryPathName: `C:\bin\nope.exe`})
	h.create(t, Service{Name: "needsbroken", BinaryPathName: `C:\bin\svc.exe`, DependOnService: []string{"broken"}})
	if err := h.startService("kubelet"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(h.order) != "[containerd kubelet]" {
		t.Errorf("start order %v", h.order)
	}
	wantCode(t, h.startService("needsbroken"), 1068)
	err := h.stopService("containerd")
	wantCode(t, err, 1051)
	if !strings.Contains(err.Error(), "because it has dependent services. It can only be stopped if the Force flag is set.") {
		t.Errorf("message %q", err)
	}
	if err := h.stopServiceWithDependents("containerd"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"kubelet", "containerd"} {
		if s, _ := h.Service(n); s.Status != StatusStopped {
			t.Errorf("%s is %s after stopping with dependents", n, s.Status)
		}
	}
	// At boot the Automatic ones start, dependencies first.
	h.order = nil
	h.Reboot()
	if s, _ := h.Service("kubelet"); s.Status != StatusRunning {
		t.Fatalf("kubelet after reboot: %s", s.Status)
	}
	if fmt.Sprint(h.order) != "[containerd kubelet]" {
		t.Errorf("boot order %v", h.order)
	}
}

func TestServiceRecoveryActions(t *testing.T) {
	h := startSCMHost(t, nil)
	h.create(t, Service{Name: "crashy", BinaryPathName: `C:\bin\crash.exe`, StartupType: StartupManual})
	if err := h.startService("crashy"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if s, _ := h.Service("crashy"); s.Status != StatusStopped || h.starts.Load() != 1 {
		t.Fatalf("without recovery actions: %s after %d starts", s.Status, h.starts.Load())
	}
	// The failure count outlives a start (until reset= seconds pass without
	// failure): a fresh service shows the actions from the first.
	h.create(t, Service{Name: "crashy2", BinaryPathName: `C:\bin\crash.exe`, StartupType: StartupManual})
	out, _, code := runProgram(t, h.Host, "sc.exe", "failure", "crashy2", "reset=", "60", "actions=", "restart/50/restart/50/none/0")
	if code != 0 || !strings.Contains(out, "[SC] ChangeServiceConfig2 SUCCESS") {
		t.Fatalf("sc failure: %q %d", out, code)
	}
	h.starts.Store(0)
	if err := h.startService("crashy2"); err != nil {
		t.Fatal(err)
	}
	// Two restarts, then the third action (none) leaves it stopped.
	time.Sleep(900 * time.Millisecond)
	if s, _ := h.Service("crashy2"); s.Status != StatusStopped || h.starts.Load() != 3 {
		t.Fatalf("with restart/restart/none: %s after %d starts (failures %d)", s.Status, h.starts.Load(), h.ServiceFailures("crashy2"))
	}
}

func TestServiceExitFault(t *testing.T) {
	h := startSCMHost(t, func(c *HostConfig) {
		c.Faults.ServiceExits = []ServiceExitFault{{Service: "kubelet", After: 100 * time.Millisecond, Times: 1}}
	})
	h.create(t, Service{Name: "kubelet", BinaryPathName: `C:\bin\svc.exe`})
	if err := h.startService("kubelet"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if s, _ := h.Service("kubelet"); s.Status != StatusStopped || h.ServiceFailures("kubelet") != 1 {
		t.Fatalf("after the fault: %s, %d failures", s.Status, h.ServiceFailures("kubelet"))
	}
	if err := h.startService("kubelet"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if s, _ := h.Service("kubelet"); s.Status != StatusRunning {
		t.Fatalf("Times: 1 fired again: %s", s.Status)
	}
}

func TestServiceEnvironmentSnapshot(t *testing.T) {
	h := startSCMHost(t, nil)
	h.create(t, Service{Name: "agent", BinaryPathName: `C:\bin\svc.exe`, Environment: []string{"OWN=1"}})
	if err := h.SetMachineEnv("CONTAINERD_ADDRESS", `\\.\pipe\containerd-containerd`); err != nil {
		t.Fatal(err)
	}
	if err := h.startService("agent"); err != nil {
		t.Fatal(err)
	}
	env := h.envs[len(h.envs)-1]
	if _, ok := env["CONTAINERD_ADDRESS"]; ok {
		t.Error("a machine variable set after boot reached a service before a reboot")
	}
	if env["OWN"] != "1" || env["SYSTEMROOT"] != `C:\Windows` || !strings.Contains(env["PATH"], `C:\Windows\system32`) {
		t.Errorf("service environment %v", env)
	}
	if h.MachineEnv()["CONTAINERD_ADDRESS"] == "" {
		t.Error("MachineEnv does not show the variable")
	}
	h.Reboot()
	env = h.envs[len(h.envs)-1]
	if env["CONTAINERD_ADDRESS"] != `\\.\pipe\containerd-containerd` {
		t.Errorf("after a reboot the service sees %q", env["CONTAINERD_ADDRESS"])
	}
}

func TestScExe(t *testing.T) {
	h := startSCMHost(t, nil)
	out, _, code := runProgram(t, h.Host, `C:\Windows\System32\sc.exe`, "query", "nope")
	if code != 1060 || !strings.Contains(out, "[SC] EnumQueryServicesStatus:OpenService FAILED 1060:\r\n\r\nThe specified service does not exist as an installed service.") {
		t.Fatalf("query missing: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "delete", "nope"); code != 1060 || !strings.Contains(out, "[SC] OpenService FAILED 1060:") {
		t.Fatalf("delete missing: %q %d", out, code)
	}
	out, _, code = runProgram(t, h.Host, "sc.exe", "create", "base", "binPath=", `C:\bin\svc.exe`, "start=", "auto")
	if code != 0 || out != "[SC] CreateService SUCCESS\r\n" {
		t.Fatalf("create: %q %d", out, code)
	}
	out, _, code = runProgram(t, h.Host, "sc.exe", "create", "top", "binPath=", `"C:\bin\svc.exe" --x`, "depend=", "base", "DisplayName=", "Top service")
	if code != 0 {
		t.Fatalf("create top: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "create", "base", "binPath=", `C:\bin\svc.exe`); code != 1073 || !strings.Contains(out, "[SC] CreateService FAILED 1073:") {
		t.Fatalf("create existing: %q %d", out, code)
	}
	if _, _, code = runProgram(t, h.Host, "sc.exe", "create", "x", "binPath=C:\\bin\\svc.exe"); code != exitInvalidCommandLine {
		t.Fatalf("binPath= without its space: exit %d", code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "stop", "top"); code != 1062 || !strings.Contains(out, "[SC] ControlService FAILED 1062:") {
		t.Fatalf("stop stopped: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "start", "top"); code != 0 || !strings.Contains(out, "STATE              : 4  RUNNING") {
		t.Fatalf("start: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "start", "top"); code != 1056 {
		t.Fatalf("start running: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "stop", "base"); code != 1051 {
		t.Fatalf("stop with a running dependent: %q %d", out, code)
	}
	out, _, code = runProgram(t, h.Host, "sc.exe", "qc", "top")
	if code != 0 || !strings.Contains(out, "DEPENDENCIES       : base") || !strings.Contains(out, "START_TYPE         : 3   DEMAND_START") || !strings.Contains(out, "DISPLAY_NAME       : Top service") {
		t.Fatalf("qc: %q %d", out, code)
	}
	// Deleting a running service marks it; it goes when it stops.
	if out, _, code = runProgram(t, h.Host, "sc.exe", "delete", "top"); code != 0 {
		t.Fatalf("delete running: %q %d", out, code)
	}
	if out, _, code = runProgram(t, h.Host, "sc.exe", "config", "top", "start=", "auto"); code != 1072 {
		t.Fatalf("config marked for deletion: %q %d", out, code)
	}
	if _, _, code = runProgram(t, h.Host, "sc.exe", "stop", "top"); code != 0 {
		t.Fatalf("stop: %d", code)
	}
	if _, ok := h.Service("top"); ok {
		t.Error("the deleted service outlived its stop")
	}
	// The registry holds what sc.exe wrote.
	if v, _ := h.RegistryValue(ServicesKey+`\base`, "Start"); v.DWord != 2 {
		t.Errorf("Start = %+v", v)
	}
}
