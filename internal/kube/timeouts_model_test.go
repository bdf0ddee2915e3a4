package kube

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// TestProbeTimeoutAboveTheModelsTail: one probe outlasts a first pull of
// agnhost on a Windows node at the model's tail (150 MB, kubeletsim's
// servedImageBytes, an estimate) and the pod's status sync.
func TestProbeTimeoutAboveTheModelsTail(t *testing.T) {
	m := latency.New(1, latency.Tail)
	tail := m.Move(latency.ImagePull, 150e6) + m.Real(latency.KubeletStatusUpdate)
	if probeTimeout <= tail {
		t.Errorf("probeTimeout %s, not above agnhost's first pull and a sync at the tail %s", probeTimeout, tail)
	}
}
