package vcsim

import (
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// GuestOperations answers vCenter's guest operations: the methods of the
// GuestProcessManager, GuestFileManager and GuestAuthManager (vSphere Web
// Services API, vim.vm.guest.*), and the file transfers their
// InitiateFileTransfer{To,From}Guest URLs point at (served here at
// GuestFilePath, vCenter's "/guestFile?id=...&token=..." form).
//
// Its methods are called as the simulator calls a managed object's: by the
// SOAP method's name, with (*simulator.Context, *types.<Method>) and a
// soap.HasFault result. A guest method it lacks is refused with
// NotImplemented; without GuestOperations every guest method is refused
// with GuestOperationsUnavailable. vcsim's own guest operations run
// commands in Docker containers (simulator/guest_operations_manager.go),
// which the sandbox's VMs are not: they never answer here.
type GuestOperations interface {
	mo.Reference
	// ServeTransfer serves a PUT (to the guest) or GET (from the guest) of
	// a URL the guest operations handed out.
	ServeTransfer(w http.ResponseWriter, r *http.Request)
}

// GuestFilePath is the path of the guest file transfer URLs.
const GuestFilePath = "/guestFile"

type guestOps struct {
	mu sync.Mutex
	g  GuestOperations
}

// ServeGuestOperations routes the guest operations of every VM to g (nil:
// refused as unavailable).
func (s *Server) ServeGuestOperations(g GuestOperations) {
	s.guest.mu.Lock()
	defer s.guest.mu.Unlock()
	s.guest.g = g
}

func (s *Server) guestOperations() GuestOperations {
	s.guest.mu.Lock()
	defer s.guest.mu.Unlock()
	return s.guest.g
}

// guestManagers are the managed object types whose methods are guest
// operations.
var guestManagers = map[string]bool{"GuestProcessManager": true, "GuestFileManager": true, "GuestAuthManager": true,
	"GuestAliasManager": true, "GuestWindowsRegistryManager": true}

// routeGuest returns the object that answers a guest operation, or the
// fault that refuses it; ok is false for any other method.
func (s *Server) routeGuest(m *simulator.Method) (h mo.Reference, fault types.BaseMethodFault, ok bool) {
	if !guestManagers[m.This.Type] {
		return nil, nil, false
	}
	g := s.guestOperations()
	if g == nil {
		return nil, new(types.GuestOperationsUnavailable), true
	}
	if !reflect.ValueOf(g).MethodByName(strings.Title(m.Name)).IsValid() { //nolint:staticcheck // the simulator's own name mapping (simulator.go)
		return nil, new(types.NotImplemented), true
	}
	// The simulator prefers the registry's object for m.This over a
	// handler returned here: point the call at g's own reference.
	m.This = g.Reference()
	return g, nil, true
}

// serveGuestFile hands guest file transfers to the GuestOperations.
func (s *Server) serveGuestFile(w http.ResponseWriter, r *http.Request) {
	g := s.guestOperations()
	if g == nil {
		http.Error(w, "no guest operations", http.StatusNotFound)
		return
	}
	g.ServeTransfer(w, r)
}
