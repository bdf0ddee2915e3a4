package vsphere

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The watch's side that talks to vCenter: changing the view, the
// WaitForUpdatesEx loop, and handing each update to its waiters.

// flush brings the view in line with the members: adds the objects waited
// for and removes the others, in one ModifyListView (a ResetListView after
// a failed one). Removals alone wait for the next addition, or for the
// linger (all): they cost a call of their own only when nothing else comes.
// One flush runs at a time; a caller whose change a concurrent flush made
// finds nothing left to do.
func (w *watcher) flush(ctx context.Context, s *watchSession, all bool) error {
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.failed:
		return failure(s)
	}
	defer func() { <-w.sem }()

	w.mu.Lock()
	if w.s != s {
		w.mu.Unlock()
		if s.err == nil { // retired, not failed: the next wait starts anew
			return &lostSessionError{err: errors.New("the watch session was retired")}
		}
		return failure(s)
	}
	var add, remove, keep []types.ManagedObjectReference
	for ref, m := range w.members {
		switch wanted := len(m.waiters) > 0; {
		case wanted && !m.inView:
			add = append(add, ref)
		case !wanted && m.inView:
			remove = append(remove, ref)
		case !wanted:
			delete(w.members, ref) // never added
		}
	}
	resync := s.resync
	if len(add) == 0 && !resync && (!all || len(remove) == 0) {
		w.mu.Unlock()
		return nil
	}
	for _, ref := range add {
		m := w.members[ref]
		*m = member{waiters: m.waiters, inView: true}
	}
	for _, ref := range remove {
		delete(w.members, ref)
	}
	for ref, m := range w.members {
		if m.inView {
			keep = append(keep, ref)
		}
	}
	w.mu.Unlock()

	// The outcome of an interrupted call is unknown: finish it.
	cctx := context.WithoutCancel(ctx)
	var unresolved []types.ManagedObjectReference
	var err error
	if resync {
		var res *types.ResetListViewResponse
		if res, err = methods.ResetListView(cctx, w.vc, &types.ResetListView{This: s.view, Obj: keep}); err == nil {
			unresolved = res.Returnval
		}
	} else {
		var res *types.ModifyListViewResponse
		if res, err = methods.ModifyListView(cctx, w.vc, &types.ModifyListView{This: s.view, Add: add, Remove: remove}); err == nil {
			unresolved = res.Returnval
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && lostSession(s, err) {
		// The view went with the vCenter session: this watch session is
		// over, and its waits start again on a new one.
		if w.failLocked(s, err) {
			go w.destroy(s)
		}
		return &lostSessionError{err: err}
	}
	if err != nil {
		s.resync = true
		return fmt.Errorf("watching vSphere objects: %w", err)
	}
	s.resync = false
	for _, ref := range unresolved {
		if m := w.members[ref]; m != nil {
			m.missing = true
			m.notify()
		}
	}
	return nil
}

// reread reads obj's watched properties directly (after it left the view
// while wanted): a missing object ends the wait as not found.
func (w *watcher) reread(ctx context.Context, s *watchSession, obj types.ManagedObjectReference, m *member) error {
	var paths []string
	switch obj.Type {
	case TypeVirtualMachine:
		paths = watchVMProps
		if s.customizationInfo {
			paths = append(append([]string(nil), watchVMProps...), propCustomizationInfo)
		}
	case "Task":
		paths = watchTaskProps
	}
	res, err := methods.RetrievePropertiesEx(ctx, w.vc, &types.RetrievePropertiesEx{
		This: w.vc.ServiceContent.PropertyCollector,
		SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: []types.ObjectSpec{{Obj: obj}},
			PropSet:   []types.PropertySpec{{Type: obj.Type, PathSet: paths}},
		}},
	})
	if err != nil {
		return notFoundOr(err, kindName(obj.Type), obj, "reading")
	}
	if res.Returnval == nil || len(res.Returnval.Objects) == 0 {
		return &NotFoundError{Kind: kindName(obj.Type), ID: obj.Value}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if m.left {
		m.left, m.entered, m.props = false, true, props{}
		for _, p := range res.Returnval.Objects[0].PropSet {
			m.props[p.Name] = p.Val
		}
	}
	return nil
}

// loop is the one WaitForUpdatesEx caller of a session. It ends when an
// update set (or a MaxWaitSeconds timeout) finds no object in the view (the
// removal of the last one is such an update on vCenter; join starts the loop
// again), and fails the session on an error that is not the transport's.
func (w *watcher) loop(ctx context.Context, s *watchSession) {
	maxWait := int32(watchMaxWait)
	failures := 0
	for {
		w.mu.Lock()
		version := s.version
		w.mu.Unlock()
		res, err := methods.WaitForUpdatesEx(ctx, w.vc, &types.WaitForUpdatesEx{
			This: s.pc, Version: version, Options: &types.WaitOptions{MaxWaitSeconds: &maxWait},
		})
		if ctx.Err() != nil {
			return // retired or closed
		}
		if err != nil {
			w.mu.Lock()
			retired := w.s != s
			w.mu.Unlock()
			if retired {
				return // its collector destroyed under the long poll
			}
			if failures++; !soap.IsSoapFault(err) && failures < watchRetries {
				continue
			}
			w.fail(s, err)
			return
		}
		failures = 0
		w.mu.Lock()
		if set := res.Returnval; set != nil {
			s.version = set.Version
			for _, fu := range set.FilterSet {
				if fu.Filter != s.filter {
					continue
				}
				for _, ou := range fu.ObjectSet {
					w.apply(ou)
				}
			}
		}
		if len(w.members) == 0 && w.s == s {
			s.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// apply records one object update for its waiters; w.mu is held. Updates
// for objects not in the view (any more) are stale and ignored.
func (w *watcher) apply(ou types.ObjectUpdate) {
	m := w.members[ou.Obj]
	if m == nil || !m.inView {
		return
	}
	switch ou.Kind {
	case types.ObjectUpdateKindEnter:
		m.entered, m.left, m.props = true, false, props{}
	case types.ObjectUpdateKindLeave:
		if m.entered {
			m.entered, m.left, m.props = false, true, nil
			m.notify()
		}
		return
	}
	if !m.entered {
		return // a change from before a removal and re-addition crossed
	}
	for _, ch := range ou.ChangeSet {
		switch ch.Op {
		case types.PropertyChangeOpRemove, types.PropertyChangeOpIndirectRemove:
			delete(m.props, ch.Name)
		default:
			m.props[ch.Name] = ch.Val
		}
	}
	m.notify()
}

func (m *member) notify() {
	for ch := range m.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// fail ends a session: its waits return err, the next wait starts anew.
func (w *watcher) fail(s *watchSession, err error) {
	w.mu.Lock()
	failed := w.failLocked(s, err)
	w.mu.Unlock()
	if failed {
		go w.destroy(s)
	}
}

// failLocked is fail with w.mu held; it reports whether s was the watch's
// session, which the caller then destroys (without w.mu).
func (w *watcher) failLocked(s *watchSession, err error) bool {
	if w.s != s {
		return false
	}
	if s.loopStop != nil {
		s.loopStop() // a long poll on a collector that is gone may not end by itself
	}
	w.s = nil
	s.running = false
	s.err = err
	close(s.failed)
	for ref, m := range w.members {
		if len(m.waiters) == 0 {
			delete(w.members, ref)
		} else {
			m.inView, m.entered, m.props = false, false, nil
		}
	}
	return true
}

// watchStats is the state of the shared watch, for tests.
type watchStats struct {
	Collector, View types.ManagedObjectReference
	Members         int // objects in (or entering) the view
	Entered         int // of which vCenter has reported the properties
	Waiters         int
	Retiring        int // sessions being destroyed
}

func (w *watcher) stats() watchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := watchStats{Retiring: w.retiring}
	if w.s != nil {
		st.Collector, st.View = w.s.pc, w.s.view
	}
	for _, m := range w.members {
		if m.inView {
			st.Members++
		}
		if m.entered {
			st.Entered++
		}
		st.Waiters += len(m.waiters)
	}
	return st
}
