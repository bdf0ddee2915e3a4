// Package hooks holds the callbacks tests add to the sandbox's parts (the
// simulated vCenter's calls and requests, the simulated guests' events)
// and remove again while those parts keep running them.
package hooks

import (
	"slices"
	"sync"
)

// List is a set of hooks in the order added; the zero value is empty and
// ready. It is safe for concurrent use.
type List[H any] struct {
	mu      sync.Mutex
	next    uint64
	entries []entry[H]
}

type entry[H any] struct {
	id   uint64
	hook H
}

// Add adds h; the returned func removes it.
func (l *List[H]) Add(h H) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	id := l.next
	l.entries = append(l.entries, entry[H]{id, h})
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.entries = slices.DeleteFunc(l.entries, func(e entry[H]) bool { return e.id == id })
	}
}

// All returns the hooks to run now, a copy: a hook added or removed while
// they run takes effect from the next call.
func (l *List[H]) All() []H {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]H, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.hook
	}
	return out
}
