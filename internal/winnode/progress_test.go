package winnode_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// TestCreateReportsLongWaits: a long guest-side wait of a create (here the
// customization and the Ready wait, each held past several report
// intervals) is reported again while it lasts, naming what it waits for,
// so TF_LOG=info shows a line at least every guest.ProgressEvery.
func TestCreateReportsLongWaits(t *testing.T) {
	old := guest.ProgressEvery
	guest.ProgressEvery = 10 * time.Millisecond
	t.Cleanup(func() { guest.ProgressEvery = old })
	w := newWorld(t)
	var mu sync.Mutex
	var lines []string
	w.m.Progress = func(stage string, fields map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := fields["waited"]; ok {
			lines = append(lines, stage)
		}
	}
	hold := func() { time.Sleep(60 * time.Millisecond) }
	w.vs.at["WaitForCustomization"] = hold
	w.k.at["WaitForNodeReady"] = hold
	if _, err := w.m.Create(t.Context(), testSpec(), func(winnode.Identity) {}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(lines, "\n")
	mu.Unlock()
	for _, want := range []string{"still waiting: customize", "still waiting: wait for Ready"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q among the repeated lines:\n%s", want, got)
		}
	}
}
