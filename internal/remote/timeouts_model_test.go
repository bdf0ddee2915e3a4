package remote

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// TestPacingAgainstTheModel: a reconnect outlasts the longest restart of
// the model's tail (the one completing a cumulative update), and no two
// polls of a guest process come closer than VMware Tools tolerates at the
// tail (vix error 3016 below it: govmomi#759).
func TestPacingAgainstTheModel(t *testing.T) {
	m := latency.New(1, latency.Tail)
	for _, op := range []latency.Op{latency.WindowsRestart, latency.UpdateRestart, latency.WindowsBoot} {
		if DefaultConnectTimeout <= m.Real(op) {
			t.Errorf("DefaultConnectTimeout %s, not above %s's tail %s", DefaultConnectTimeout, op, m.Real(op))
		}
	}
	if tail := m.Real(latency.ProcessPollInterval); processPollInterval <= tail {
		t.Errorf("processPollInterval %s, not above VMware Tools' tail interval %s", processPollInterval, tail)
	}
}
