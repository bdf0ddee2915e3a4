package winsim

import (
	"strings"
	"testing"
	"time"
)

func TestNSSM(t *testing.T) {
	h := startSCMHost(t, nil)
	if err := h.WriteFile(`C:\k\nssm.exe`, exe("nssm", "2.24")); err != nil {
		t.Fatal(err)
	}
	if err := h.Host.fs.MkdirAll(`C:\var\log\app`); err != nil {
		t.Fatal(err)
	}
	nssm := func(args ...string) (string, string, int) { return runProgram(t, h.Host, `C:\k\nssm.exe`, args...) }
	out, _, code := nssm("install", "app", `C:\bin\app.exe`, "--flag", `"two words"`)
	if code != 0 || out != "Service \"app\" installed successfully!\r\n" {
		t.Fatalf("install: %q %d", out, code)
	}
	if s, _ := h.Service("app"); s.BinaryPathName != `C:\k\nssm.exe` || s.StartupType != StartupAutomatic {
		t.Fatalf("service %+v", s)
	}
	if _, errOut, code := nssm("set", "app", "AppBogus", "1"); code != 1 || !strings.Contains(errOut, `Invalid parameter "AppBogus".  Valid parameters are:`) {
		t.Fatalf("unknown parameter: %q %d", errOut, code)
	}
	if _, errOut, code := nssm("set", "nope", "AppStdout", "x"); code != 3 || !strings.Contains(errOut, "Can't open service!") {
		t.Fatalf("missing service: %q %d", errOut, code)
	}
	// Without AppStdout the output goes nowhere.
	if err := h.startService("app"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := h.stopService("app"); err != nil {
		t.Fatal(err)
	}
	if files, _ := h.Host.fs.List(`C:\var\log\app`); len(files) != 0 {
		t.Fatalf("a log appeared without AppStdout: %v", files)
	}
	for _, kv := range [][]string{
		{"AppStdout", `C:\var\log\app\app.log`}, {"AppStderr", `C:\var\log\app\app.log`},
		{"AppRotateFiles", "1"}, {"AppRotateBytes", "10"}, {"AppThrottle", "50"},
		{"AppEnvironmentExtra", "APPVAR=extra"}, {"AppDirectory", `C:\var`},
	} {
		if out, errOut, code := nssm("set", "app", kv[0], kv[1]); code != 0 {
			t.Fatalf("set %s: %q %q %d", kv[0], out, errOut, code)
		}
	}
	if out, _, _ := nssm("get", "app", "AppRotateBytes"); out != "10\r\n" {
		t.Fatalf("get: %q", out)
	}
	if err := h.WriteFile(`C:\var\log\app\app.log`, []byte("an old log longer than ten bytes\r\n")); err != nil {
		t.Fatal(err)
	}
	h.starts.Store(0)
	if out, _, code := nssm("start", "app"); code != 0 || !strings.Contains(out, "app: START: The operation completed successfully.") {
		t.Fatalf("nssm start: %q %d", out, code)
	}
	// The app exits after 150 ms; nssm restarts it (AppExit Default Restart).
	deadline := time.Now().Add(3 * time.Second)
	for h.starts.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if h.starts.Load() < 2 {
		t.Fatalf("nssm did not restart the app (%d starts)", h.starts.Load())
	}
	if s, _ := h.Service("app"); s.Status != StatusRunning {
		t.Fatalf("service %s while nssm restarts its app", s.Status)
	}
	if err := h.stopService("app"); err != nil {
		t.Fatal(err)
	}
	log, _ := h.ReadFile(`C:\var\log\app\app.log`)
	if !strings.Contains(string(log), `app extra ["--flag" "two words"] in C:\var`) || !strings.Contains(string(log), "app error line") {
		t.Fatalf("app.log: %q", log)
	}
	files, _ := h.Host.fs.List(`C:\var\log\app`)
	rotated := 0
	for _, f := range files {
		if strings.HasPrefix(f.Name(), "app-") && strings.HasSuffix(f.Name(), ".log") && len(f.Name()) == len("app-20260101T000000.000.log") {
			rotated++
		}
	}
	if rotated == 0 {
		t.Fatalf("no rotated log among %d files", len(files))
	}
	// A missing Application fails the start: nssm stops the service.
	nssm("set", "app", "Application", `C:\bin\gone.exe`)
	wantCode(t, h.startService("app"), 1067)
	// A missing log directory is not created (nssm 2.24 runs the app without output).
	nssm("set", "app", "Application", `C:\bin\app.exe`)
	nssm("set", "app", "AppStdout", `C:\nodir\app.log`)
	nssm("set", "app", "AppStderr", `C:\nodir\app.log`)
	if err := h.startService("app"); err != nil {
		t.Fatal(err)
	}
	if err := h.stopService("app"); err != nil {
		t.Fatal(err)
	}
	if h.FileExists(`C:\nodir`) {
		t.Error("nssm created the log directory")
	}
	if _, _, code := nssm("remove", "app", "confirm"); code != 0 {
		t.Fatalf("remove: %d", code)
	}
	if _, ok := h.Service("app"); ok {
		t.Error("removed service still there")
	}
}
