package vcsim

import (
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// waits are the property collectors clients have long-polled
// (WaitForUpdatesEx, WaitForUpdates).
//
// vCenter ends such a call when its client goes away. vcsim's runs until
// CancelWaitForUpdates, MaxWaitSeconds or an update, whatever happens to the
// connection: a killed client's poll without MaxWaitSeconds never ends, and
// httptest.Server.Close waits for every handler to return ("httptest.Server
// blocked in Close after 5 seconds, waiting for connections"), so Stop hung.
// One CancelWaitForUpdates per collector did not reach them all: a poll that
// has not yet stored its cancel function misses it, and vcsim keeps the
// cancel function of a collector's latest poll only (of two concurrent polls
// on one collector, the first is out of reach). So Close cancels again
// until the server has closed, and gives up waiting after closeWait.
//
// The polls themselves run as vcsim runs them: the shared watch's round
// trips (vsphere's TestRoundTrips) depend on their timing.
type waits struct {
	mu  sync.Mutex
	pcs map[types.ManagedObjectReference]*simulator.PropertyCollector
}

// closeWait bounds how long Close waits for the server's handlers.
const closeWait = 3 * time.Second

func (w *waits) add(ctx *simulator.Context, ref types.ManagedObjectReference) {
	pc, ok := ctx.Session.Get(ref).(*simulator.PropertyCollector)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pcs == nil {
		w.pcs = map[types.ManagedObjectReference]*simulator.PropertyCollector{}
	}
	w.pcs[ref] = pc
}

func (w *waits) cancel() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ref, pc := range w.pcs {
		pc.CancelWaitForUpdates(&types.CancelWaitForUpdates{This: ref})
	}
}

// closeServer runs closeHTTP (which waits for every handler) while it
// cancels the polls, until it returns or closeWait has passed; it reports
// whether the server closed.
func (w *waits) closeServer(closeHTTP func()) bool {
	closed := make(chan struct{})
	go func() {
		closeHTTP()
		close(closed)
	}()
	deadline := time.After(closeWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		w.cancel()
		select {
		case <-closed:
			return true
		case <-deadline:
			return false
		case <-tick.C:
		}
	}
}
