package latency

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestEveryDurationHasASourceAndOrderedQuantiles(t *testing.T) {
	for op, d := range RealDurations {
		if strings.TrimSpace(d.Source) == "" {
			t.Errorf("%s: no source", op)
		}
		if d.P50 <= 0 || d.P99 < d.P50 {
			t.Errorf("%s: P50 %s, P99 %s: want 0 < P50 <= P99", op, d.P50, d.P99)
		}
	}
}

func TestModelScalesAndIsOffByDefault(t *testing.T) {
	var off *Model
	if off.Of(CloneFull) != 0 || off.On() {
		t.Fatal("a nil model must take no time")
	}
	if New(0, Median) != nil {
		t.Fatal("factor 0 must be off")
	}
	m := New(100, Median)
	if got, want := m.Of(CloneFull), RealDurations[CloneFull].P50/100; got != want {
		t.Errorf("Of(CloneFull) at factor 100 = %s, want %s", got, want)
	}
	tail := New(100, Tail)
	if got, want := tail.Of(CloneFull), RealDurations[CloneFull].P99/100; got != want {
		t.Errorf("tail Of(CloneFull) = %s, want %s", got, want)
	}
	// 100 MB over 1 Gbit/s is 0.8 s at real scale.
	if got, want := New(1, Median).Transfer(100e6, 1e9), 800*time.Millisecond; got != want {
		t.Errorf("Transfer = %s, want %s", got, want)
	}
}

func TestUnknownOperationPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("an operation without a sourced duration must panic")
		}
	}()
	New(1, Median).Real("nobody.sourced.this")
}

func TestSlotsQueueBeyondAHostsUnits(t *testing.T) {
	ctx := context.Background()
	s := NewSlots(ProvisioningUnitsPerHost)
	var releases []func()
	for i := range ProvisioningUnitsPerHost / UnitsPerFullClone {
		r, queued, err := s.Acquire(ctx, "host-1", UnitsPerFullClone)
		if err != nil || queued {
			t.Fatalf("clone %d: queued=%v err=%v, want a free slot", i, queued, err)
		}
		releases = append(releases, r)
	}
	// Another host has its own units.
	if r, queued, err := s.Acquire(ctx, "host-2", UnitsPerFullClone); err != nil || queued {
		t.Fatalf("host-2: queued=%v err=%v", queued, err)
	} else {
		r()
	}
	done := make(chan bool)
	go func() {
		r, queued, err := s.Acquire(ctx, "host-1", UnitsPerFullClone)
		if err == nil {
			r()
		}
		done <- queued && err == nil
	}()
	select {
	case <-done:
		t.Fatal("a fifth full clone on a host must wait for a slot")
	case <-time.After(50 * time.Millisecond):
	}
	releases[0]()
	if !<-done {
		t.Fatal("the fifth clone must report it was queued, and succeed once a slot frees")
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.Acquire(ctx2, "host-1", ProvisioningUnitsPerHost); err == nil {
		t.Fatal("a queued acquire must end with its context")
	}
}
