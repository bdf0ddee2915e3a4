package winsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kube-log-runner as image-builder's kubelet service: the child reports to
// the SCM, its output lands in -log-file (rotated at -log-file-size), and a
// missing log directory fails the start as kube-log-runner's log.Fatal does.
func TestKubeLogRunnerService(t *testing.T) {
	h := startSCMHost(t, nil)
	if err := h.WriteFile(`C:\k\kube-log-runner.exe`, exe("kube-log-runner", "v1.36.3")); err != nil {
		t.Fatal(err)
	}
	if err := h.fs.MkdirAll(`C:\var\log\svc`); err != nil {
		t.Fatal(err)
	}
	h.create(t, Service{Name: "wrapped", BinaryPathName: `"C:\k\kube-log-runner.exe" --log-file=C:\var\log\svc\svc.log --log-file-size=10 C:\bin\svc.exe --flag`})
	if err := h.startService("wrapped"); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := h.stopService("wrapped"); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// "out of wrapped\r\n" is 16 bytes: over 10, so the file was rotated.
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(h.DiskPath(`C:\var\log\svc\svc.log`)), "svc-*.log"))
	if len(matches) != 1 {
		t.Fatalf("rotated files %v, want one", matches)
	}
	b, _ := os.ReadFile(matches[0])
	if !strings.Contains(string(b), "out of wrapped") {
		t.Errorf("rotated log %q lacks the child's output", b)
	}

	// A child that never reports Running fails the service with 1053, as
	// the wrapper itself is no service program.
	h.create(t, Service{Name: "wrapped-console", BinaryPathName: `C:\k\kube-log-runner.exe --log-file=C:\var\log\svc\c.log C:\bin\console.exe`})
	wantCode(t, h.startService("wrapped-console"), 1053)

	// No log directory: log.Fatal before the child starts, so the service
	// process exits before Running (1067).
	h.create(t, Service{Name: "nodir", BinaryPathName: `C:\k\kube-log-runner.exe --log-file=C:\nowhere\x.log C:\bin\svc.exe`})
	wantCode(t, h.startService("nodir"), 1067)

	_, stderr, code := runProgram(t, h.Host, `C:\k\kube-log-runner.exe`)
	if code != 1 || !strings.Contains(stderr, "not enough arguments to run") {
		t.Errorf("no arguments: exit %d, stderr %q", code, stderr)
	}
}
