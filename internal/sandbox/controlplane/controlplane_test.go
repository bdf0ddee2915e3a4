package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/flowcontrol"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// fakeBinaries writes shell scripts standing in for the components.
func fakeBinaries(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range Binaries {
		body, ok := scripts[name]
		if !ok {
			body = "exec sleep 60"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testOptions(t *testing.T, binDir string) Options {
	t.Helper()
	dir := t.TempDir()
	b, err := pki.Generate(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	return Options{Dir: dir, PKI: b, BinDir: binDir, AllocateNodeCIDRs: true, Logf: t.Logf}
}

func TestStartReportsAnEarlyExitWithItsLog(t *testing.T) {
	bin := fakeBinaries(t, map[string]string{
		APIServer: `echo "starting"; echo "E0101 invalid flag --bogus" >&2; exit 3`,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	begin := time.Now()
	_, err := Start(ctx, testOptions(t, bin))
	if err == nil {
		t.Fatal("Start succeeded with a failing kube-apiserver")
	}
	msg := err.Error()
	for _, want := range []string{"kube-apiserver", "exit status 3", "invalid flag --bogus", "kube-apiserver.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if elapsed := time.Since(begin); elapsed > 10*time.Second {
		t.Errorf("Start took %s to notice the exit", elapsed)
	}
}

func TestStartRespectsContext(t *testing.T) {
	bin := fakeBinaries(t, nil) // every component "runs" but never serves
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err := Start(ctx, testOptions(t, bin))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "kube-apiserver not ready") {
		t.Fatalf("Start = %v, want a kube-apiserver readiness deadline error", err)
	}
}

func TestControllerManagerArgs(t *testing.T) {
	l := &layout{pki: &pki.Bundle{}, allocateNodeCIDRs: false}
	args := l.controllerManagerArgs()
	if !slices.Contains(args, "--allocate-node-cidrs=false") {
		t.Errorf("allocation off: args %v", args)
	}
	l.allocateNodeCIDRs = true
	args = l.controllerManagerArgs()
	for _, want := range []string{"--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16", "--node-cidr-mask-size=24",
		"--controllers=*,bootstrapsigner,tokencleaner", "--use-service-account-credentials=true"} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %s", want)
		}
	}
}

func TestResolveBinariesFromEnv(t *testing.T) {
	bin := fakeBinaries(t, nil)
	t.Setenv(BinEnv, bin)
	got, err := ResolveBinaries(t.Context(), t.Logf)
	if err != nil || got != bin {
		t.Fatalf("ResolveBinaries = %q, %v; want %q", got, err, bin)
	}
	if err := os.Remove(filepath.Join(bin, Scheduler)); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveBinaries(t.Context(), t.Logf); err == nil || !strings.Contains(err.Error(), Scheduler) {
		t.Fatalf("ResolveBinaries with a missing binary = %v", err)
	}
}

// TestControllerManagerExitIsRestarted: once the control plane runs, a
// controller manager that exits (as it does when it loses its leader lease
// during a long API server outage) is started again, as the kubelet
// restarts kubeadm's static pod, instead of failing the sandbox; an exit of
// the API server still fails it, naming it.
func TestControllerManagerExitIsRestarted(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	bin := fakeBinaries(t, map[string]string{
		// Exits on its first run ("leaderelection lost"), runs after that.
		ControllerManager: `echo run >> ` + runs + `; if [ "$(wc -l < ` + runs + `)" -eq 1 ]; then echo 'E1126 "leaderelection lost/stopped"' >&2; exit 1; fi; exec sleep 60`,
		APIServer:         `exec sleep 3`,
	})
	opts := testOptions(t, bin)
	l, err := prepare(opts, bin)
	if err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{
		LogDir: filepath.Join(opts.Dir, "logs"), layout: l, logf: t.Logf,
		exited: make(chan *process, len(Binaries)), failed: make(chan struct{}), stopped: make(chan struct{}),
		backoff: flowcontrol.NewBackOff(restartBackoffInitial, restartBackoffMax),
	}
	cp.running.Store(true)
	go cp.monitor()
	t.Cleanup(func() { _ = cp.Stop() })
	if err := cp.start(l, ControllerManager, l.controllerManagerArgs()); err != nil {
		t.Fatal(err)
	}
	first := cp.PIDs()[ControllerManager]
	if err := cp.start(l, APIServer, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cp.Failed():
	case <-time.After(20 * time.Second):
		t.Fatal("the API server's exit did not fail the control plane")
	}
	if err := cp.Err(); err == nil || !strings.Contains(err.Error(), APIServer) || strings.Contains(err.Error(), ControllerManager) {
		t.Errorf("Err() = %v, want the API server's exit and not the controller manager's", err)
	}
	if got := cp.Restarts(); got != 1 {
		t.Errorf("%d restarts, want 1 (the controller manager's)", got)
	}
	if now := cp.PIDs()[ControllerManager]; now == first {
		t.Errorf("the controller manager's process is still %d, the one that exited", now)
	}
	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "run"); n != 2 {
		t.Errorf("the controller manager ran %d times, want 2", n)
	}
}
