package guest

import (
	"maps"
	"sync"
	"time"
)

// ProgressEvery is how often a stage under way is reported again while it
// lasts: a customization (up to 15 minutes), a cumulative update's install
// (up to 40), a Windows image pull (10+) must not look like a hung apply
// in TF_LOG=info (issue 35: a progress line at least every minute of a long
// wait). A variable so tests can shorten it.
var ProgressEvery = 30 * time.Second

// Progress receives one line per stage (a resource sends it to tflog.Info).
type Progress func(stage string, fields map[string]any)

// KeepProgress wraps report: each stage is reported when it starts and then
// every ProgressEvery until the next stage starts or stop is called, as
// "still waiting: <stage>" with the time waited so far. A nil report
// reports nothing.
func KeepProgress(report Progress) (keep Progress, stop func()) {
	if report == nil {
		return func(string, map[string]any) {}, func() {}
	}
	// The interval is read once, here: the keeper's goroutine may outlive
	// stop by a moment, and must not read the variable a test restores.
	k := &keeper{report: report, every: ProgressEvery, next: make(chan struct{}, 1), done: make(chan struct{})}
	go k.run()
	var once sync.Once
	return k.start, func() { once.Do(func() { close(k.done) }) }
}

type keeper struct {
	report Progress
	every  time.Duration
	next   chan struct{} // a new stage started
	done   chan struct{}

	mu      sync.Mutex
	current string
	fields  map[string]any
	since   time.Time
}

func (k *keeper) start(stage string, fields map[string]any) {
	k.mu.Lock()
	k.current, k.fields, k.since = stage, maps.Clone(fields), time.Now()
	k.mu.Unlock()
	k.report(stage, fields)
	select {
	case k.next <- struct{}{}:
	default:
	}
}

func (k *keeper) run() {
	t := time.NewTimer(k.every)
	defer t.Stop()
	for {
		select {
		case <-k.done:
			return
		case <-k.next:
			t.Reset(k.every)
		case <-t.C:
			k.mu.Lock()
			stage, since := k.current, k.since
			fields := maps.Clone(k.fields)
			k.mu.Unlock()
			if stage != "" {
				if fields == nil {
					fields = map[string]any{}
				}
				fields["waited"] = time.Since(since).Round(time.Second).String()
				k.report("still waiting: "+stage, fields)
			}
			t.Reset(k.every)
		}
	}
}
