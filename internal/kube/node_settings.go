package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// NodeFieldManager is the server-side apply field manager of the Node
// settings windows_node owns (ApplyNodeSettings), kept apart from
// FieldManager so that other changes this provider makes to Nodes (cordon)
// never add to or take from that set.
const NodeFieldManager = "terraform-provider-windows-node"

// OwnedTaintsAnnotation records, on the Node, the taints ApplyNodeSettings
// set last ("key:Effect" separated by commas). spec.taints is an atomic list
// for server-side apply (+listType=atomic): managedFields can only say who
// wrote the whole list, never who owns one taint, so this annotation is how
// a taint dropped from the configuration is told from one someone else set.
const OwnedTaintsAnnotation = "windows.wincluster.io/owned-taints"

// NodeSettings are the parts of a Node windows_node owns.
type NodeSettings struct {
	// ProviderID is spec.providerID ("vsphere://<BIOS UUID>"). It can be set
	// once: a Node that has another one cannot take this one. "" leaves
	// whatever the Node has.
	ProviderID string
	// Labels this provider owns. Labels others set (the kubelet, users) are
	// left alone; one dropped from here is removed unless someone else also
	// set it (server-side apply ownership).
	Labels map[string]string
	// Taints this provider owns, identified by key and effect. Taints others
	// set are left alone; one dropped from here is removed.
	Taints []corev1.Taint
	// VM is the node's VM as VMAnnotation records it (NodeVM); "" keeps
	// what the Node has. Every apply also sets LabelManagedBy to
	// FieldManager: together they are how a later run tells a Node this
	// provider joined, and on which VM, from one of the same name that is
	// someone else's.
	VM string
}

// VMAnnotation names the VM a Node was joined on: "<vCenter instance
// UUID>/<managed object id>" (NodeVM). A managed object id is unique within
// one vCenter only, so the vCenter is part of it: a Node of another vCenter
// never names a VM of this one.
const VMAnnotation = "windows.wincluster.io/vm"

// NodeVM is VMAnnotation's value for a VM of a vCenter.
func NodeVM(vcenterUUID, vmID string) string { return vcenterUUID + "/" + vmID }

// ApplyNodeSettings sets the Node's providerID, labels and taints as s says
// with a server-side apply under NodeFieldManager, and returns the updated
// Node. The write carries the resourceVersion it was computed from, so a
// concurrent change (a taint added by the node lifecycle controller) makes it
// retry from a fresh read instead of being overwritten. A missing Node is a
// NotFoundError.
func (c *Client) ApplyNodeSettings(ctx context.Context, name string, s NodeSettings) (*corev1.Node, error) {
	var updated *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.FindNode(ctx, name)
		if err != nil {
			return err
		}
		patch, err := nodeSettingsPatch(n, s)
		if err != nil {
			return err
		}
		force := true
		updated, err = c.CoreV1().Nodes().Patch(ctx, name, types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: NodeFieldManager, Force: &force})
		return notFoundOr(err, "Node", name)
	})
	if err != nil {
		if IsNotFound(err) {
			return nil, err
		}
		return nil, fmt.Errorf("setting providerID, labels and taints of Node %q: %w", name, err)
	}
	return updated, nil
}

// nodeApply is the apply configuration of ApplyNodeSettings. It is written
// out (not client-go's NodeApplyConfiguration) because removing the last
// taint must send an empty list, which the generated type omits.
type nodeApply struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Metadata   nodeApplyMeta `json:"metadata"`
	Spec       nodeApplySpec `json:"spec"`
}

type nodeApplyMeta struct {
	Name            string            `json:"name"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

type nodeApplySpec struct {
	ProviderID string          `json:"providerID,omitempty"`
	Taints     *[]corev1.Taint `json:"taints,omitempty"`
}

// nodeSettingsPatch computes the apply configuration that makes n match s.
func nodeSettingsPatch(n *corev1.Node, s NodeSettings) ([]byte, error) {
	providerID := s.ProviderID
	switch {
	case providerID == "":
		// Keep the Node's (co-owning it changes nothing: it is immutable).
		providerID = n.Spec.ProviderID
	case n.Spec.ProviderID != "" && n.Spec.ProviderID != providerID:
		return nil, fmt.Errorf("the Node already has providerID %q and cannot take %q: spec.providerID cannot change once set; delete the Node so that its kubelet registers it again, or keep the existing value", n.Spec.ProviderID, providerID)
	}
	if err := checkTaints(s.Taints); err != nil {
		return nil, err
	}
	a := nodeApply{
		APIVersion: "v1", Kind: "Node",
		Metadata: nodeApplyMeta{Name: n.Name, ResourceVersion: n.ResourceVersion},
		Spec:     nodeApplySpec{ProviderID: providerID},
	}
	a.Metadata.Labels = maps.Clone(s.Labels)
	if a.Metadata.Labels == nil {
		a.Metadata.Labels = map[string]string{}
	}
	a.Metadata.Labels[LabelManagedBy] = FieldManager
	a.Metadata.Annotations = map[string]string{}
	if len(s.Taints) > 0 {
		a.Metadata.Annotations[OwnedTaintsAnnotation] = formatTaintKeys(s.Taints)
	}
	// An apply that leaves the VM out keeps the Node's (a pool's label
	// change): with server-side apply, a field left out is a field removed.
	if vm := cmp.Or(s.VM, n.Annotations[VMAnnotation]); vm != "" {
		a.Metadata.Annotations[VMAnnotation] = vm
	}
	if len(n.Spec.Taints) > 0 || len(s.Taints) > 0 {
		taints := mergeTaints(n.Spec.Taints, parseTaintKeys(n.Annotations[OwnedTaintsAnnotation]), s.Taints)
		a.Spec.Taints = &taints
	}
	return json.Marshal(a)
}

// taintKey identifies a taint: a Node has at most one per key and effect.
type taintKey struct {
	Key    string
	Effect corev1.TaintEffect
}

func keyOf(t corev1.Taint) taintKey { return taintKey{t.Key, t.Effect} }

func (k taintKey) String() string { return k.Key + ":" + string(k.Effect) }

func checkTaints(taints []corev1.Taint) error {
	seen := map[taintKey]bool{}
	for _, t := range taints {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", t.ToString(), t.Effect)
		}
		k := keyOf(t)
		if seen[k] {
			return fmt.Errorf("two taints with key %q and effect %s: a Node holds one taint per key and effect", t.Key, t.Effect)
		}
		seen[k] = true
	}
	return nil
}

// mergeTaints returns current without the taints we set before (owned) and
// with ours (want) in place of any of the same key and effect, keeping
// others' taints as they are and in their order.
func mergeTaints(current []corev1.Taint, owned []taintKey, want []corev1.Taint) []corev1.Taint {
	wanted := map[taintKey]bool{}
	for _, t := range want {
		wanted[keyOf(t)] = true
	}
	out := make([]corev1.Taint, 0, len(current)+len(want))
	for _, t := range current {
		if k := keyOf(t); !wanted[k] && !slices.Contains(owned, k) {
			out = append(out, t)
		}
	}
	for _, t := range want {
		// An unchanged taint keeps its timeAdded, so re-applying the same
		// settings changes nothing.
		i := slices.IndexFunc(current, func(c corev1.Taint) bool { return keyOf(c) == keyOf(t) && c.Value == t.Value })
		if i >= 0 {
			out = append(out, current[i])
			continue
		}
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: t.TimeAdded})
	}
	return out
}

func formatTaintKeys(taints []corev1.Taint) string {
	keys := make([]string, len(taints))
	for i, t := range taints {
		keys[i] = keyOf(t).String()
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// parseTaintKeys reads OwnedTaintsAnnotation; entries it cannot read are
// ignored (so a hand-edited annotation never removes a taint it does not name).
func parseTaintKeys(s string) []taintKey {
	var keys []taintKey
	for entry := range strings.SplitSeq(s, ",") {
		key, effect, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if ok && key != "" && effect != "" {
			keys = append(keys, taintKey{key, corev1.TaintEffect(effect)})
		}
	}
	return keys
}
