package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// apiserverReadyInterval is how often /readyz is asked while the API server
// starts. Nothing can be watched before it serves, so this one wait polls; it
// is ready within seconds, and a short interval adds little to that.
const apiserverReadyInterval = 100 * time.Millisecond

// waitForAPIServer returns when /readyz reports ready (all post-start hooks,
// including the RBAC bootstrap policy, have run).
func waitForAPIServer(ctx context.Context, cs kubernetes.Interface) error {
	ticker := time.NewTicker(apiserverReadyInterval)
	defer ticker.Stop()
	var last error
	notReady := func() error {
		return fmt.Errorf("kube-apiserver not ready (last /readyz: %v): %w", last, context.Cause(ctx))
	}
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return notReady() // err is only the cancellation; keep the previous answer
		}
		last = err
		if failing := failingChecks(body); failing != "" {
			// err quotes the whole verbose body; the failures suffice.
			last = fmt.Errorf("failing checks: %s", failing)
		}
		select {
		case <-ctx.Done():
			return notReady()
		case <-ticker.C:
		}
	}
}

// failingChecks lists the checks a verbose /readyz body reports as failed
// (lines like "[-]poststarthook/rbac/bootstrap-roles failed: ...").
func failingChecks(body []byte) string {
	var failed []string
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "[-]"); ok {
			failed = append(failed, strings.SplitN(name, " ", 2)[0])
		}
	}
	return strings.Join(failed, ", ")
}

// serverVersion returns the API server's gitVersion (e.g. v1.36.3).
func serverVersion(ctx context.Context, cs kubernetes.Interface) (string, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the API server version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("decoding the API server version: %w", err)
	}
	return info.GitVersion, nil
}

// waitFor watches the objects lw lists until cond is true.
func waitFor(ctx context.Context, lw cache.ListerWatcher, obj runtime.Object, cond watchtools.ConditionFunc) error {
	_, err := watchtools.UntilWithSync(ctx, lw, obj, nil, cond)
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

func listWatch[L runtime.Object](
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	modify func(*metav1.ListOptions),
) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			modify(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			modify(&o)
			return watchFn(ctx, o)
		},
	}
}

// WaitForLeaders returns once each named component holds its leader-election
// Lease in kube-system, which it takes as soon as it has started and reached
// the API server; the controller manager starts its controllers right after.
func WaitForLeaders(ctx context.Context, cs kubernetes.Interface, names ...string) error {
	pending := make(map[string]bool, len(names))
	for _, n := range names {
		pending[n] = true
	}
	leases := cs.CoordinationV1().Leases(metav1.NamespaceSystem)
	lw := listWatch(leases.List, leases.Watch, func(*metav1.ListOptions) {})
	err := waitFor(ctx, lw, &coordinationv1.Lease{}, func(ev watch.Event) (bool, error) {
		if l, ok := ev.Object.(*coordinationv1.Lease); ok && ev.Type != watch.Deleted &&
			l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			delete(pending, l.Name)
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for leader leases %v (still missing %v): %w", names, keys(pending), err)
	}
	return nil
}

// WaitForServiceAccount returns once the named ServiceAccount exists; the
// controller manager's service-account controller creates "default" in each
// namespace, and Pods cannot be created in a namespace until it exists.
func WaitForServiceAccount(ctx context.Context, cs kubernetes.Interface, namespace, name string) error {
	sas := cs.CoreV1().ServiceAccounts(namespace)
	lw := listWatch(sas.List, sas.Watch, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
	err := waitFor(ctx, lw, &corev1.ServiceAccount{}, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Added || ev.Type == watch.Modified, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitForRBAC returns once the API server authorizes a non-admin identity
// by its RBAC bindings again: kube-scheduler's bootstrap ClusterRoleBinding
// lets system:kube-scheduler list pods.
func waitForRBAC(ctx context.Context, cs kubernetes.Interface) error {
	ticker := time.NewTicker(apiserverReadyInterval)
	defer ticker.Stop()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:kube-scheduler",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"},
	}}
	for {
		r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver does not authorize by RBAC yet (last: %v, %+v): %w", err, r, context.Cause(ctx))
		case <-ticker.C:
		}
	}
}
