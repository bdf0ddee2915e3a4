package kube_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestApplyNodeSettings checks ownership on a Node the kubelet registered:
// labels and taints others set (the kubelet, an Update by "ops-team", an
// apply by "other-applier") survive every apply; ours change and go.
func TestApplyNodeSettings(t *testing.T) {
	s, c := cluster(t)
	ctx := t.Context()
	const name = "win-settings"
	const providerID = "vsphere://4210f7c2-5d2e-6c35-bd31-2a6f0c1e9a11"
	joinNode(t, s, c, name, map[string]string{"example.com/pool": "settings"})

	// Someone else's label and taint, written with an update...
	n, err := c.FindNode(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["team"] = "ops"
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "ops", Effect: corev1.TaintEffectPreferNoSchedule})
	if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "ops-team"}); err != nil {
		t.Fatal(err)
	}
	// ... and another label by another server-side applier.
	force := true
	if _, err := c.CoreV1().Nodes().Patch(ctx, name, types.ApplyPatchType,
		[]byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"`+name+`","labels":{"applied":"yes"}}}`),
		metav1.PatchOptions{FieldManager: "other-applier", Force: &force}); err != nil {
		t.Fatal(err)
	}
	others := map[string]string{
		"team": "ops", "applied": "yes", "example.com/pool": "settings", "kubernetes.io/hostname": name, "kubernetes.io/os": "windows",
	}
	othersTaint := "dedicated=ops:PreferNoSchedule"

	n = apply(t, c, name, kube.NodeSettings{
		ProviderID: providerID,
		Labels:     map[string]string{"example.com/a": "1", "example.com/b": "2", "node.kubernetes.io/windows-build": "10.0.20348"},
		Taints: []corev1.Taint{
			{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule},
			{Key: "example.com/t", Value: "x", Effect: corev1.TaintEffectNoExecute},
		},
	})
	if n.Spec.ProviderID != providerID {
		t.Errorf("providerID %q", n.Spec.ProviderID)
	}
	expectLabels(t, n, others, map[string]string{"example.com/a": "1", "example.com/b": "2"}, nil)
	expectTaints(t, n, othersTaint, "os=windows:NoSchedule", "example.com/t=x:NoExecute")
	if !hasApplyEntry(n) {
		t.Errorf("no Apply entry by %s in managedFields", kube.NodeFieldManager)
	}

	// A taint someone adds after ours: spec.taints is an atomic list for
	// server-side apply, so only the merge keeps it.
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "late", Value: "1", Effect: corev1.TaintEffectNoSchedule})
	if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{FieldManager: "ops-team"}); err != nil {
		t.Fatal(err)
	}

	// Drop a label and a taint, change a taint's value.
	settings := kube.NodeSettings{
		ProviderID: providerID,
		Labels:     map[string]string{"example.com/a": "1"},
		Taints:     []corev1.Taint{{Key: "example.com/t", Value: "y", Effect: corev1.TaintEffectNoExecute}},
	}
	n = apply(t, c, name, settings)
	// windows-build stays: the kubelet set it too (shared ownership).
	expectLabels(t, n, others, map[string]string{"example.com/a": "1", "node.kubernetes.io/windows-build": "10.0.20348"}, []string{"example.com/b"})
	expectTaints(t, n, othersTaint, "late=1:NoSchedule", "example.com/t=y:NoExecute")

	t.Run("idempotent", func(t *testing.T) {
		again := apply(t, c, name, settings)
		if again.ResourceVersion != n.ResourceVersion {
			t.Errorf("re-applying the same settings changed the Node: resourceVersion %s -> %s", n.ResourceVersion, again.ResourceVersion)
		}
	})

	t.Run("providerID is immutable", func(t *testing.T) {
		bad := settings
		bad.ProviderID = "vsphere://00000000-0000-0000-0000-000000000000"
		_, err := c.ApplyNodeSettings(ctx, name, bad)
		if err == nil || !strings.Contains(err.Error(), "cannot change once set") || !strings.Contains(err.Error(), providerID) {
			t.Fatalf("err = %v, want the providerID conflict naming %s", err, providerID)
		}
		keep := settings
		keep.ProviderID = ""
		if n := apply(t, c, name, keep); n.Spec.ProviderID != providerID {
			t.Errorf("an empty ProviderID changed it to %q", n.Spec.ProviderID)
		}
	})

	t.Run("release everything", func(t *testing.T) {
		n := apply(t, c, name, kube.NodeSettings{})
		expectLabels(t, n, others, nil, []string{"example.com/a", "example.com/b"})
		expectTaints(t, n, othersTaint, "late=1:NoSchedule")
		if _, ok := n.Annotations[kube.OwnedTaintsAnnotation]; ok {
			t.Errorf("annotation %s left behind", kube.OwnedTaintsAnnotation)
		}
		if n.Spec.ProviderID != providerID {
			t.Errorf("providerID %q", n.Spec.ProviderID)
		}
	})

	t.Run("missing node", func(t *testing.T) {
		_, err := c.ApplyNodeSettings(ctx, "win-absent", settings)
		if !kube.IsNotFound(err) {
			t.Fatalf("err = %v, want a NotFoundError", err)
		}
	})
}

func apply(t *testing.T, c *kube.Client, name string, s kube.NodeSettings) *corev1.Node {
	t.Helper()
	n, err := c.ApplyNodeSettings(t.Context(), name, s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// expectLabels checks that the Node has every label of others and want and
// none of gone.
func expectLabels(t *testing.T, n *corev1.Node, others, want map[string]string, gone []string) {
	t.Helper()
	for _, m := range []map[string]string{others, want} {
		for k, v := range m {
			if got, ok := n.Labels[k]; !ok || got != v {
				t.Errorf("label %s = %q (present %v), want %q", k, got, ok, v)
			}
		}
	}
	for _, k := range gone {
		if v, ok := n.Labels[k]; ok {
			t.Errorf("label %s=%s should be gone", k, v)
		}
	}
}

// expectTaints checks the Node's taints, as key=value:Effect, in any order.
func expectTaints(t *testing.T, n *corev1.Node, want ...string) {
	t.Helper()
	var got []string
	for _, tn := range n.Spec.Taints {
		got = append(got, tn.ToString())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("taints %v, want %v", got, want)
	}
}

func hasApplyEntry(n *corev1.Node) bool {
	for _, e := range n.ManagedFields {
		if e.Manager == kube.NodeFieldManager && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
