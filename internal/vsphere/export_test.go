package vsphere

import (
	"time"

	"github.com/vmware/govmomi/vim25/types"
)

// WatchState is the shared watch as the tests see it.
type WatchState struct {
	Collector, View           types.ManagedObjectReference
	Members, Entered, Waiters int
	Retiring                  int
}

func (c *Client) WatchState() WatchState {
	return WatchState(c.watcher().stats())
}

// SetWatchLinger sets how long objects stay in the view of clients made
// from now on; it returns the previous value.
func SetWatchLinger(d time.Duration) time.Duration {
	old := watchLinger
	watchLinger = d
	return old
}

// WatchEntered reports whether vCenter has reported obj's properties to the
// shared watch.
func (c *Client) WatchEntered(obj types.ManagedObjectReference) bool {
	w := c.watcher()
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.members[obj]
	return m != nil && m.entered
}

// Relogins counts the logins after the first (a session that ended).
func (c *Client) Relogins() int { return c.relogin.logins() }

// SetProgressInterval sets how often long waits log; it returns the
// previous value.
func SetProgressInterval(d time.Duration) time.Duration {
	old := progressInterval
	progressInterval = d
	return old
}
