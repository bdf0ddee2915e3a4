// Package sandboxtest starts the sandbox for a test package: one shared
// sandbox, started by the first test that needs it and stopped when the
// package's tests end, instead of a sync.Once and a TestMain in every
// package that runs against it.
//
//	func TestMain(m *testing.M) { sandboxtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		sb := sandboxtest.Shared(t)
//		...
//	}
package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
)

// StartTimeout covers a first run that still has to build the control plane
// from source (about 10 minutes on 2 cores); later starts take seconds.
const StartTimeout = 30 * time.Minute

var (
	once      sync.Once
	shared    *sandbox.Sandbox
	sharedErr error
)

// Main runs the package's tests, stops the shared sandbox if one was
// started, and exits with the tests' code: a package's TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if err := Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
	}
	os.Exit(code)
}

// Shared returns the package's sandbox, starting it on first use (building
// the control plane first when SANDBOX_CONTROLPLANE_BIN is unset and
// nothing is cached: minutes, once). Under -short with
// SANDBOX_CONTROLPLANE_BIN unset it skips the test rather than build. A
// failed start fails every test that asks.
func Shared(tb testing.TB) *sandbox.Sandbox {
	tb.Helper()
	if os.Getenv(controlplane.BinEnv) == "" && testing.Short() {
		tb.Skipf("-short and %s unset: not building the control plane", controlplane.BinEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	sb, err := StartShared(ctx, sandbox.Options{})
	if err != nil {
		tb.Fatalf("starting the sandbox: %v", err)
	}
	return sb
}

// StartShared starts the shared sandbox with opts, unless it was started
// (or failed to start) already: then it returns that one, or that error,
// and opts are not used. acctest.Main calls it before any test runs, with
// the options its tests need.
func StartShared(ctx context.Context, opts sandbox.Options) (*sandbox.Sandbox, error) {
	once.Do(func() { shared, sharedErr = sandbox.Start(ctx, opts) })
	return shared, sharedErr
}

// Stop stops the shared sandbox if one was started. Main calls it.
func Stop() error {
	if shared == nil {
		return nil
	}
	return shared.Stop()
}

// Start starts a sandbox of the test's own with opts (another
// configuration than the shared one's) within ctx, stopped when the test
// ends.
func Start(ctx context.Context, tb testing.TB, opts sandbox.Options) *sandbox.Sandbox {
	tb.Helper()
	sb, err := sandbox.Start(ctx, opts)
	if err != nil {
		tb.Fatalf("starting a sandbox: %v", err)
	}
	tb.Cleanup(func() { _ = sb.Stop() })
	return sb
}
