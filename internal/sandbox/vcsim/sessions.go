package vcsim

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
)

// TerminateSessions ends every client session but the one it logs in with
// to do so, as a vCenter administrator does from the Sessions view
// (SessionManager.TerminateSession), and as an idle timeout does: a client
// holding one finds its next call refused with NotAuthenticated, and the
// objects its session owned (property collectors, views) gone with it. It
// returns how many sessions it ended.
func (s *Server) TerminateSessions(ctx context.Context) (int, error) {
	c, err := s.login(ctx, s.roots)
	if err != nil {
		return 0, err
	}
	sm := session.NewManager(c)
	defer func() { _ = sm.Logout(context.WithoutCancel(ctx)) }()
	var mgr mo.SessionManager
	if err := property.DefaultCollector(c).RetrieveOne(ctx, *c.ServiceContent.SessionManager, []string{"sessionList", "currentSession"}, &mgr); err != nil {
		return 0, fmt.Errorf("vcsim: listing sessions: %w", err)
	}
	var ids []string
	for _, us := range mgr.SessionList {
		if mgr.CurrentSession == nil || us.Key != mgr.CurrentSession.Key {
			ids = append(ids, us.Key)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := sm.TerminateSession(ctx, ids); err != nil {
		return 0, fmt.Errorf("vcsim: terminating %d sessions: %w", len(ids), err)
	}
	return len(ids), nil
}

// OpenSessions counts the sessions vCenter holds for clients that sent
// userAgent (SessionManager.sessionList, as the vSphere Client's Sessions
// view shows them).
func (s *Server) OpenSessions(ctx context.Context, userAgent string) (int, error) {
	c, err := s.login(ctx, s.roots)
	if err != nil {
		return 0, err
	}
	sm := session.NewManager(c)
	defer func() { _ = sm.Logout(context.WithoutCancel(ctx)) }()
	var mgr mo.SessionManager
	if err := property.DefaultCollector(c).RetrieveOne(ctx, *c.ServiceContent.SessionManager, []string{"sessionList"}, &mgr); err != nil {
		return 0, fmt.Errorf("vcsim: listing sessions: %w", err)
	}
	n := 0
	for _, us := range mgr.SessionList {
		if us.UserAgent == userAgent {
			n++
		}
	}
	return n, nil
}

// CallHook observes a call as it arrives, before the simulator runs it:
// method is its name, obj the name of the object it is on ("" when that is
// no named entity). It must not block; it may start work of its own (a
// fault to inject at that moment).
type CallHook func(method, obj string)

// OnCall adds a hook run for every call; the returned func removes it.
func (s *Server) OnCall(h CallHook) (remove func()) {
	return s.hooks.call.Add(h)
}

func (s *Server) observe(ctx *simulator.Context, m *simulator.Method) {
	hooks := s.hooks.call.All()
	if len(hooks) == 0 {
		return
	}
	var name string
	if e, ok := ctx.Map.Get(m.This).(mo.Entity); ok {
		name = e.Entity().Name
	}
	for _, h := range hooks {
		if h != nil {
			h(m.Name, name)
		}
	}
}
