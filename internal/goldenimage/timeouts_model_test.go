package goldenimage

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// TestSysprepPowerOffWaitAboveTheModelsTail: the wait for sysprep's
// power-off outlasts its generalize at the model's tail.
func TestSysprepPowerOffWaitAboveTheModelsTail(t *testing.T) {
	if tail := latency.New(1, latency.Tail).Real(latency.SysprepGeneralize); sysprepPowerOffWait <= tail {
		t.Errorf("sysprepPowerOffWait %s, not above sysprep's generalize at the tail %s", sysprepPowerOffWait, tail)
	}
}
