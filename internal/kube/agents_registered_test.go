package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRegisteredByKubeletAt: the earliest transition among the kubelet's
// own conditions, not a condition another component set (flannel's
// NetworkUnavailable, the node lifecycle controller's).
func TestRegisteredByKubeletAt(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(1_800_000_000+int64(s), 0)) }
	node := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeNetworkUnavailable, Reason: "FlannelIsUp", LastTransitionTime: at(-50)},
		{Type: corev1.NodeMemoryPressure, Reason: "KubeletHasSufficientMemory", LastTransitionTime: at(0)},
		{Type: corev1.NodeReady, Reason: "KubeletReady", LastTransitionTime: at(7)},
	}}}
	if got := RegisteredByKubeletAt(node); !got.Equal(at(0).Time) {
		t.Errorf("RegisteredByKubeletAt = %v, want %v", got, at(0).Time)
	}
	if got := RegisteredByKubeletAt(&corev1.Node{}); !got.IsZero() {
		t.Errorf("a Node without conditions: %v, want the zero time", got)
	}
}
