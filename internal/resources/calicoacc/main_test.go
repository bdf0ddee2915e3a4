// Package calicoacc_test holds the acceptance tests of the calico
// networking mode: they need a sandbox whose cluster runs Calico, which the
// package's shared sandbox is (internal/resources' runs flannel's side).
package calicoacc_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

func TestMain(m *testing.M) { acctest.MainWith(m, sandbox.Options{CNI: linuxnode.CNICalico}) }
