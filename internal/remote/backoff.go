package remote

import (
	"context"
	"math/rand/v2"
	"time"
)

// retry calls fn until it succeeds, returns an error that is not retryable,
// or ctx ends; the last error is returned with the attempt count.
func retry(ctx context.Context, b Backoff, fn func() error) error {
	delay := b.Initial
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !retryable(err) {
			return err
		}
		// Jitter keeps many nodes booting together from polling in lockstep.
		wait := delay/2 + rand.N(delay/2+1)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			if ce, ok := asConnectError(err); ok {
				ce.Attempts = attempt
			}
			return err
		case <-timer.C:
		}
		delay = min(2*delay, b.Max)
	}
}
