// Package latency is the sandbox's model of time as it passes: how long
// vCenter, an ESXi host and Windows Server take for what the provider asks of
// them, and how many of those things a host does at once. The simulators
// (vcsim, vmtools, winsim, kubeletsim, the artifact server) ask it how long
// to take; nothing here acts on its own.
//
// Every duration is kept beside its source (durations.go). A Model is off by
// default (nil: every operation finishes at once, as the sandbox always did);
// benchmarks turn it on, and tests select it with a time-scale factor that
// runs a 12-minute real join in seconds with the same ordering and the same
// contention: every duration is divided by the factor, and the hosts'
// provisioning slots stay as many as a real host has.
package latency

import (
	"context"
	"fmt"
	"time"
)

// Op names an operation the model times.
type Op string

// Duration is what one operation takes at real scale: its median and its
// 99th percentile, and where the figures come from.
type Duration struct {
	P50, P99 time.Duration
	// Source names the published figure (an issue, a documentation page, a
	// measurement) the duration is taken from.
	Source string
}

// Quantile selects which of an operation's durations the model plays.
type Quantile int

const (
	// Median plays every operation at its P50: the benchmarks' critical path.
	Median Quantile = iota
	// Tail plays every operation at its P99: the tests that prove no timeout
	// of the provider's fires before a slow but healthy operation ends.
	Tail
)

// Model plays durations. The zero value and a nil *Model are off: every
// operation takes no time, and Wait returns at once.
type Model struct {
	// Factor divides every real duration: 1 is real time, 100 runs a
	// 12-minute join in 7.2 seconds. 0 is off.
	Factor float64
	// Quantile is which duration each operation plays (Median unless set).
	Quantile Quantile
	// Durations are the operations' real durations; New fills them from
	// RealDurations.
	Durations map[Op]Duration
}

// New returns a model at the given time-scale factor (real durations
// divided by factor), playing quantile q of each operation.
func New(factor float64, q Quantile) *Model {
	if factor <= 0 {
		return nil
	}
	d := make(map[Op]Duration, len(RealDurations))
	for op, v := range RealDurations {
		d[op] = v
	}
	return &Model{Factor: factor, Quantile: q, Durations: d}
}

// On reports whether the model plays any duration at all.
func (m *Model) On() bool { return m != nil && m.Factor > 0 }

// Real is op's duration at real scale for the model's quantile, unscaled: what
// a benchmark's critical path adds up. It panics on an operation the model
// does not know, so a simulator cannot time something nobody sourced.
func (m *Model) Real(op Op) time.Duration {
	d, ok := RealDurations[op]
	if m != nil && m.Durations != nil {
		d, ok = m.Durations[op]
	}
	if !ok {
		panic(fmt.Sprintf("latency: no duration for %q: add it to durations.go with its source", op))
	}
	if m != nil && m.Quantile == Tail {
		return d.P99
	}
	return d.P50
}

// Of is op's duration as played: its real duration divided by the factor,
// or 0 when the model is off.
func (m *Model) Of(op Op) time.Duration {
	if !m.On() {
		return 0
	}
	return m.Scale(m.Real(op))
}

// Scale divides a real duration by the factor (0 when the model is off).
func (m *Model) Scale(real time.Duration) time.Duration {
	if !m.On() {
		return 0
	}
	return time.Duration(float64(real) / m.Factor)
}

// Wait takes op's played duration, or less if ctx ends first (then it
// returns ctx's error).
func (m *Model) Wait(ctx context.Context, op Op) error {
	return m.Sleep(ctx, m.Of(op))
}

// Sleep waits d of played time (already scaled), or until ctx ends.
func (m *Model) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Transfer is how long bytes take over a link of bitsPerSecond at real
// scale, played: the model's download and image-pull time.
func (m *Model) Transfer(bytes int64, bitsPerSecond float64) time.Duration {
	if !m.On() || bitsPerSecond <= 0 {
		return 0
	}
	return m.Scale(time.Duration(float64(bytes) * 8 / bitsPerSecond * float64(time.Second)))
}
