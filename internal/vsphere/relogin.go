package vsphere

import (
	"context"
	"net/url"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// relogin is the Client's round tripper: a call that vCenter refuses with
// NotAuthenticated (the session expired after its idle timeout, or an
// administrator terminated it) logs in again with the configured
// credentials and is sent once more. vCenter refuses such a call before
// running it, so sending it again is safe. It wraps the SOAP client as
// govmomi's vim25.Retry does; govmomi's own session/keepalive only keeps
// an idle session alive, and cannot bring back one that has ended.
//
// Objects of the old session die with it (vCenter scopes property
// collectors and views to their session): the shared watch starts a new
// collector when its own fails that way (watch.go, lostSession).
type relogin struct {
	soap.RoundTripper
	user *url.Userinfo
	mgr  *session.Manager

	loginMu sync.Mutex   // one login at a time
	gen     atomic.Int64 // counts logins, so that concurrent refusals log in once
}

func (r *relogin) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	gen := r.gen.Load()
	err := r.RoundTripper.RoundTrip(ctx, req, res)
	if err == nil || !isFault(err, &types.NotAuthenticated{}) || isSessionCall(req) {
		return err
	}
	if lerr := r.login(ctx, gen); lerr != nil {
		return err // the refusal, which says what happened
	}
	// The response was decoded into res; a second decode would keep the
	// first fault where the new answer has none.
	v := reflect.ValueOf(res).Elem()
	v.Set(reflect.Zero(v.Type()))
	return r.RoundTripper.RoundTrip(ctx, req, res)
}

// login logs in again unless another call did since gen.
func (r *relogin) login(ctx context.Context, gen int64) error {
	r.loginMu.Lock()
	defer r.loginMu.Unlock()
	if r.gen.Load() != gen {
		return nil
	}
	// Login goes through r too, but a refused Login is not sent again
	// (isSessionCall), so it never comes back here.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loginTimeout)
	defer cancel()
	if err := r.mgr.Login(ctx, r.user); err != nil {
		return err
	}
	r.gen.Add(1)
	return nil
}

// logins counts the logins after the first one (tests).
func (r *relogin) logins() int { return int(r.gen.Load()) }

// isSessionCall: calls that must not log in again by themselves.
func isSessionCall(req soap.HasFault) bool {
	switch req.(type) {
	case *methods.LoginBody, *methods.LogoutBody, *methods.SessionIsActiveBody:
		return true
	}
	return false
}
