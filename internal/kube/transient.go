package kube

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// isTransient reports whether err says the API server was away or
// overloaded for a moment, not that it refused the request: the connection
// refused, reset or cut (an API server restarting, a load balancer moving
// it), a timeout, or a 503 or server timeout, which ask the client to come
// back. A 429 is not among them: the eviction API answers it for a
// PodDisruptionBudget, which evictPod handles apart. A 500 is not either:
// an admission webhook failing the same way each time answers it.
func isTransient(err error) bool {
	switch {
	case err == nil:
		return false
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		utilnet.IsHTTP2ConnectionLost(err), utilnet.IsTimeout(err):
		return true
	case apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err):
		return true
	}
	return false
}

// authorizerWarmup is how long after an outage a Forbidden answer is taken
// for an API server still filling its RBAC caches.
const authorizerWarmup = 30 * time.Second

// forbiddenAfterOutage reports a Forbidden within authorizerWarmup of the
// API server last not answering (outageSeen; zero: no outage seen). A
// kube-apiserver just back serves before its RBAC authorizer's informers
// hold the roles again, and refuses for a moment what it granted before
// (seen in the sandbox's restart, under load): that is retried; any other
// Forbidden fails at once, as a missing permission must.
func forbiddenAfterOutage(err error, outageSeen time.Time) bool {
	return apierrors.IsForbidden(err) && !outageSeen.IsZero() && time.Since(outageSeen) < authorizerWarmup
}

// transientRetry spaces the attempts of a call the API server could not
// answer: client-go's exponential backoff, from a quarter second up to the
// eviction retries' 5 s, until the caller's context ends. The watches
// (watchtools.UntilWithSync) retry the same way in their reflector; a drain
// retries its one-off calls like this, so an API server restarting in the
// middle of it costs the drain the outage, not the apply (kubectl drain
// fails at the first such error; Cluster API's drain retries it at its next
// reconcile).
var transientRetry = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.1, Cap: evictionRetryMax, Steps: math.MaxInt32}

// retryTransient calls fn until it returns nil or an error that is not
// transient, or ctx ends; it returns fn's last error (the API server's last
// answer, not the context's end, when ctx ends during an outage). A
// Forbidden soon after an outage is retried too (forbiddenAfterOutage).
func retryTransient(ctx context.Context, fn func(context.Context) error) error {
	var last error
	var outageSeen time.Time
	err := wait.ExponentialBackoffWithContext(ctx, transientRetry, func(ctx context.Context) (bool, error) {
		last = fn(ctx)
		if isTransient(last) {
			outageSeen = time.Now()
		}
		if (isTransient(last) || forbiddenAfterOutage(last, outageSeen)) && ctx.Err() == nil {
			return false, nil
		}
		return true, last
	})
	if last != nil {
		return last
	}
	return err
}

// apiOutage follows, for a wait that lists and watches (an informer, which
// resumes by itself), whether the API server answered its latest attempt:
// when the wait ends during an outage, that is what its error must say, not
// the object's last state, which dates from before it.
type apiOutage struct {
	mu    sync.Mutex
	since time.Time
	err   error
}

// listWatch records the outcome of each list and watch of lw.
func (o *apiOutage) listWatch(lw *cache.ListWatch) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			obj, err := lw.ListWithContextFunc(ctx, opts)
			o.record(err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w, err := lw.WatchFuncWithContext(ctx, opts)
			o.record(err)
			return w, err
		},
	}
}

func (o *apiOutage) record(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.since, o.err = time.Time{}, nil
	case isTransient(err):
		if o.err == nil {
			o.since = time.Now()
		}
		o.err = err
	}
}

// unreachable returns an *APIUnreachableError when the latest attempt
// found the API server away, else nil.
func (o *apiOutage) unreachable() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		return nil
	}
	return &APIUnreachableError{Since: o.since, Err: o.err}
}

// APIUnreachableError says a wait ended while the API server did not
// answer: what the wait last saw is older than Since.
type APIUnreachableError struct {
	Since time.Time
	Err   error
}

func (e *APIUnreachableError) Error() string {
	return fmt.Sprintf("the API server has not answered since %s (%s before the wait ended; last error: %v): check that it is running and reachable at the kubeconfig's server address, then apply again",
		e.Since.UTC().Format(time.TimeOnly), time.Since(e.Since).Round(time.Second), e.Err)
}

func (e *APIUnreachableError) Unwrap() error { return e.Err }
