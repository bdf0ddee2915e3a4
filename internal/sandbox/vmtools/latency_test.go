package vmtools_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/guest"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
)

// TestCustomizationTakesTheModelsTime: with the latency model on, a
// clone's customization takes its phases' played time (boot, generalize,
// sysprep's reboot, specialize, OOBE: 8 real minutes at the median), in
// their order, and no less.
func TestCustomizationTakesTheModelsTime(t *testing.T) {
	m := latency.New(400, latency.Median) // 8 minutes in 1.2 s
	w := startWith(t, func(o *vmtools.Options) { o.Latency = m })
	ctx := t.Context()
	p := watchPhases(t, w, "WIN-SLOW")
	vm := w.clone(t, "win-slow", "WIN-SLOW", "127.0.30.3", "Cust-Passw0rd!")
	begin := time.Now()
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.c.WaitForCustomization(wctx, vm); err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	if want := m.Of(latency.FirstBootCustomized); took < want {
		t.Errorf("the customization took %s, want at least the model's %s (8 real minutes / 400)", took, want)
	}
	want := []string{"started+tools-up", "generalize", "reboot+tools-down", "specialize", "oobeSystem", "tools-up", "succeeded"}
	if got := p.list(); !slices.Equal(got, want) {
		t.Errorf("customization phases %v, want %v", got, want)
	}
}

// TestCloseCutsAModelledCustomizationShort: a customization playing real
// time (15 minutes at the tail) ends when the sandbox closes; a power-off
// ends it too: neither waits for it.
func TestCloseCutsAModelledCustomizationShort(t *testing.T) {
	w := startWith(t, func(o *vmtools.Options) { o.Latency = latency.New(1, latency.Tail) })
	ctx := t.Context()
	p := watchPhases(t, w, "WIN-REAL")
	vm := w.clone(t, "win-real", "WIN-REAL", "127.0.30.4", "Cust-Passw0rd!")
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	// The first phase (the boot to VMware Tools) plays 150 real seconds.
	if err := w.c.PowerOff(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if got := p.list(); len(got) != 0 {
		t.Errorf("phases %v before the boot's 150 s passed", got)
	}
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	begin := time.Now()
	go func() { done <- w.hosts.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for a customization playing real time")
	}
	t.Logf("Close returned in %s", time.Since(begin))
}

// TestVMToolsPolledTooOftenAnswers3016: with the latency model on, VMware
// Tools refuses a ListProcessesInGuest that comes sooner than it answers
// another, as vCenter answers govc polling every 250 ms (govmomi#759): a
// SystemError whose reason is vix error 3016. The vmtools transport backs
// off on it and its Run succeeds.
func TestVMToolsPolledTooOftenAnswers3016(t *testing.T) {
	m := latency.New(1000, latency.Median)
	// A VMware Tools slower than the model's median: it needs 1.5 s
	// between polls, more than the transport's 600 ms interval.
	m.Durations[latency.ProcessPollInterval] = latency.Duration{P50: 1500 * time.Millisecond, P99: 1500 * time.Millisecond, Source: "this test"}
	w := startWith(t, func(o *vmtools.Options) { o.Latency = m })
	vm := w.bootNode(t, "win-poll")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := w.c.WaitForCustomization(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := w.c.WaitForGuestOperations(ctx, vm); err != nil {
		t.Fatal(err)
	}

	// Two polls back to back: the second is refused.
	ops := guest.NewOperationsManager(w.c.Client.Client, vm.Reference())
	pm, err := ops.ProcessManager(ctx)
	if err != nil {
		t.Fatal(err)
	}
	auth := &types.NamePasswordAuthentication{Username: "Administrator", Password: nodePassword}
	if _, err := pm.ListProcesses(ctx, auth, nil); err != nil {
		t.Fatalf("first poll: %v", err)
	}
	_, err = pm.ListProcesses(ctx, auth, nil)
	var se *types.SystemError
	if _, ok := fault.As(err, &se); !ok || se.Reason != "vix error codes = (3016, 0).\n" ||
		!strings.Contains(err.Error(), "A general system error occurred: vix error codes = (3016, 0).") {
		t.Fatalf("a poll 0 s after the last = %v; want SystemError, vix error codes = (3016, 0)", err)
	}
	time.Sleep(1600 * time.Millisecond) // VMware Tools' interval, real time: the model's rule under test
	if _, err := pm.ListProcesses(ctx, auth, nil); err != nil {
		t.Fatalf("a poll after VMware Tools' interval: %v", err)
	}

	// The transport polls a 4-second script every 600 ms: refused, it backs
	// off and the Run ends with the script's output.
	before := w.hosts.Refused3016()
	tr, err := remote.Connect(ctx, w.vmtoolsConfig(vm, nodePassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if got := run(t, tr, "Start-Sleep -Seconds 4\nWrite-Output 'slept'"); got != "slept" {
		t.Errorf("Run printed %q, want slept", got)
	}
	if w.hosts.Refused3016() == before {
		t.Error("no poll of the transport's was refused: the test proves no back-off")
	}
}
