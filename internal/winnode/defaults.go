package winnode

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// DefaultDrain is how a node is drained before it is deleted, replaced or
// power-cycled unless its configuration says otherwise: evictions may wait
// ten minutes for PodDisruptionBudgets, and DaemonSet pods stay (their
// DaemonSet would recreate them at once), as with kubectl drain
// --ignore-daemonsets; pods with emptyDir data or without a controller stop
// the drain.
func DefaultDrain() kube.DrainOptions {
	return kube.DrainOptions{Timeout: 10 * time.Minute, IgnoreDaemonSets: true}
}

// DefaultTaint is the taint a node registers with unless its configuration
// says otherwise: os=windows:NoSchedule keeps Linux pods off it, and a
// Windows RuntimeClass tolerates it.
func DefaultTaint() corev1.Taint {
	return corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}
}
