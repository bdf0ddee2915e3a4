package leakcheck_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestMain starts this package's own sandbox: the 20-node apply runs
// alone in it, and the goroutine check after it sees this run's only.
func TestMain(m *testing.M) {
	acctest.MainSandboxOnly(m, "the provider's goroutines after a 20-node apply in a sandbox of its own")
}
