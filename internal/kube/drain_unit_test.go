package kube

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func drainPod(name, ownerKind string, edit func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if ownerKind != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{Kind: ownerKind, Name: "owner", Controller: &yes}}
	}
	if edit != nil {
		edit(&p)
	}
	return p
}

func names(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func TestPlanDrain(t *testing.T) {
	emptyDir := func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	now := metav1.Now()
	pods := []corev1.Pod{
		drainPod("web", "ReplicaSet", nil),
		drainPod("ds", "DaemonSet", nil),
		drainPod("bare", "", nil),
		drainPod("cache", "ReplicaSet", emptyDir),
		drainPod("bare-scratch", "", emptyDir),
		drainPod("mirror", "Node", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		drainPod("done", "", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded; emptyDir(p) }),
		drainPod("leaving", "", func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		// A controller reference that is not a controller: still unmanaged.
		drainPod("owned-not-controlled", "", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "x"}} }),
	}

	plan := planDrain("win-0", pods, DrainOptions{})
	if got := names(plan.evict); !slices.Equal(got, []string{"ns/web", "ns/done"}) {
		t.Errorf("evict %v", got)
	}
	if got := names(plan.terminating); !slices.Equal(got, []string{"ns/leaving"}) {
		t.Errorf("terminating %v", got)
	}
	if !slices.Equal(plan.skipped, []string{"ns/mirror"}) || !slices.Equal(plan.daemonSet, []string{"ns/ds"}) ||
		!slices.Equal(plan.emptyDir, []string{"ns/cache", "ns/bare-scratch"}) ||
		!slices.Equal(plan.unmanaged, []string{"ns/bare", "ns/bare-scratch", "ns/owned-not-controlled"}) {
		t.Errorf("skipped %v, daemonSet %v, emptyDir %v, unmanaged %v", plan.skipped, plan.daemonSet, plan.emptyDir, plan.unmanaged)
	}
	err := plan.refused()
	var refused *DrainRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("refused() = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{`cannot drain Node "win-0"`, "ns/ds; set ignore_daemonsets = true", "ns/cache, ns/bare-scratch; set delete_emptydir_data = true", "ns/bare, ns/bare-scratch, ns/owned-not-controlled; set force = true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	plan = planDrain("win-0", pods, DrainOptions{IgnoreDaemonSets: true, DeleteEmptyDirData: true, Force: true})
	if err := plan.refused(); err != nil {
		t.Errorf("with every option: %v", err)
	}
	if got := names(plan.evict); !slices.Equal(got, []string{"ns/web", "ns/bare", "ns/cache", "ns/bare-scratch", "ns/done", "ns/owned-not-controlled"}) {
		t.Errorf("evict %v", got)
	}
	if !slices.Equal(plan.skipped, []string{"ns/ds", "ns/mirror"}) {
		t.Errorf("skipped %v", plan.skipped)
	}
}

func TestGroupBlocked(t *testing.T) {
	refusal := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	refusal.ErrStatus.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "DisruptionBudget", Message: "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"}}}
	other := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("no"))
	errs := groupBlocked([]error{
		&EvictionBlockedError{Pods: []string{"ns/web-2"}, Budgets: "ns/web-pdb (minAvailable 2)", Err: refusal},
		other,
		&EvictionBlockedError{Pods: []string{"ns/web-1"}, Budgets: "ns/web-pdb (minAvailable 2)", Err: refusal},
		&EvictionBlockedError{Pods: []string{"ns/db-0"}, Budgets: "ns/db-pdb (maxUnavailable 0)", Err: refusal},
	})
	if len(errs) != 3 {
		t.Fatalf("groupBlocked = %v", errs)
	}
	msg := errs[0].Error()
	for _, want := range []string{"pods ns/web-1, ns/web-2 could not be evicted", "The disruption budget web-pdb needs 2 healthy pods", "PodDisruptionBudget ns/web-pdb (minAvailable 2) allows no disruption"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if !strings.HasPrefix(errs[2].Error(), "pod ns/db-0 could not") {
		t.Errorf("single pod: %v", errs[2])
	}
	if !apierrors.IsTooManyRequests(errs[0]) {
		t.Error("the grouped error does not wrap the refusal")
	}
}
