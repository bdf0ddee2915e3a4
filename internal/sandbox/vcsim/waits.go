package vcsim

import (
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// waits are the long polls (WaitForUpdatesEx, WaitForUpdates) in flight.
//
// vCenter ends such a call when its client goes away. vcsim's runs until
// CancelWaitForUpdates, MaxWaitSeconds or an update, whatever happens to the
// connection: a killed client's poll without MaxWaitSeconds never ends, and
// httptest.Server.Close waits for every handler to return ("httptest.Server
// blocked in Close after 5 seconds, waiting for connections"), so Stop hung.
// CancelWaitForUpdates alone cannot end them all: vcsim keeps the cancel
// function of a collector's latest poll only (two concurrent polls on one
// collector leave the first out of reach), and a poll that has not yet
// stored its cancel function misses it. So every poll runs through waitCall,
// which returns RequestCanceled the moment Close begins, whatever vcsim's
// own wait is doing; Close then cancels vcsim's waits so that what can end
// does.
type waits struct {
	mu     sync.Mutex
	closed bool
	done   chan struct{} // closed by close
	pcs    map[*simulator.PropertyCollector]int
}

// begin registers a poll on pc; false once Close has begun.
func (w *waits) begin(pc *simulator.PropertyCollector) (<-chan struct{}, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, false
	}
	if w.done == nil {
		w.done = make(chan struct{})
		w.pcs = map[*simulator.PropertyCollector]int{}
	}
	w.pcs[pc]++
	return w.done, true
}

func (w *waits) end(pc *simulator.PropertyCollector) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pcs[pc]--; w.pcs[pc] <= 0 {
		delete(w.pcs, pc)
	}
}

// close ends every poll in flight and refuses new ones.
func (w *waits) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if w.done != nil {
		close(w.done)
	}
	for pc := range w.pcs {
		pc.CancelWaitForUpdates(&types.CancelWaitForUpdates{This: pc.Self})
	}
}

// waitCall answers a poll in place of its property collector.
type waitCall struct {
	self types.ManagedObjectReference
	pc   *simulator.PropertyCollector
	w    *waits
}

func (c *waitCall) Reference() types.ManagedObjectReference { return c.self }

// Lock and Unlock opt the call out of vcsim's per-object locking, as the
// property collector itself does (a poll must not hold a lock while it waits).
func (*waitCall) Lock()   {}
func (*waitCall) Unlock() {}

func (c *waitCall) WaitForUpdatesEx(ctx *simulator.Context, req *types.WaitForUpdatesEx) soap.HasFault {
	res := c.run(func() soap.HasFault { return c.pc.WaitForUpdatesEx(ctx, req) })
	if res == nil {
		return &methods.WaitForUpdatesExBody{Fault_: canceled()}
	}
	return res
}

func (c *waitCall) WaitForUpdates(ctx *simulator.Context, req *types.WaitForUpdates) soap.HasFault {
	res := c.run(func() soap.HasFault { return c.pc.WaitForUpdates(ctx, req) })
	if res == nil {
		return &methods.WaitForUpdatesBody{Fault_: canceled()}
	}
	return res
}

// run runs vcsim's wait and returns its answer, or nil when Close ends it
// first (vcsim's wait then ends on Close's CancelWaitForUpdates, or stays
// behind in a simulator that no longer serves anyone).
func (c *waitCall) run(wait func() soap.HasFault) soap.HasFault {
	closing, ok := c.w.begin(c.pc)
	if !ok {
		return nil
	}
	res := make(chan soap.HasFault, 1)
	go func() {
		defer c.w.end(c.pc)
		res <- wait()
	}()
	select {
	case r := <-res:
		return r
	case <-closing:
		return nil
	}
}

func canceled() *soap.Fault {
	return simulator.Fault("the simulator is shutting down", &types.RequestCanceled{})
}
