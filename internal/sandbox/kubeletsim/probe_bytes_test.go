package kubeletsim

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// The benchmarks' critical path (latency.NodeCreate) counts the network
// probe's first agnhost pull by latency.AgnhostImageBytes: the size this
// simulator times the pull by.
func TestAgnhostBytesMatchTheCriticalPath(t *testing.T) {
	if got := servedImageBytes[agnhostRepository]; got != latency.AgnhostImageBytes {
		t.Fatalf("kubeletsim times agnhost's pull by %d bytes, latency.AgnhostImageBytes says %d: keep them equal", got, int64(latency.AgnhostImageBytes))
	}
}
