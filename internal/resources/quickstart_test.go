package resources_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccQuickstart_flannel: examples/quickstart as it is (cni = "flannel")
// joins its two nodes, seed 000's IIS workload is reached through its
// Service from a Linux pod and a Windows pod, destroy leaves nothing
// (acctest.Quickstart; the calico row is in internal/resources/calicoacc).
func TestAccQuickstart_flannel(t *testing.T) { acctest.Quickstart(t, "flannel") }
