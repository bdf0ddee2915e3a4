package vsphere

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// The shared watch: every wait of a Client (task results, power states,
// customization, guest IPs, guest restarts) is served by one property
// collector of the session, holding one filter over one ListView. A wait
// puts its object into the view (ModifyListView), vCenter reports it
// ("enter", then "modify" as it changes) to the one WaitForUpdatesEx loop,
// which hands each waiter its object's current properties; the object leaves
// the view when no wait needs it any more. So N concurrent waits cost one
// long poll, not N collectors with a filter and a poll each, and a batch of
// changes to many VMs arrives in one round trip. A ListView whose content
// changes under a filter is how vCenter's own clients follow a changing set
// of objects (govmomi's view.TaskView); one collector's updates go to the one
// loop, so no waiter can take another's update.
//
// An object deleted while waited on ends the wait as not found: ModifyListView
// reports it unresolved, or vCenter reports it leaving the view (then a read
// confirms it). One that is deleted after ModifyListView but before vCenter
// first reported it leaves no trace in the updates; its wait lasts until its
// context ends (govmomi's property.Wait never ends for a deleted object).
//
// Objects whose waits are over stay in the view for a moment (watchLinger):
// the next view change, or the linger timer, takes them out. A VM waited on
// for its customization and then for its IP stays in between, and removals
// ride along with the next addition. When the linger passes with no wait at
// all, the collector and the view are destroyed (two round trips; the next
// wait starts them again, three): an idle Client holds nothing in vCenter,
// even if the process ends without logging out.

// watchLinger is how long an object with no waiter stays in the view when no
// other change of the view takes it out first, and how long the watch stays
// up with no wait at all.
var watchLinger = time.Second

// watchMaxWait bounds one WaitForUpdatesEx (vSphere's WaitOptions advise "no
// shorter than a few minutes"), so an idle long poll never outlives the HTTP
// idle timeouts of proxies between us and vCenter.
const watchMaxWait = 300

// watchRetries is how many times in a row the loop repeats a
// WaitForUpdatesEx that failed in transport (a dropped connection) before it
// fails the waits.
const watchRetries = 3

// Properties the watch collects.
var (
	watchVMProps = []string{"runtime.powerState", "guest.toolsRunningStatus", "guest.guestOperationsReady", "guest.ipAddress", "guest.net"}
	// info.name, info.entityName and info.progress say what a long wait
	// waits for (waitTask's progress log); the first two never change.
	watchTaskProps = []string{"info.state", "info.result", "info.error", "info.name", "info.entityName", "info.progress"}
)

// propCustomizationInfo is vSphere 7.0U2's customization status (vSphere API
// 7.0.2.0); older vCenters refuse the property and WaitForCustomization
// watches events instead.
const propCustomizationInfo = "guest.customizationInfo"

// props are an object's watched properties as last reported.
type props map[string]types.AnyType

// watcher owns the shared watch of a Client.
type watcher struct {
	vc     *vim25.Client
	linger time.Duration

	startMu sync.Mutex // one start at a time
	sem     chan struct{}

	mu      sync.Mutex
	s       *watchSession // nil until the first wait, when idle, after a failure
	members map[types.ManagedObjectReference]*member
	timer   *time.Timer
	closed  bool
	// retiring counts sessions being destroyed.
	retiring int
}

// watchSession is one collector with its view and filter; idleness (retire)
// or a loop failure (fail) ends it, and the next wait starts another.
type watchSession struct {
	pc, view, filter  types.ManagedObjectReference
	customizationInfo bool // the filter collects propCustomizationInfo

	version  string // of the last update set
	running  bool   // the loop runs
	resync   bool   // a ModifyListView failed: the view's content is unknown
	loopStop context.CancelFunc
	failed   chan struct{} // closed with err set when the loop failed
	err      error
}

// member is an object in (or entering) the view, with its waiters.
type member struct {
	waiters map[chan struct{}]struct{}
	inView  bool // in the view, or being added to it
	entered bool // props hold what vCenter reported
	left    bool // vCenter reported it leaving the view while wanted
	missing bool // vCenter has no such object
	props   props
}

func newWatcher(vc *vim25.Client) *watcher {
	return &watcher{vc: vc, linger: watchLinger, sem: make(chan struct{}, 1), members: map[types.ManagedObjectReference]*member{}}
}

// session returns the running watch session, starting one (a collector, a
// view and a filter: three round trips, once per run) when there is none.
func (w *watcher) session(ctx context.Context) (*watchSession, error) {
	w.mu.Lock()
	s, closed := w.s, w.closed
	w.mu.Unlock()
	if closed {
		return nil, errors.New("the vSphere client is closed")
	}
	if s != nil {
		return s, nil
	}
	w.startMu.Lock()
	defer w.startMu.Unlock()
	w.mu.Lock()
	s = w.s
	w.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := w.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the vSphere property collector: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		go w.destroy(s)
		return nil, errors.New("the vSphere client is closed")
	}
	w.s = s
	return s, nil
}

func (w *watcher) start(ctx context.Context) (*watchSession, error) {
	content := w.vc.ServiceContent
	pcRes, err := methods.CreatePropertyCollector(ctx, w.vc, &types.CreatePropertyCollector{This: content.PropertyCollector})
	if err != nil {
		return nil, err
	}
	s := &watchSession{pc: pcRes.Returnval, failed: make(chan struct{})}
	viewRes, err := methods.CreateListView(ctx, w.vc, &types.CreateListView{This: *content.ViewManager})
	if err != nil {
		w.destroy(s)
		return nil, err
	}
	s.view = viewRes.Returnval
	s.customizationInfo = true
	s.filter, err = w.createFilter(ctx, s)
	if err != nil && isFault(err, &types.InvalidProperty{}) {
		// A vCenter older than 7.0U2 has no guest.customizationInfo.
		s.customizationInfo = false
		s.filter, err = w.createFilter(ctx, s)
	}
	if err != nil {
		w.destroy(s)
		return nil, err
	}
	return s, nil
}

func (w *watcher) createFilter(ctx context.Context, s *watchSession) (types.ManagedObjectReference, error) {
	vmProps := watchVMProps
	if s.customizationInfo {
		vmProps = append(append([]string(nil), watchVMProps...), propCustomizationInfo)
	}
	res, err := methods.CreateFilter(ctx, w.vc, &types.CreateFilter{
		This: s.pc,
		Spec: types.PropertyFilterSpec{
			ObjectSet: []types.ObjectSpec{{
				Obj:       s.view,
				Skip:      types.NewBool(true),
				SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ListView", Path: "view"}},
			}},
			PropSet: []types.PropertySpec{
				{Type: TypeVirtualMachine, PathSet: vmProps},
				{Type: "Task", PathSet: watchTaskProps},
			},
		},
	})
	if err != nil {
		return types.ManagedObjectReference{}, err
	}
	return res.Returnval, nil
}

// destroy removes a session's collector (and with it its filter) and view
// from vCenter, best effort.
func (w *watcher) destroy(s *watchSession) {
	w.mu.Lock()
	w.retiring++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.retiring--
		w.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.view.Value != "" {
		_, _ = methods.DestroyView(ctx, w.vc, &types.DestroyView{This: s.view})
	}
	_, _ = methods.DestroyPropertyCollector(ctx, w.vc, &types.DestroyPropertyCollector{This: s.pc})
}

// close stops the loop and destroys the collector and the view; waits
// still running fail.
func (w *watcher) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	s := w.s
	if w.timer != nil {
		w.timer.Stop()
	}
	if s != nil {
		s.err = errors.New("the vSphere client was closed")
		close(s.failed)
		w.retireLocked(s)
	}
	w.mu.Unlock()
	if s != nil {
		w.destroy(s)
	}
}

// wait waits until check, called with obj's watched properties each time
// they change, says it is done, or fails. A missing object is a
// *NotFoundError. The objects in also join the view with obj, in the same
// ModifyListView, and linger after it: a wait that is about to follow on
// them (a VM's, after its power-on task) finds them there.
//
// Every progressInterval of the wait is logged (tflog INFO): the object and
// what vCenter last reported of it (waitProgress).
func (w *watcher) wait(ctx context.Context, obj types.ManagedObjectReference, check func(props) (bool, error), also ...types.ManagedObjectReference) error {
	var (
		mu   sync.Mutex
		last props
	)
	stop := logEvery(ctx, "waiting on vCenter for "+kindName(obj.Type)+" "+obj.Value, func() map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return waitProgress(obj, last)
	})
	defer stop()
	inner := check
	check = func(p props) (bool, error) {
		mu.Lock()
		last = maps.Clone(p) // p is the watch's, changed under its lock
		mu.Unlock()
		return inner(p)
	}
	for restarts := 0; ; restarts++ {
		err := w.waitOnce(ctx, obj, check, also...)
		var lost *lostSessionError
		if !errors.As(err, &lost) || restarts >= watchRestarts {
			return err
		}
		// The collector died with the vCenter session (the Client logged in
		// again, relogin.go): wait again on a new one, which reports the
		// object's current state first.
	}
}

// watchRestarts bounds how many times in a row one wait starts over on a
// new collector after losing its session.
const watchRestarts = 3

// lostSessionError is a watch session that failed because its vCenter
// session ended: its collector and view are gone with it.
type lostSessionError struct{ err error }

func (e *lostSessionError) Error() string {
	return "waiting on the vSphere property collector: the vCenter session ended: " + e.err.Error()
}
func (e *lostSessionError) Unwrap() error { return e.err }

// lostSession reports whether err says s's objects are gone with the
// vCenter session that made them (vCenter scopes collectors and views to
// the session), or that the session itself has ended.
func lostSession(s *watchSession, err error) bool {
	if isFault(err, &types.NotAuthenticated{}) {
		return true
	}
	obj, ok := managedObjectNotFound(err)
	return ok && (obj == s.pc || obj == s.view || obj == s.filter)
}

// failure is the error of a wait whose watch session failed.
func failure(s *watchSession) error {
	if lostSession(s, s.err) {
		return &lostSessionError{err: s.err}
	}
	return fmt.Errorf("waiting on the vSphere property collector: %w", s.err)
}

func (w *watcher) waitOnce(ctx context.Context, obj types.ManagedObjectReference, check func(props) (bool, error), also ...types.ManagedObjectReference) error {
	objs := append([]types.ManagedObjectReference{obj}, also...)
	chans := make([]chan struct{}, len(objs))
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
	}
	ch := chans[0]
	var (
		s *watchSession
		m *member
	)
	for m == nil {
		var err error
		if s, err = w.session(ctx); err != nil {
			return err
		}
		m = w.join(s, objs, chans) // nil when s retired meanwhile: start anew
	}
	defer w.leave(objs, chans)
	if err := w.flush(ctx, s, false); err != nil {
		return err
	}
	verified := false
	for {
		w.mu.Lock()
		var (
			done  bool
			cerr  error
			left  = m.left
			gone  = m.missing
			state = m.entered
		)
		if state {
			done, cerr = check(m.props)
		}
		w.mu.Unlock()
		switch {
		case gone:
			return &NotFoundError{Kind: kindName(obj.Type), ID: obj.Value}
		case done || cerr != nil:
			return cerr
		case left && !verified:
			// It left the view while wanted: deleted, or a removal and
			// re-addition crossed. Ask vCenter once.
			verified = true
			if err := w.reread(ctx, s, obj, m); err != nil {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.failed:
			return failure(s)
		case <-ch:
		}
	}
}

// join adds waiters to the members of objs (chans[i] for objs[i]), creating
// them, makes sure the loop runs, and returns the first one; nil when s is
// no longer the watch's session.
func (w *watcher) join(s *watchSession, objs []types.ManagedObjectReference, chans []chan struct{}) *member {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.s != s {
		return nil
	}
	for i, obj := range objs {
		m := w.members[obj]
		if m == nil {
			m = &member{waiters: map[chan struct{}]struct{}{}}
			w.members[obj] = m
		}
		m.waiters[chans[i]] = struct{}{}
	}
	if !s.running {
		s.running = true
		ctx, cancel := context.WithCancel(context.Background())
		s.loopStop = cancel
		go w.loop(ctx, s)
	}
	return w.members[objs[0]]
}

// leave removes waiters; an object nobody waits for leaves the view with
// the next flush, at the latest after the linger.
func (w *watcher) leave(objs []types.ManagedObjectReference, chans []chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, obj := range objs {
		m := w.members[obj]
		if m == nil {
			continue
		}
		delete(m.waiters, chans[i])
		if len(m.waiters) > 0 {
			continue
		}
		if !m.inView {
			delete(w.members, obj)
		}
	}
	if w.timer == nil && !w.closed && w.s != nil {
		w.timer = time.AfterFunc(w.linger, w.lingerDone)
	}
}

// lingerDone takes objects nobody waits for out of the view; with no wait
// at all it retires the session instead.
func (w *watcher) lingerDone() {
	w.mu.Lock()
	w.timer = nil
	s := w.s
	idle := s != nil
	for _, m := range w.members {
		if len(m.waiters) > 0 {
			idle = false
			break
		}
	}
	if idle {
		w.retireLocked(s)
	}
	w.mu.Unlock()
	switch {
	case idle:
		w.destroy(s)
	case s != nil:
		_ = w.flush(context.Background(), s, true)
	}
}

// retireLocked ends an idle session (w.mu held); the caller destroys it.
func (w *watcher) retireLocked(s *watchSession) {
	w.s = nil
	clear(w.members)
	if s.loopStop != nil {
		s.loopStop()
	}
}
