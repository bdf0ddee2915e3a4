package vcsim

import (
	"context"
	"maps"
	"net/url"
	"testing"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

func TestCallsCountsHTTPRequestsByMethod(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	before := s.Calls()
	// Start's own inventory client has the same (default) user agent.
	byBefore := map[string]map[string]int64{}
	s.calls.mu.Lock()
	for ua, m := range s.calls.byAgent {
		byBefore[ua] = maps.Clone(m)
	}
	s.calls.mu.Unlock()

	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	pc := property.DefaultCollector(c)
	if err := pc.RetrieveOne(ctx, c.ServiceContent.RootFolder, []string{"name"}, &mo.Folder{}); err != nil {
		t.Fatal(err)
	}
	// A failed call is a round trip too.
	gone := types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-gone"}
	if err := pc.RetrieveOne(ctx, gone, []string{"name"}, &mo.VirtualMachine{}); err == nil {
		t.Fatal("reading a VM that does not exist succeeded")
	}

	// The in-process client the sandbox itself uses is no round trip.
	local, err := vim25.NewClient(ctx, s.Model.Service)
	if err != nil {
		t.Fatal(err)
	}
	if err := property.DefaultCollector(local).RetrieveOne(ctx, local.ServiceContent.RootFolder, []string{"name"}, &mo.Folder{}); err != nil {
		t.Fatal(err)
	}

	got, total := s.CallsSince(before)
	want := map[string]int64{"RetrieveServiceContent": 1, "Login": 1, "RetrievePropertiesEx": 2}
	for m, n := range want {
		if got[m] != n {
			t.Errorf("%s: %d calls, want %d (all: %v)", m, got[m], n, got)
		}
	}
	if total != 4 || len(got) != len(want) {
		t.Errorf("total %d over %v, want 4 over %v", total, got, want)
	}
	// By user agent: the session's calls under its client's, the calls
	// before a login under none.
	by := s.CallsBy(c.UserAgent)
	for m, n := range byBefore[c.UserAgent] {
		if by[m] -= n; by[m] == 0 {
			delete(by, m)
		}
	}
	if by["RetrievePropertiesEx"] != 2 || len(by) != 1 {
		t.Errorf("calls of %q: %v, want 2 RetrievePropertiesEx", c.UserAgent, by)
	}
	if by := s.CallsBy("terraform-provider-windows"); len(by) != 0 {
		t.Errorf("calls of another user agent: %v, want none", by)
	}
}

// TestCallsByOperation: calls that carry a SOAP operationID (govmomi sends
// the types.ID context value) are counted under it; calls without one are
// not.
func TestCallsByOperation(t *testing.T) {
	s, ca := startServer(t)
	c, err := connect(t.Context(), t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	pc := property.DefaultCollector(c)
	read := func(ctx context.Context) {
		if err := pc.RetrieveOne(ctx, c.ServiceContent.RootFolder, []string{"name"}, &mo.Folder{}); err != nil {
			t.Fatal(err)
		}
	}
	read(context.WithValue(t.Context(), types.ID{}, "op-1"))
	read(context.WithValue(t.Context(), types.ID{}, "op-1"))
	read(context.WithValue(t.Context(), types.ID{}, "op-2"))
	read(t.Context())
	got := s.CallsByOperation(c.UserAgent)
	want := map[string]map[string]int64{"op-1": {"RetrievePropertiesEx": 2}, "op-2": {"RetrievePropertiesEx": 1}}
	if len(got) != len(want) || !maps.Equal(got["op-1"], want["op-1"]) || !maps.Equal(got["op-2"], want["op-2"]) {
		t.Errorf("calls by operation: %v, want %v", got, want)
	}
}
