package vcsim

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
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
