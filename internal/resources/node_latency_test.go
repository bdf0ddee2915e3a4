package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/resources"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// The create defaults the test scales: the resources' own (export_timeouts_test.go).
const (
	nodeCreateDefault  = resources.NodeCreateTimeoutForTest
	imageCreateDefault = resources.GoldenImageCreateTimeoutForTest
	// sandboxOwnTime is the sandbox's own work, which no factor scales: a
	// golden image build and a join simulated on 2 shared cores under
	// load (a minute or two without the model).
	sandboxOwnTime = 3 * time.Minute
)

// TestAccNodeLatencyTail: with the sandbox playing every operation at its
// tail (the 99th percentile: a 15-minute customized first boot, the
// slowest service starts, registration and image pull, VMware Tools'
// slowest pace), scaled by the factor, a golden image and a node whose
// create timeouts are the defaults scaled by the same factor (plus the
// sandbox's own, unscaled, time) are made: nothing of the provider's
// times out before a slow but healthy Windows is done.
//
// It runs only with the model on at the tail:
//
//	SANDBOX_LATENCY_FACTOR=20 SANDBOX_LATENCY_QUANTILE=p99 make testacc RUN=TestAccNodeLatencyTail PKGS=./internal/resources/...
func TestAccNodeLatencyTail(t *testing.T) {
	m, err := latency.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !m.On() || m.Quantile != latency.Tail {
		t.Skipf("plays the latency model's tail: set %s (e.g. 20) and %s=p99", latency.EnvFactor, latency.EnvQuantile)
	}
	acctest.RequireSandbox(t, "the latency model plays in the in-process sandbox")
	scaled := func(d time.Duration) string {
		return (time.Duration(float64(d)/m.Factor) + sandboxOwnTime).Round(time.Second).String()
	}
	image := acctest.Name("img")
	node := fmt.Sprintf("win-%d", acctest.Seq())
	config := acctest.NodeConfig(image, []string{node}, fmt.Sprintf("  timeouts {\n    create = %q\n  }\n", scaled(nodeCreateDefault)))
	config = strings.Replace(config, "resource \"windows_golden_image\" \"test\" {\n",
		fmt.Sprintf("resource \"windows_golden_image\" \"test\" {\n  timeouts {\n    create = %q\n  }\n", scaled(imageCreateDefault)), 1)
	played := m.Of(latency.FirstBootCustomized)
	var begin time.Time
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t); begin = time.Now() },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNodesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("windows_node.n0", tfjsonpath.New("ready"), knownvalue.Bool(true)),
			},
			Check: func(*terraform.State) error {
				// The tail played: the apply took at least the node's
				// customized first boot at the tail, scaled.
				if took := time.Since(begin); took < played {
					return fmt.Errorf("the apply took %s, less than the model's first boot at the tail (%s): the model did not play", took, played)
				}
				n, err := acctest.Kube(t).FindNode(context.Background(), node)
				if err != nil {
					return err
				}
				t.Logf("node %s Ready after %s (timeouts: image %s, node %s; the tail's first boot alone %s)",
					n.Name, time.Since(begin).Round(time.Second), scaled(imageCreateDefault), scaled(nodeCreateDefault), played)
				return nil
			},
		}},
	})
}
