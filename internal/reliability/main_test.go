package reliability_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestMain starts this package's own sandbox: the faults injected here
// (vSphere fault rules, a stopped API server, hosts that misbehave) reach
// every client of a sandbox, so they must not share one with other packages'
// tests; and a package of its own runs alongside internal/resources.
func TestMain(m *testing.M) {
	acctest.MainSandboxOnly(m, "faults injected into vcsim, the control plane and the simulated hosts")
}
