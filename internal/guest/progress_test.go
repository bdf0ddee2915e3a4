package guest

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKeepProgressRepeatsTheStageUnderWay: a long stage is reported again
// every ProgressEvery, naming what it waits for and how long it has; a new
// stage starts its own count; stop ends the reports.
func TestKeepProgressRepeatsTheStageUnderWay(t *testing.T) {
	old := ProgressEvery
	ProgressEvery = 20 * time.Millisecond
	t.Cleanup(func() { ProgressEvery = old })
	var mu sync.Mutex
	var lines []string
	keep, stop := KeepProgress(func(stage string, fields map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		l := stage
		if w, ok := fields["waited"]; ok {
			l += " " + w.(string)
		}
		if v, ok := fields["vm"]; ok {
			l += " vm=" + v.(string)
		}
		lines = append(lines, l)
	})
	keep("customize", map[string]any{"vm": "vm-1"})
	deadline := time.Now().Add(10 * time.Second)
	count := func(prefix string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	for count("still waiting: customize") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := count("still waiting: customize"); n < 2 {
		t.Fatalf("%d repeats of a stage under way, want 2+: %v", n, lines)
	}
	keep("wait for Ready", nil)
	for count("still waiting: wait for Ready") < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	mu.Lock()
	got := append([]string(nil), lines...)
	mu.Unlock()
	if got[0] != "customize vm=vm-1" || !strings.Contains(strings.Join(got, "\n"), "still waiting: customize ") {
		t.Errorf("lines %v: want the stage, then repeats with the time waited and its fields", got)
	}
	n := len(got)
	time.Sleep(5 * ProgressEvery)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != n {
		t.Errorf("reports after stop: %v", lines[n:])
	}
}
