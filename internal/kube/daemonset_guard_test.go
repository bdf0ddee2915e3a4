package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGuardOwnsSelector(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	// nodeSelector is an atomic map: managedFields name the map, never its keys.
	const selector = `{"f:spec":{"f:template":{"f:spec":{"f:nodeSelector":{}}}}}`
	cases := map[string]struct {
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		"guard applied": {[]metav1.ManagedFieldsEntry{entry("kubectl", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{}}`), entry(GuardFieldManager, metav1.ManagedFieldsOperationApply, selector)}, true},
		"someone else":  {[]metav1.ManagedFieldsEntry{entry("kubectl", metav1.ManagedFieldsOperationApply, selector)}, false},
		"guard, other field": {[]metav1.ManagedFieldsEntry{entry(GuardFieldManager, metav1.ManagedFieldsOperationApply,
			`{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{}}}}}`)}, false},
		"guard by update": {[]metav1.ManagedFieldsEntry{entry(GuardFieldManager, metav1.ManagedFieldsOperationUpdate, selector)}, false},
		"guard released":  {[]metav1.ManagedFieldsEntry{entry(GuardFieldManager, metav1.ManagedFieldsOperationApply, `{}`)}, false},
		"no entries":      {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{ManagedFields: tc.entries}}
			if got := GuardOwnsSelector(ds); got != tc.want {
				t.Errorf("GuardOwnsSelector = %v, want %v", got, tc.want)
			}
		})
	}
}
