// Package antreaacc_test holds the acceptance tests of the antrea
// networking mode: they need a sandbox whose cluster runs Antrea's Linux
// side, which the package's shared sandbox is (internal/resources' runs
// flannel's side).
package antreaacc_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

func TestMain(m *testing.M) { acctest.MainWith(m, sandbox.Options{CNI: linuxnode.CNIAntrea}) }
