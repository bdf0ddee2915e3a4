package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRetryDeadlineDuringAttempt is the race CI met under -race: the caller's
// deadline passed while an attempt was running, and that attempt's bare
// "context deadline exceeded" (a command step, not retried) replaced the
// dial failures that said why the host was not reached.
func TestRetryDeadlineDuringAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refused := &ConnectError{Protocol: "winrm http", Host: "192.0.2.1", Port: 5985, Step: StepDial, Err: errors.New("connection refused")}
	calls := 0
	err := retry(ctx, Backoff{Initial: time.Millisecond, Max: time.Millisecond}, func() error {
		calls++
		if calls < 3 {
			return refused
		}
		cancel() // the deadline passes inside this attempt
		return &ConnectError{Protocol: "winrm http", Host: "192.0.2.1", Port: 5985, Step: StepCommand,
			Err: fmt.Errorf("running script: %w", ctx.Err())}
	})
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Step != StepDial || ce.Attempts != 3 {
		t.Fatalf("err = %v, want the dial failure after 3 attempts", err)
	}
}

// TestRetryFirstAttemptCut keeps the context's error when no attempt
// completed: there is nothing better to report.
func TestRetryFirstAttemptCut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := retry(ctx, Backoff{Initial: time.Millisecond, Max: time.Millisecond}, func() error {
		cancel()
		return &ConnectError{Step: StepCommand, Err: ctx.Err()}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
}
