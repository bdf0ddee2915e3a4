package kube

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// refused is what client-go returns while the API server is down.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func TestIsTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{refused, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{apierrors.NewServiceUnavailable("shutting down"), true},
		{apierrors.NewServerTimeout(gr, "create", 1), true},
		{apierrors.NewTooManyRequests("budget", 0), false}, // a PodDisruptionBudget's refusal
		{apierrors.NewForbidden(gr, "p", errors.New("no")), false},
		{apierrors.NewInternalError(errors.New("webhook failed")), false},
		{nil, false},
	} {
		if got := isTransient(c.err); got != c.want {
			t.Errorf("isTransient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A Forbidden right after the API server did not answer is its RBAC caches
// filling again after a restart, and retried; without an outage before it,
// a Forbidden is a missing permission and ends the call at once.
func TestRetryTransientForbiddenAfterOutage(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "win-0", errors.New("RBAC: not yet"))
	for _, c := range []struct {
		name    string
		answers []error
		want    error
		calls   int
	}{
		{"after an outage", []error{refused, forbidden, forbidden, nil}, nil, 4},
		{"no outage before", []error{forbidden, nil}, forbidden, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := retryTransient(t.Context(), func(context.Context) error {
				calls++
				return c.answers[calls-1]
			})
			if !errors.Is(err, c.want) || calls != c.calls {
				t.Errorf("retryTransient = %v after %d calls, want %v after %d", err, calls, c.want, c.calls)
			}
		})
	}
}

// drainWorld is a NotReady Node with one managed pod (no kubelet confirms
// deletions, so the drain ends once the eviction is accepted), whose API
// server refuses connections for the first `down` calls of each kind.
func drainWorld(t *testing.T, down int32) (*Client, *atomic.Int32) {
	t.Helper()
	yes := true
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-0"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1",
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "win-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	cs := fake.NewClientset(node, pod)
	// The fake ignores field selectors: only this Node's pod exists.
	var calls, evictions atomic.Int32
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if calls.Add(1) <= down {
			return true, nil, refused
		}
		if a.GetVerb() == "create" && a.GetSubresource() == "eviction" {
			if evictions.Add(1) <= down {
				return true, nil, refused
			}
			return true, nil, nil
		}
		return false, nil, nil
	})
	return &Client{Interface: cs}, &evictions
}

// An API server away for a moment (connection refused on the Node's read
// and on evictions) costs the drain the outage, not the drain.
func TestDrainNodeSurvivesAPIServerOutage(t *testing.T) {
	c, evictions := drainWorld(t, 2)
	if err := c.DrainNode(t.Context(), "win-0", DrainOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if got := evictions.Load(); got != 3 {
		t.Errorf("%d eviction attempts, want 2 refused and 1 accepted", got)
	}
}

// An outage that outlasts the drain timeout fails the drain saying the API
// server did not answer, and which timeout ended it.
func TestDrainNodeOutageOutlastsTimeout(t *testing.T) {
	c, _ := drainWorld(t, 1<<30)
	err := c.DrainNode(context.Background(), "win-0", DrainOptions{Timeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "not done within the drain timeout of 2s") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("drain: %v; want the drain timeout and the API server's last error", err)
	}
}

// A Ready wait that ends while the API server is away says so, rather than
// quote the Node's state from before the outage as if it were current.
func TestWaitForNodeReadyDuringOutage(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-0"}}
	cs := fake.NewClientset(node)
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, refused })
	cs.PrependWatchReactor("nodes", func(k8stesting.Action) (bool, watch.Interface, error) { return true, nil, refused })
	c := &Client{Interface: cs}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err := c.WaitForNodeReady(ctx, "win-0")
	var wait *NodeWaitError
	if !errors.As(err, &wait) || wait.Unreachable == nil {
		t.Fatalf("error %v; want a NodeWaitError saying the API server is away", err)
	}
	if !strings.Contains(err.Error(), `Node "win-0": could not tell whether it is Ready`) || !strings.Contains(err.Error(), "the API server has not answered since") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %q", err)
	}
}

// An eviction refused because the pod's namespace is being deleted counts
// as done: the namespace's deletion removes the pod (kubectl's drain too).
func TestDrainNodeNamespaceTerminating(t *testing.T) {
	c, _ := drainWorld(t, 0)
	c.Interface.(*fake.Clientset).PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		err := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("unable to create new content in namespace ns because it is being terminated"))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause, Message: "namespace ns is being terminated", Field: "metadata.namespace"}}
		return true, nil, err
	})
	if err := c.DrainNode(t.Context(), "win-0", DrainOptions{Timeout: time.Minute}); err != nil {
		t.Fatalf("drain: %v", err)
	}
}
