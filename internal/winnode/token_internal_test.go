package winnode

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// tokenKube refreshes a token until it is gone after `lives` refreshes.
type tokenKube struct {
	Kube
	lives     int32
	refreshed atomic.Int32
}

func (k *tokenKube) RefreshBootstrapToken(_ context.Context, id string, ttl time.Duration) error {
	if k.refreshed.Add(1) > k.lives {
		return &kube.NotFoundError{Kind: "bootstrap token Secret", Name: "kube-system/bootstrap-token-" + id}
	}
	return nil
}

// The token is refreshed every third of its lifetime while the join waits,
// and a token found gone is reported: the kubelet's bootstrap is refused.
func TestKeepTokenAlive(t *testing.T) {
	k := &tokenKube{lives: 2}
	m := &Manager{Kube: k}
	err := m.keepTokenAlive(t.Context(), "abcdef", 30*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "the bootstrap token expired or was deleted before the kubelet joined") {
		t.Fatalf("error %v; want the token reported gone", err)
	}
	if got := k.refreshed.Load(); got != 3 {
		t.Errorf("%d refreshes, want 2 and the one that found it gone", got)
	}

	// Stopped (the Node is Ready): no error.
	k = &tokenKube{lives: 1 << 30}
	m.Kube = k
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.keepTokenAlive(ctx, "abcdef", 30*time.Millisecond) }()
	for k.refreshed.Load() < 2 {
		time.Sleep(5 * time.Millisecond) // the test waits for the refreshes it counts
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("stopped: %v", err)
	}
}
