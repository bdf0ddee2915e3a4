package kube_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestMarkCordonedForPowerCycle checks the power-cycle record against the
// API server: set and removed without touching others' annotations, and
// kept by ApplyNodeSettings (another field manager), which must not take
// it away between the drain and the uncordon.
func TestMarkCordonedForPowerCycle(t *testing.T) {
	_, c := cluster(t)
	ctx := t.Context()
	const name = "win-cordon-record"
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"team": "ops"}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteNode(ctx, name) })

	if err := c.MarkCordonedForPowerCycle(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplyNodeSettings(ctx, name, kube.NodeSettings{Labels: map[string]string{"example.com/pool": "a"}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.FindNode(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if !kube.CordonedForPowerCycle(got) || got.Annotations["team"] != "ops" {
		t.Errorf("after marking and applying settings: annotations %v, want the record and team=ops", got.Annotations)
	}

	if err := c.MarkCordonedForPowerCycle(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	if got, err = c.FindNode(ctx, name); err != nil {
		t.Fatal(err)
	}
	if kube.CordonedForPowerCycle(got) || got.Annotations["team"] != "ops" {
		t.Errorf("after unmarking: annotations %v, want only team=ops", got.Annotations)
	}
	if err := c.MarkCordonedForPowerCycle(ctx, "win-no-such-node", true); !kube.IsNotFound(err) {
		t.Errorf("marking a missing Node: %v, want a NotFoundError", err)
	}
}
