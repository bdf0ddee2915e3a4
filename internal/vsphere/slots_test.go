package vsphere_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// newTimedEnv is newEnv against a vcsim playing vCenter's time at factor,
// with a client holding units of each host's provisioning units.
func newTimedEnv(t *testing.T, factor float64, units int) (*env, *latency.Model) {
	t.Helper()
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bundle.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	model := latency.New(factor, latency.Median)
	srv, err := vcsim.Start(context.Background(), vcsim.Options{
		Certificate: cert, RootCAs: bundle.CA.Pool(), User: "administrator@vsphere.local", Password: "s3cret-Passw0rd", Latency: model,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := vsphere.NewClient(context.Background(), vsphere.Config{
		Server: srv.Server, User: srv.User, Password: srv.Password, CAFile: bundle.CAFile, ProvisioningUnitsPerHost: units,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &env{srv: srv, c: c, folder: srv.Folder, pool: srv.ResourcePoolID, datastore: srv.DatastoreID, network: srv.NetworkID}, model
}

// cloneMany clones n nodes of one template at once and returns their
// errors and how long they took together.
func cloneMany(ctx context.Context, t *testing.T, e *env, prefix string, n int) ([]error, time.Duration) {
	t.Helper()
	specs := make([]vsphere.CloneSpec, n)
	for i := range specs {
		specs[i] = e.cloneSpec(t, fmt.Sprintf("%s-%d", prefix, i), "")
	}
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range specs {
		wg.Go(func() { _, errs[i] = e.c.Clone(ctx, specs[i]) })
	}
	wg.Wait()
	return errs, time.Since(start)
}

// The provider clones no more at once on a host than it has provisioning
// units: six full clones of one template run four, then two, and vCenter
// never has to queue one. The wait for a slot and the clone task's
// progress are logged.
func TestClonesRespectTheHostsProvisioningUnits(t *testing.T) {
	defer vsphere.SetProgressInterval(vsphere.SetProgressInterval(200 * time.Millisecond))
	e, model := newTimedEnv(t, 100, 0) // a full clone: 1.2 s; the default 16 units
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(t.Context(), &logs)
	errs, took := cloneMany(ctx, t, e, "limited", 6)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
	}
	clone := model.Of(latency.CloneFull)
	if took < 2*clone {
		t.Errorf("6 full clones of one template took %s: the provider ran more than 4 at once (want two rounds of %s)", took, clone)
	}
	if q := e.srv.QueuedTasks(); q != 0 {
		t.Errorf("vCenter queued %d clone tasks: the provider sent more than the host's units", q)
	}
	out := logs.String()
	for _, want := range []string{
		`"@message":"waiting for a provisioning slot on ESXi host`,
		`"@message":"waiting on vCenter for Task task-`, `"method":"CloneVM_Task"`, `"object":"win2022-base"`, `"state":"running"`, `"progress_percent"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %s:\n%s", want, out)
		}
	}
}

// Told to send more (no limit), the provider lets vCenter queue the clones
// beyond the host's units, waits for each queued task and fails none.
func TestQueuedClonesAreWaitedForNotFailed(t *testing.T) {
	defer vsphere.SetProgressInterval(vsphere.SetProgressInterval(200 * time.Millisecond))
	e, _ := newTimedEnv(t, 30, -1) // a full clone: 4 s, time for all six to reach vCenter while the first run
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(t.Context(), &logs)
	errs, _ := cloneMany(ctx, t, e, "queued", 6)
	for i, err := range errs {
		if err != nil {
			t.Errorf("clone %d failed: %v; a queued task must be waited for", i, err)
		}
	}
	if q := e.srv.QueuedTasks(); q != 2 {
		t.Errorf("vCenter queued %d clone tasks, want 2 (6 full clones, 4 per host)", q)
	}
	if !strings.Contains(logs.String(), `"state":"queued"`) {
		t.Errorf("no progress line names a queued task:\n%s", logs.String())
	}
}
