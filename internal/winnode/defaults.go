package winnode

import (
	"time"

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
