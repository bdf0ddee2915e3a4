package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Why not k8s.io/kubectl/pkg/drain (weighed at v0.36): its Helper does what
// kubectl drain does, but falls short where a Terraform apply needs more.
//   - PDB reporting: it writes each refused eviction to an io.Writer and
//     retries; when the timeout ends the drain, its error says "global
//     timeout reached" without the pods or the budgets. DrainNode returns an
//     *EvictionBlockedError naming which budget (with its numbers) blocks
//     which pods, grouped by budget.
//   - Timeouts: it sleeps between retries (time.Sleep, blind to the context)
//     and cannot tell its own timeout from the caller's; DrainNode stops at
//     once and says which of the two ended it.
//   - Refusals: its filters refuse DaemonSet, emptyDir and unmanaged pods
//     before evicting anything too, but their messages name kubectl's flags
//     (--ignore-daemonsets, --delete-emptydir-data, --force);
//     *DrainRefusedError names the drain attributes that allow them.
//   - Waits: it polls every pod once a second until it is gone; DrainNode
//     watches the Node's pods (one watch, no polling).
//   - Weight: it imports k8s.io/cli-runtime and kubectl's cmd/util, a large
//     tree this provider does not otherwise need.

// Retry intervals of an eviction a PodDisruptionBudget refuses (429): the
// first retry comes soon, since a replacement pod often becomes Ready within
// seconds; later ones back off to evictionRetryMax, kubectl's fixed interval.
const (
	evictionRetryFirst = 500 * time.Millisecond
	evictionRetryMax   = 5 * time.Second
)

// mirrorPodAnnotation marks the API server's copy of a static pod, which
// cannot be evicted (kubectl's drain skips them too).
const mirrorPodAnnotation = corev1.MirrorPodAnnotationKey

// DrainOptions tune DrainNode; the zero value is kubectl drain's defaults.
type DrainOptions struct {
	// Timeout bounds the whole drain; 0 leaves it to ctx.
	Timeout time.Duration
	// IgnoreDaemonSets leaves DaemonSet pods running (their DaemonSet would
	// recreate them at once); without it they stop the drain.
	IgnoreDaemonSets bool
	// DeleteEmptyDirData evicts pods with emptyDir volumes, losing that data;
	// without it they stop the drain.
	DeleteEmptyDirData bool
	// Force evicts pods no controller manages (nothing recreates them);
	// without it they stop the drain.
	Force bool
	// GracePeriodSeconds overrides each pod's termination grace period;
	// nil uses the pod's own.
	GracePeriodSeconds *int64
}

// DrainNode cordons the Node, then evicts every pod on it through the
// eviction API (policy/v1), so PodDisruptionBudgets are honoured: an
// eviction a budget refuses is retried until the budget allows it or the
// drain times out (the error then names the budget). It returns once the
// evicted pods are gone (a watch, not polling), unless the Node is not
// Ready: then no kubelet will confirm their deletion, and it returns once
// they are marked for deletion (like kubectl's --skip-wait-for-delete-timeout),
// so deleting an unreachable node does not hang. Pods it must not evict stop
// it before anything is evicted, with a *DrainRefusedError naming them and
// the option that allows them; mirror pods of static pods are skipped. The
// Node stays cordoned when the drain fails. A missing Node is a
// NotFoundError.
func (c *Client) DrainNode(ctx context.Context, name string, opts DrainOptions) error {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errDrainTimeout)
		defer cancel()
	}
	// Every call below survives an API server away for a moment
	// (retryTransient; the pods' wait is a watch that resumes).
	var node *corev1.Node
	err := retryTransient(ctx, func(ctx context.Context) (err error) {
		node, err = c.FindNode(ctx, name)
		return err
	})
	if IsNotFound(err) {
		return err
	}
	if err != nil {
		return c.drainFailed(ctx, name, opts, fmt.Errorf("reading the Node: %w", err))
	}
	if err := retryTransient(ctx, func(ctx context.Context) error { return c.cordon(ctx, node, true) }); err != nil {
		if IsNotFound(err) {
			return err
		}
		return c.drainFailed(ctx, name, opts, err)
	}
	var list *corev1.PodList
	err = retryTransient(ctx, func(ctx context.Context) (err error) {
		list, err = c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: podsOnNode(name)})
		return err
	})
	if err != nil {
		return c.drainFailed(ctx, name, opts, fmt.Errorf("listing its pods: %w", err))
	}
	plan := planDrain(name, list.Items, opts)
	if err := plan.refused(); err != nil {
		return err
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range plan.evict {
		wg.Go(func() {
			if err := c.evictPod(ctx, p, opts.GracePeriodSeconds); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return c.drainFailed(ctx, name, opts, errors.Join(groupBlocked(errs)...))
	}
	if !NodeIsReady(node) {
		// No kubelet confirms the deletions: the pods stay Terminating until
		// it returns, or until the Node is deleted and the pod garbage
		// collector removes them. Their workloads have replacements already.
		return nil
	}
	if err := c.waitForPodsGone(ctx, name, append(plan.evict, plan.terminating...)); err != nil {
		return c.drainFailed(ctx, name, opts, err)
	}
	return nil
}

// errDrainTimeout is the cause of a drain's own deadline, told apart from
// the caller's (a resource's delete or update timeout), which may come first.
var errDrainTimeout = errors.New("drain timeout")

func (c *Client) drainFailed(ctx context.Context, name string, opts DrainOptions, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errDrainTimeout):
		return fmt.Errorf("draining Node %q: not done within the drain timeout of %s: %w", name, opts.Timeout, err)
	case ctx.Err() != nil:
		return fmt.Errorf("draining Node %q: interrupted (%v) before the drain timeout of %s: %w", name, ctx.Err(), opts.Timeout, err)
	}
	return fmt.Errorf("draining Node %q: %w", name, err)
}

func podsOnNode(name string) string {
	return fields.OneTermEqualSelector("spec.nodeName", name).String()
}

// drainPlan sorts a Node's pods by what a drain does with them.
type drainPlan struct {
	node  string
	evict []corev1.Pod
	// terminating pods are already being deleted: waited for, not evicted.
	terminating []corev1.Pod
	// skipped pods stay: mirror pods, and DaemonSet pods with IgnoreDaemonSets.
	skipped []string
	// Pods that stop the drain, by the option that would allow them.
	daemonSet, emptyDir, unmanaged []string
}

func planDrain(node string, pods []corev1.Pod, opts DrainOptions) *drainPlan {
	plan := &drainPlan{node: node}
	for _, p := range pods {
		id := p.Namespace + "/" + p.Name
		finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		owner := metav1.GetControllerOf(&p)
		switch {
		case p.DeletionTimestamp != nil:
			plan.terminating = append(plan.terminating, p)
			continue
		case p.Annotations[mirrorPodAnnotation] != "":
			plan.skipped = append(plan.skipped, id)
			continue
		case finished:
			// A finished pod runs nothing: removing it loses nothing.
			plan.evict = append(plan.evict, p)
			continue
		case owner != nil && owner.Kind == "DaemonSet":
			if opts.IgnoreDaemonSets {
				plan.skipped = append(plan.skipped, id)
			} else {
				plan.daemonSet = append(plan.daemonSet, id)
			}
			continue
		}
		ok := true
		if !opts.DeleteEmptyDirData && slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil }) {
			plan.emptyDir = append(plan.emptyDir, id)
			ok = false
		}
		if !opts.Force && owner == nil {
			plan.unmanaged = append(plan.unmanaged, id)
			ok = false
		}
		if ok {
			plan.evict = append(plan.evict, p)
		}
	}
	return plan
}

func (p *drainPlan) refused() error {
	if len(p.daemonSet)+len(p.emptyDir)+len(p.unmanaged) == 0 {
		return nil
	}
	return &DrainRefusedError{Node: p.node, DaemonSetPods: p.daemonSet, EmptyDirPods: p.emptyDir, UnmanagedPods: p.unmanaged}
}

// DrainRefusedError lists the pods ("namespace/name") a drain stopped at
// before evicting anything, by the DrainOptions field that would allow them.
type DrainRefusedError struct {
	Node string
	// DaemonSetPods need IgnoreDaemonSets, EmptyDirPods DeleteEmptyDirData,
	// UnmanagedPods Force.
	DaemonSetPods, EmptyDirPods, UnmanagedPods []string
}

func (e *DrainRefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot drain Node %q; nothing was evicted:", e.Node)
	if len(e.DaemonSetPods) > 0 {
		fmt.Fprintf(&b, "\n- DaemonSet pods (their DaemonSet recreates them at once): %s; set ignore_daemonsets = true to leave them running", listNames(e.DaemonSetPods))
	}
	if len(e.EmptyDirPods) > 0 {
		fmt.Fprintf(&b, "\n- pods with emptyDir volumes (the data is lost when they are evicted): %s; set delete_emptydir_data = true to evict them anyway", listNames(e.EmptyDirPods))
	}
	if len(e.UnmanagedPods) > 0 {
		fmt.Fprintf(&b, "\n- pods no controller manages (nothing recreates them once evicted): %s; set force = true to evict them anyway", listNames(e.UnmanagedPods))
	}
	return b.String()
}

// evictPod evicts one pod, retrying while a PodDisruptionBudget refuses,
// until ctx ends. A pod already gone (or replaced by another of the same
// name) counts as evicted.
func (c *Client) evictPod(ctx context.Context, p corev1.Pod, grace *int64) error {
	id := p.Namespace + "/" + p.Name
	eviction := &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		DeleteOptions: &metav1.DeleteOptions{
			GracePeriodSeconds: grace,
			Preconditions:      &metav1.Preconditions{UID: &p.UID},
		},
	}
	delay := evictionRetryFirst
	var (
		budgets     string // the budgets covering the pod, read at the first refusal
		budgetsRead bool
		outageSeen  time.Time // the last time the API server did not answer
	)
	for {
		err := c.CoreV1().Pods(p.Namespace).EvictV1(ctx, eviction)
		if isTransient(err) || apierrors.IsInternalError(err) {
			outageSeen = time.Now()
		}
		switch {
		case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Conflict: the UID precondition failed, the pod was replaced.
			return nil
		case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The pod's namespace is being deleted, which deletes the pod:
			// evicted all the same, and waited for like the others
			// (kubectl's drain does the same, drain.go evictPods).
			return nil
		case forbiddenAfterOutage(err, outageSeen):
			// The API server's RBAC caches are filling again after an
			// outage: retried, as the drain's other calls are.
		case apierrors.IsTooManyRequests(err):
			if !budgetsRead {
				budgets, budgetsRead = c.budgetsFor(ctx, &p), true
			}
		case (isTransient(err) || apierrors.IsInternalError(err)) && ctx.Err() == nil:
			// The API server is away for a moment: retried like a
			// budget's refusal, from the same backoff. An API server
			// shutting down answers an eviction 500 when its own
			// loopback read of the budgets is refused (seen in the
			// sandbox's restart); the UID precondition makes a retried
			// eviction safe.
		default:
			if ctx.Err() != nil {
				return fmt.Errorf("pod %s: %w", id, ctx.Err())
			}
			return fmt.Errorf("evicting pod %s: %w", id, err)
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			if !apierrors.IsTooManyRequests(err) {
				return fmt.Errorf("evicting pod %s: the API server did not answer: %w", id, err)
			}
			return &EvictionBlockedError{Pods: []string{id}, Budgets: budgets, Err: err}
		case <-timer.C:
		}
		delay = min(2*delay, evictionRetryMax)
	}
}

// EvictionBlockedError says pods' evictions were still refused (429) when
// the drain ran out of time, and which PodDisruptionBudgets cover them.
type EvictionBlockedError struct {
	// Pods are "namespace/name", sorted.
	Pods []string
	// Budgets describes the PodDisruptionBudgets selecting the pods
	// ("default/web (minAvailable 2, 2 of 2 healthy, 0 disruptions allowed)").
	Budgets string
	// Err is the API server's last refusal.
	Err error
}

func (e *EvictionBlockedError) Error() string {
	what := "pod " + e.Pods[0]
	if len(e.Pods) > 1 {
		what = "pods " + listNames(e.Pods)
	}
	msg := fmt.Sprintf("%s could not be evicted: %s", what, statusDetail(e.Err))
	if e.Budgets != "" {
		msg += "; PodDisruptionBudget " + e.Budgets + " allows no disruption now: scale the workload up, relax the budget, or raise the drain timeout"
	}
	return msg
}

func (e *EvictionBlockedError) Unwrap() error { return e.Err }

// groupBlocked merges the EvictionBlockedErrors of pods under the same
// budgets into one, so a Deployment's ten pods make one line, not ten.
func groupBlocked(errs []error) []error {
	var out []error
	byBudgets := map[string]*EvictionBlockedError{}
	for _, err := range errs {
		var b *EvictionBlockedError
		if !errors.As(err, &b) || b.Budgets == "" {
			out = append(out, err)
			continue
		}
		if g, ok := byBudgets[b.Budgets]; ok {
			g.Pods = append(g.Pods, b.Pods...)
			slices.Sort(g.Pods)
			continue
		}
		g := &EvictionBlockedError{Pods: slices.Clone(b.Pods), Budgets: b.Budgets, Err: b.Err}
		byBudgets[b.Budgets] = g
		out = append(out, g)
	}
	return out
}

// statusDetail is the API error's message with its causes (the eviction
// API names the refusing budget in a DisruptionBudget cause).
func statusDetail(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return err.Error()
	}
	s := st.Status()
	msg := s.Message
	if s.Details != nil {
		for _, cause := range s.Details.Causes {
			if cause.Message != "" && !strings.Contains(msg, cause.Message) {
				msg += " " + cause.Message
			}
		}
	}
	return msg
}

// budgetsFor describes the PodDisruptionBudgets selecting the pod; "" when
// none does or they cannot be read (the error message then relies on the
// API server's own).
func (c *Client) budgetsFor(ctx context.Context, p *corev1.Pod) string {
	list, err := c.PolicyV1().PodDisruptionBudgets(p.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var out []string
	for _, pdb := range list.Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		rule := ""
		switch {
		case pdb.Spec.MinAvailable != nil:
			rule = "minAvailable " + pdb.Spec.MinAvailable.String() + ", "
		case pdb.Spec.MaxUnavailable != nil:
			rule = "maxUnavailable " + pdb.Spec.MaxUnavailable.String() + ", "
		}
		out = append(out, fmt.Sprintf("%s/%s (%s%d of %d healthy, %d disruptions allowed)",
			pdb.Namespace, pdb.Name, rule, pdb.Status.CurrentHealthy, pdb.Status.ExpectedPods, pdb.Status.DisruptionsAllowed))
	}
	return strings.Join(out, ", ")
}

// waitForPodsGone watches the Node's pods until none of pods (by UID)
// exists any more.
func (c *Client) waitForPodsGone(ctx context.Context, node string, pods []corev1.Pod) error {
	if len(pods) == 0 {
		return nil
	}
	pending := map[types.UID]string{}
	for _, p := range pods {
		pending[p.UID] = p.Namespace + "/" + p.Name
	}
	sel := podsOnNode(node)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	// The precondition sees the synced list: pods gone before the watch
	// started are absent from it (or present under a new UID).
	precondition := func(store cache.Store) (bool, error) {
		for uid, key := range pending {
			obj, exists, err := store.GetByKey(key)
			if err != nil {
				return false, err
			}
			if p, ok := obj.(*corev1.Pod); !exists || !ok || p.UID != uid {
				delete(pending, uid)
			}
		}
		return len(pending) == 0, nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, precondition, func(e watch.Event) (bool, error) {
		if p, ok := e.Object.(*corev1.Pod); ok && e.Type == watch.Deleted {
			delete(pending, p.UID)
		}
		return len(pending) == 0, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		left := make([]string, 0, len(pending))
		for _, key := range pending {
			left = append(left, key)
		}
		slices.Sort(left)
		return fmt.Errorf("evicted pods still terminating: %s (the kubelet deletes them once their containers stop; a finalizer or a stuck kubelet keeps them): %w", listNames(left), ctx.Err())
	}
	return fmt.Errorf("waiting for evicted pods to go: %w", err)
}
