package kubeletsim

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leaseLoop keeps kube-node-lease/<node> renewed every quarter of its duration.
func (n *nodeAgent) leaseLoop(ctx context.Context) {
	dur := n.k.settings.LeaseDurationSeconds
	interval := time.Duration(float64(dur) * 0.25 * float64(time.Second))
	for {
		if err := n.renewLease(ctx, dur); err != nil && ctx.Err() == nil {
			n.k.log.Error("controller.go:145", err, "Failed to ensure lease exists, will retry", "interval", interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (n *nodeAgent) renewLease(ctx context.Context, dur int32) error {
	leases := n.client.CoordinationV1().Leases(kubeNodeLeaseNS)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		n.mu.Lock()
		uid := n.uid
		n.mu.Unlock()
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: kubeNodeLeaseNS},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &n.name, LeaseDurationSeconds: &dur, RenewTime: &now,
			},
		}
		if uid != "" {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.name, UID: uid}}
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &n.name, &dur, &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
