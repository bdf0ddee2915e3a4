package vmtools_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/event"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
)

// phases records one guest's customization phases and VMware Tools' starts
// and stops, in order.
type phases struct {
	mu   sync.Mutex
	seen []string
	ch   chan string
}

func watchPhases(t *testing.T, w *world, computer string) *phases {
	p := &phases{ch: make(chan string, 64)}
	t.Cleanup(w.hosts.OnEvent(func(ev vmtools.Event) {
		if !strings.EqualFold(ev.ComputerName, computer) || (ev.Customization == "" && !ev.Up && !ev.Down) || ev.Script != nil || ev.Program != nil {
			return
		}
		s := ev.Customization
		switch {
		case ev.Up:
			s += "+tools-up"
		case ev.Down:
			s += "+tools-down"
		}
		p.mu.Lock()
		p.seen = append(p.seen, strings.TrimPrefix(s, "+"))
		p.mu.Unlock()
		p.ch <- ev.Customization
	}))
	return p
}

func (p *phases) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// customizationEvents returns the names of the VM's customization events, oldest first.
func customizationEvents(t *testing.T, w *world, vm mo.Reference) []types.BaseEvent {
	t.Helper()
	evs, err := event.NewManager(w.c.Client.Client).QueryEvents(t.Context(), types.EventFilterSpec{
		Entity: &types.EventFilterSpecByEntity{Entity: vm.Reference(), Recursion: types.EventFilterSpecRecursionOptionSelf},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []types.BaseEvent
	for i := len(evs) - 1; i >= 0; i-- { // the manager returns the newest first
		switch evs[i].(type) {
		case *types.CustomizationStartedEvent, *types.CustomizationSucceeded, types.BaseCustomizationFailed:
			out = append(out, evs[i])
		}
	}
	return out
}

func eventNames(evs []types.BaseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", e), "*types."))
	}
	return out
}

func customizationStatus(t *testing.T, w *world, vm mo.Reference) (string, string) {
	t.Helper()
	var m mo.VirtualMachine
	if err := property.DefaultCollector(w.c.Client.Client).RetrieveOne(t.Context(), vm.Reference(), []string{"guest.customizationInfo", "config.tools"}, &m); err != nil {
		t.Fatal(err)
	}
	pending := ""
	if m.Config != nil && m.Config.Tools != nil {
		pending = m.Config.Tools.PendingCustomization
	}
	if m.Guest == nil || m.Guest.CustomizationInfo == nil {
		return "", pending
	}
	return m.Guest.CustomizationInfo.CustomizationStatus, pending
}

// TestCustomizationRunsSpecializeAndOOBE: a clone's first power-on runs
// vCenter's customization as VMware Tools does: at power-on Tools starts, RUNNING and CustomizationStartedEvent; sysprep's
// reboot; specialize and OOBE; then, with Tools running again,
// CustomizationSucceeded. deployPkg's logs stay in vmware-imc without the
// password; vCenter's sysprep.xml and Setup's cached copy hold it.
func TestCustomizationRunsSpecializeAndOOBE(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	p := watchPhases(t, w, "WIN-CUST")
	vm := w.clone(t, "win-cust", "WIN-CUST", "127.0.30.1", "Cust-Passw0rd!")
	if evs := customizationEvents(t, w, vm); len(evs) != 0 {
		t.Errorf("customization events before power-on: %v", eventNames(evs))
	}

	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	// The PowerOn task returns before the guest has customized anything.
	if evs := eventNames(customizationEvents(t, w, vm)); slices.Contains(evs, "CustomizationSucceeded") {
		t.Errorf("CustomizationSucceeded already when PowerOn returned: %v", evs)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := w.c.WaitForCustomization(wctx, vm); err != nil {
		t.Fatal(err)
	}
	want := []string{"started+tools-up", "generalize", "reboot+tools-down", "specialize", "oobeSystem", "tools-up", "succeeded"}
	if got := p.list(); !slices.Equal(got, want) {
		t.Errorf("customization phases %v, want %v", got, want)
	}
	evs := customizationEvents(t, w, vm)
	if got := eventNames(evs); !slices.Equal(got, []string{"CustomizationStartedEvent", "CustomizationSucceeded"}) {
		t.Errorf("customization events %v, want CustomizationStartedEvent then CustomizationSucceeded", got)
	}
	for _, e := range evs {
		if ce, ok := e.(interface {
			GetCustomizationEvent() *types.CustomizationEvent
		}); ok && ce.GetCustomizationEvent().LogLocation != vmtools.CustomizationLog {
			t.Errorf("%T logLocation %q, want %s", e, ce.GetCustomizationEvent().LogLocation, vmtools.CustomizationLog)
		}
	}
	if status, pending := customizationStatus(t, w, vm); status != string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_SUCCEEDED) || pending != "" {
		t.Errorf("after the customization: status %q, pendingCustomization %q", status, pending)
	}

	tr := w.connect(t, "127.0.30.1", "Cust-Passw0rd!")
	if got := run(t, tr, `$env:COMPUTERNAME`); got != "WIN-CUST" {
		t.Errorf("computer name after specialize %q", got)
	}
	log := run(t, tr, `Get-Content -Raw -Path '`+vmtools.CustomizationLog+`'`)
	if !strings.Contains(log, "Customization completed") || !strings.Contains(log, "'*****'") || strings.Contains(log, "Cust-Passw0rd!") {
		t.Errorf("guestcust.log = %q: want the run, the password masked", log)
	}
	if got := run(t, tr, `Test-Path -Path '`+vmtools.DeployPkgLog+`'`); got != "True" {
		t.Errorf("toolsDeployPkg.log present: %s", got)
	}
	if got := run(t, tr, `Get-Content -Raw -Path '`+vmtools.SysprepAnswerFile+`'`); !strings.Contains(got, "<Value>Cust-Passw0rd!</Value>") {
		t.Errorf("vCenter's sysprep.xml = %q, want the password as the spec gave it", got)
	}
}

// TestCustomizationWithoutPasswordWaitsAtOOBE: without an Administrator
// password Windows Server's OOBE asks for one and waits; the customization
// never ends: RUNNING, no end event, no host serving, and the provider's wait
// times out naming the status.
func TestCustomizationWithoutPasswordWaitsAtOOBE(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	p := watchPhases(t, w, "WIN-NOPW")
	vm := w.clone(t, "win-nopw", "WIN-NOPW", "127.0.30.2", "")
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for phase := ""; phase != vmtools.PhaseWaitsPassword; {
		select {
		case phase = <-p.ch:
			if phase == vmtools.PhaseSucceeded || phase == vmtools.PhaseOOBE {
				t.Fatalf("the customization without a password reached %s: %v", phase, p.list())
			}
		case <-deadline:
			t.Fatalf("no wait at OOBE; phases %v", p.list())
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err := w.c.WaitForCustomization(wctx, vm)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "TOOLSDEPLOYPKG_RUNNING") {
		t.Errorf("WaitForCustomization = %v, want a timeout naming TOOLSDEPLOYPKG_RUNNING", err)
	}
	if got := eventNames(customizationEvents(t, w, vm)); !slices.Equal(got, []string{"CustomizationStartedEvent"}) {
		t.Errorf("customization events %v, want only CustomizationStartedEvent", got)
	}
	if status, _ := customizationStatus(t, w, vm); status != string(types.GuestInfoCustomizationStatusTOOLSDEPLOYPKG_RUNNING) {
		t.Errorf("status %q, want RUNNING", status)
	}
	if w.hosts.ByName("WIN-NOPW") != nil {
		t.Error("a host serves while its OOBE waits for a password")
	}
}
