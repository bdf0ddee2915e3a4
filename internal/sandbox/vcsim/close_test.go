package vcsim

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// TestCloseEndsOpenWaits leaves long polls open the ways clients leave them
// and checks Close returns within seconds: vcsim's WaitForUpdatesEx without
// MaxWaitSeconds runs until CancelWaitForUpdates whatever happens to its
// connection, and httptest.Server.Close waits for every handler to return
// ("httptest.Server blocked in Close after 5 seconds, waiting for
// connections"). The polls: one whose client is alive, one whose client
// has gone (its connection dropped, as a killed process's is), a legacy
// WaitForUpdates, two concurrent polls on one collector (vcsim keeps the
// cancel function of the latest only: Close gives up waiting for the first
// after closeWait), and polls the client sends while Close runs.
func TestCloseEndsOpenWaits(t *testing.T) {
	s, ca := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	before := s.Calls()

	waitEx := func(ctx context.Context, c *vim25.Client, pc types.ManagedObjectReference) error {
		_, err := methods.WaitForUpdatesEx(ctx, c, &types.WaitForUpdatesEx{This: pc, Version: "-"})
		return err
	}
	wait := func(ctx context.Context, c *vim25.Client, pc types.ManagedObjectReference) error {
		_, err := methods.WaitForUpdates(ctx, c, &types.WaitForUpdates{This: pc, Version: "-"})
		return err
	}
	// A collector with a filter, its initial update set taken, so the next
	// poll blocks until something changes.
	collector := func(c *vim25.Client) types.ManagedObjectReference {
		pc, err := property.DefaultCollector(c).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.CreateFilter(ctx, types.CreateFilter{Spec: types.PropertyFilterSpec{
			ObjectSet: []types.ObjectSpec{{Obj: c.ServiceContent.RootFolder}},
			PropSet:   []types.PropertySpec{{Type: "Folder", PathSet: []string{"name"}}},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := methods.WaitForUpdatesEx(ctx, c, &types.WaitForUpdatesEx{This: pc.Reference()}); err != nil {
			t.Fatal(err)
		}
		return pc.Reference()
	}

	ended := make(chan string, 16)
	started := 0
	start := func(name string, c *vim25.Client, pc types.ManagedObjectReference, callCtx context.Context, call func(context.Context, *vim25.Client, types.ManagedObjectReference) error) {
		started++
		go func() {
			_ = call(callCtx, c, pc) // ends with a fault or a cut connection: only that it ends matters
			ended <- name
		}()
	}
	newClient := func() *vim25.Client {
		c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	alive := newClient()
	start("alive WaitForUpdatesEx", alive, collector(alive), ctx, waitEx)
	start("legacy WaitForUpdates", alive, collector(alive), ctx, wait)
	shared := collector(alive)
	start("first of two on one collector", alive, shared, ctx, waitEx)
	start("second of two on one collector", alive, shared, ctx, waitEx)

	killed := newClient()
	killedCtx, kill := context.WithCancel(ctx)
	start("killed client's WaitForUpdatesEx", killed, collector(killed), killedCtx, waitEx)

	// Every poll has reached the simulator.
	for {
		got, _ := s.CallsSince(before)
		// 4 initial update sets (collector) and 4 polls.
		if got["WaitForUpdatesEx"] >= 4+4 && got["WaitForUpdates"] >= 1 {
			break
		}
		select {
		case name := <-ended:
			t.Fatalf("%s ended before Close", name)
		case <-ctx.Done():
			t.Fatalf("the polls never reached the simulator: %v", got)
		case <-time.After(10 * time.Millisecond):
		}
	}
	kill() // the killed client's connection drops; its poll stays in vcsim
	select {
	case name := <-ended:
		if name != "killed client's WaitForUpdatesEx" {
			t.Fatalf("%s ended before Close", name)
		}
		started-- // its client side ended; the server side is what Close must end
	case <-time.After(5 * time.Second):
		t.Fatal("the killed client's call did not end on its side")
	}

	// A client that keeps polling while Close runs.
	late := newClient()
	latePC := collector(late)
	lateDone := make(chan struct{})
	go func() {
		defer close(lateDone)
		for ctx.Err() == nil {
			if waitEx(ctx, late, latePC) != nil {
				return
			}
		}
	}()

	begin := time.Now()
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s with long polls open")
	}
	t.Logf("Close returned in %s", time.Since(begin).Round(time.Millisecond))
	for range started {
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("a poll did not end after Close")
		}
	}
	<-lateDone
}
