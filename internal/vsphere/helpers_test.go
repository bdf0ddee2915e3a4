package vsphere_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vmware/govmomi/vim25/soap"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// env is a vcsim with a logged-in client whose round trips are counted.
type env struct {
	srv     *vcsim.Server
	c       *vsphere.Client
	counter *counter
	caFile  string
	// Placement of the sandbox inventory.
	folder, pool, datastore, network string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	srv, caFile := startVCSim(t)
	c, err := vsphere.NewClient(context.Background(), vsphere.Config{Server: srv.Server, User: srv.User, Password: srv.Password, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close) // before the server's (cleanups run last first)
	cnt := &counter{rt: c.Client.Client.RoundTripper, calls: map[string]int{}}
	c.Client.Client.RoundTripper = cnt
	return &env{srv: srv, c: c, counter: cnt, caFile: caFile, folder: srv.Folder, pool: srv.ResourcePoolID, datastore: srv.DatastoreID, network: srv.NetworkID}
}

// counter counts SOAP round trips by method.
type counter struct {
	rt    soap.RoundTripper
	n     atomic.Int64
	mu    sync.Mutex
	calls map[string]int
	// onCall, when set, is told each method before its request is sent.
	onCall func(method string)
}

func (c *counter) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	c.n.Add(1)
	c.mu.Lock()
	c.calls[methodName(req)]++
	onCall := c.onCall
	c.mu.Unlock()
	if onCall != nil {
		onCall(methodName(req))
	}
	return c.rt.RoundTrip(ctx, req, res)
}

func (c *counter) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.calls
	c.calls = map[string]int{}
	c.n.Store(0)
	return old
}

func methodName(req soap.HasFault) string {
	s := fmt.Sprintf("%T", req)
	s = strings.TrimPrefix(s, "*methods.")
	return strings.TrimSuffix(s, "Body")
}
