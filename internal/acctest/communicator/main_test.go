// Package communicator_test proves the simulated Windows hosts with a WinRM
// client we did not write: Terraform's own communicator (remote-exec over
// WinRM, HTTPS with the sandbox CA, NTLM) run by the real Terraform CLI.
package communicator_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

func TestMain(m *testing.M) {
	acctest.MainSandboxOnly(m, "simulated Windows hosts with certificates from the sandbox's CA")
}
