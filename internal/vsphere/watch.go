package vsphere

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
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
	watchVMProps   = []string{"runtime.powerState", "guest.toolsRunningStatus", "guest.ipAddress", "guest.net"}
	watchTaskProps = []string{"info.state", "info.result", "info.error"}
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
func (w *watcher) wait(ctx context.Context, obj types.ManagedObjectReference, check func(props) (bool, error), also ...types.ManagedObjectReference) error {
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
			return fmt.Errorf("waiting on the vSphere property collector: %w", s.err)
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
		return fmt.Errorf("waiting on the vSphere property collector: %w", s.err)
	}
	defer func() { <-w.sem }()

	w.mu.Lock()
	if w.s != s {
		w.mu.Unlock()
		return fmt.Errorf("waiting on the vSphere property collector: %w", s.err)
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
	if w.s != s {
		w.mu.Unlock()
		return
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
	w.mu.Unlock()
	go w.destroy(s)
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
