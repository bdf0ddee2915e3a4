package remote

import (
	"context"
	"errors"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// backoffJitter spreads each wait over [delay, 1.5 delay], so many nodes
// booting together do not poll in lockstep.
const backoffJitter = 0.5

// retry calls fn until it succeeds, returns an error that is not retryable,
// or ctx ends; the last error is returned with the attempt count. The
// schedule is apimachinery's exponential backoff: Initial, doubling up to
// Max (then Max for as long as ctx lasts), jittered.
func retry(ctx context.Context, b Backoff, fn func() error) error {
	schedule := wait.Backoff{Duration: b.Initial, Factor: 2, Jitter: backoffJitter, Steps: math.MaxInt32, Cap: b.Max}
	var last error
	attempts, start := 0, time.Now()
	err := schedule.DelayFunc().Until(ctx, true, true, func(context.Context) (bool, error) {
		attempts++
		err := fn()
		if err == nil {
			return true, nil
		}
		if last != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// ctx ended during this attempt: its error says only that, and
			// the attempt before says why the host was not reached.
			return false, nil
		}
		last = err
		if !retryable(last) {
			return false, last
		}
		return false, nil
	})
	if err == nil || err == last { //nolint:errorlint // wait returns the condition's error itself, unwrapped
		return err
	}
	// ctx ended between or during attempts: the last complete attempt's
	// error says why the host was not reached.
	if ce, ok := asConnectError(last); ok {
		ce.Attempts, ce.Elapsed = attempts, time.Since(start)
	}
	return last
}
