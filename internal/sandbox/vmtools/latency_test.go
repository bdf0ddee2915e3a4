package vmtools_test

import (
	"context"
	"slices"
	"testing"
	"time"

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
