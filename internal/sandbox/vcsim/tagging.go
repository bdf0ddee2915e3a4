package vcsim

// vCenter's tagging API, checked for the provider's account as the SOAP
// calls are (authz.go). vcsim's vAPI simulator (vapi/simulator) keeps tags
// and their associations but checks no privilege. Here a tag attached to
// or detached from an object by the provider's account needs, on that
// object, "Assign or Unassign vSphere Tag" (InventoryService.Tagging.AttachTag)
// and "Assign or Unassign vSphere Tag on Object"
// (InventoryService.Tagging.ObjectAttachable): vSphere Security, "vSphere
// Tagging Privileges" (both "Required On: Any object"; the sandbox checks
// both on the object tagged). Listing the tags attached to an object needs
// the read privilege on it (System.Read): "To invoke this operation, you
// need the read privilege on the input object" (vSphere Automation API,
// Tagging Tag Association, list_attached_tags,
// https://developer.broadcom.com/xapis/vsphere-automation-api/latest/cis/tagging/tag_association/);
// vCenter also leaves out the tags the user may not read, which the
// sandbox does not model (its tags carry no permissions, so every tag is
// readable). A refusal is HTTP 403 with the privilege, as the REST API
// answers unauthorized operations. The other association queries (vCenter
// filters their answers by the caller's read privileges, which the sandbox
// does not), every other tagging write (tags, categories) and the /api
// form of the association calls are refused for that account: the sandbox
// does not model them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

const (
	restSessionPath     = "/rest/com/vmware/cis/session"
	restAssociationPath = "/rest/com/vmware/cis/tagging/tag-association"
	restTaggingPath     = "/rest/com/vmware/cis/tagging/"
	apiTaggingPath      = "/api/cis/tagging/"
	restSessionHeader   = "vmware-api-session-id"
)

// TaggingPrivileges are what attaching or detaching a tag needs on the
// object.
var TaggingPrivileges = []string{"InventoryService.Tagging.AttachTag", "InventoryService.Tagging.ObjectAttachable"}

// restSessions maps the vAPI sessions to their users: the simulator's own
// map is not exported.
type restSessions struct {
	mu    sync.Mutex
	users map[string]string
}

// installTagging wraps the vAPI simulator's session and tagging endpoints.
// It must run before the simulator's HTTP server is made; the vAPI
// handler, registered then for "/rest/" and "/api/", is looked up on each
// request.
func (s *Server) installTagging(svc *simulator.Service) {
	vapi := func(r *http.Request) http.Handler {
		probe := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/rest/"}, Host: r.Host}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			probe.URL.Path = "/api/"
		}
		h, _ := svc.ServeMux.Handler(probe)
		return h
	}
	svc.ServeMux.HandleFunc("POST "+restSessionPath, func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		vapi(r).ServeHTTP(rec, r)
		if user, _, ok := r.BasicAuth(); ok && rec.Code == http.StatusOK && r.URL.Query().Get("~action") == "" {
			var res struct {
				Value string `json:"value"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &res) == nil && res.Value != "" {
				s.restSessions.mu.Lock()
				if s.restSessions.users == nil {
					s.restSessions.users = map[string]string{}
				}
				s.restSessions.users[res.Value] = user
				s.restSessions.mu.Unlock()
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
	check := func(w http.ResponseWriter, r *http.Request) {
		if s.authz.user != "" && s.restUser(r) == s.authz.user {
			if msg := s.tagRefusal(r); msg != "" {
				http.Error(w, msg, http.StatusForbidden)
				return
			}
		}
		vapi(r).ServeHTTP(w, r)
	}
	svc.ServeMux.HandleFunc("POST "+restTaggingPath, check)
	svc.ServeMux.HandleFunc("POST "+apiTaggingPath, check)
}

// restUser is the user of the request's vAPI session.
func (s *Server) restUser(r *http.Request) string {
	id := r.Header.Get(restSessionHeader)
	if id == "" {
		if c, err := r.Cookie(restSessionHeader); err == nil {
			id = c.Value
		}
	}
	s.restSessions.mu.Lock()
	defer s.restSessions.mu.Unlock()
	return s.restSessions.users[id]
}

// tagRefusal says why the provider's account may not make the tagging call;
// "" lets it through. A tag or category read needs only a session, a list
// of an object's tags System.Read on it.
func (s *Server) tagRefusal(r *http.Request) string {
	action := r.URL.Query().Get("~action")
	if !strings.HasPrefix(r.URL.Path, restAssociationPath) {
		if strings.HasPrefix(r.URL.Path, apiTaggingPath) {
			return fmt.Sprintf("the sandbox's vCenter does not model the privileges of %s for %s (internal/sandbox/vcsim/tagging.go)", r.URL.Path, s.authz.user)
		}
		switch action {
		case "get", "list", "list-used-tags", "list-tags-for-category":
			return ""
		}
		return fmt.Sprintf("the sandbox's vCenter does not model the privileges of %s %s for %s (internal/sandbox/vcsim/tagging.go)", r.URL.Path, action, s.authz.user)
	}
	var needs []string
	switch action {
	case "list-attached-tags":
		needs = []string{"System.Read"}
	case "attach", "detach":
		needs = TaggingPrivileges
	default:
		return fmt.Sprintf("the sandbox's vCenter does not model the privileges of tag-association %s for %s (internal/sandbox/vcsim/tagging.go)", action, s.authz.user)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err.Error()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var spec struct {
		ObjectID *struct {
			Type  string `json:"type"`
			Value string `json:"id"`
		} `json:"object_id"`
	}
	if err := json.Unmarshal(body, &spec); err != nil || spec.ObjectID == nil {
		return "a tag-association " + action + " without an object_id"
	}
	obj := types.ManagedObjectReference{Type: spec.ObjectID.Type, Value: spec.ObjectID.Value}
	ctx := &simulator.Context{Map: s.Model.Map()}
	held := s.authz.privileges(ctx, s.authz.user, obj)
	for _, p := range needs {
		if !held[p] {
			return fmt.Sprintf("Permission to perform this operation was denied: %s on %s %s (privilege %s)", action, obj.Type, obj.Value, p)
		}
	}
	return ""
}
