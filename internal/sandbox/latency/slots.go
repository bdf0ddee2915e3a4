package latency

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Slots are per-host provisioning units: an operation that needs more units
// than are free waits, first come first served, as an ESXi host queues the
// clones beyond its units (golang.org/x/sync/semaphore is FIFO by weight).
type Slots struct {
	units int64
	mu    sync.Mutex
	hosts map[string]*semaphore.Weighted
}

// NewSlots gives every host units provisioning units.
func NewSlots(units int) *Slots {
	return &Slots{units: int64(units), hosts: map[string]*semaphore.Weighted{}}
}

// Acquire takes units of host's provisioning units, waiting while they are
// taken. queued reports whether it had to wait; release gives them back.
func (s *Slots) Acquire(ctx context.Context, host string, units int) (release func(), queued bool, err error) {
	s.mu.Lock()
	sem, ok := s.hosts[host]
	if !ok {
		sem = semaphore.NewWeighted(s.units)
		s.hosts[host] = sem
	}
	s.mu.Unlock()
	n := int64(units)
	if sem.TryAcquire(n) {
		return func() { sem.Release(n) }, false, nil
	}
	if err := sem.Acquire(ctx, n); err != nil {
		return nil, true, err
	}
	return func() { sem.Release(n) }, true, nil
}
