package winsim

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"sync"
)

// connState is the authentication state of one TCP connection: NTLM
// authenticates the connection, not the request.
type connState struct {
	mu            sync.Mutex
	user          string // set once authenticated
	challenge     [8]byte
	challengeSent bool
}

type connStateKey struct{}

func withConnState(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connStateKey{}, &connState{})
}

// accountName strips "HOST\", ".\" and "@domain" from a user name.
func accountName(u string) string {
	if i := strings.LastIndexByte(u, '\\'); i >= 0 {
		u = u[i+1:]
	}
	if i := strings.IndexByte(u, '@'); i >= 0 {
		u = u[:i]
	}
	return u
}

// authenticate checks Basic or Negotiate (NTLM) credentials. On failure it
// has written the 401 (with the next NTLM leg when there is one).
func (h *Host) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	st, _ := r.Context().Value(connStateKey{}).(*connState)
	if st == nil {
		st = &connState{}
	}
	auth := r.Header.Get("Authorization")
	st.mu.Lock()
	defer st.mu.Unlock()
	if auth == "" && st.user != "" && !h.authFails() {
		return st.user, true
	}
	scheme, payload, _ := strings.Cut(auth, " ")
	switch strings.ToLower(scheme) {
	case "basic":
		u, p, ok := r.BasicAuth()
		if ok && !h.authFails() && strings.EqualFold(accountName(u), h.cfg.AdminUser) && p == h.cfg.AdminPassword {
			return h.cfg.AdminUser, true
		}
	case "negotiate", "ntlm":
		msg, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
		if err != nil {
			break
		}
		switch ntlmMessageType(msg) {
		case 1:
			challengeMsg, challenge := ntlmChallenge(h.cfg.ComputerName)
			st.challenge, st.challengeSent, st.user = challenge, true, ""
			w.Header().Set("WWW-Authenticate", scheme+" "+base64.StdEncoding.EncodeToString(challengeMsg))
			h.unauthorized(w, r, false)
			return "", false
		case 3:
			if !st.challengeSent {
				break // AUTHENTICATE on a connection that never got our CHALLENGE
			}
			st.challengeSent = false
			user, _, err := ntlmVerify(msg, st.challenge, h.cfg.AdminPassword)
			if err == nil && !h.authFails() && strings.EqualFold(accountName(user), h.cfg.AdminUser) {
				st.user = h.cfg.AdminUser
				return st.user, true
			}
		}
	}
	h.unauthorized(w, r, true)
	return "", false
}

// unauthorized answers 401, offering both schemes when offer is set.
func (h *Host) unauthorized(w http.ResponseWriter, r *http.Request, offer bool) {
	if offer {
		w.Header().Add("WWW-Authenticate", "Negotiate")
		w.Header().Add("WWW-Authenticate", `Basic realm="WSMAN"`)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusUnauthorized)
}
