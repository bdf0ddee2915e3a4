package latency

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The environment knobs that turn the model on for a test run (the
// acceptance tests' shared sandbox reads them: internal/acctest):
// SANDBOX_LATENCY_FACTOR divides every real duration (unset or 0: off, the
// default, so the ordinary tests stay fast), and SANDBOX_LATENCY_QUANTILE
// picks p50 (the default) or p99: the tail, which proves no timeout of the
// provider's fires before a slow but healthy operation ends.
const (
	EnvFactor   = "SANDBOX_LATENCY_FACTOR"
	EnvQuantile = "SANDBOX_LATENCY_QUANTILE"
)

// FromEnv returns the model the environment asks for, nil when
// SANDBOX_LATENCY_FACTOR is unset or 0.
func FromEnv() (*Model, error) {
	f := strings.TrimSpace(os.Getenv(EnvFactor))
	if f == "" {
		return nil, nil
	}
	factor, err := strconv.ParseFloat(f, 64)
	if err != nil || factor < 0 {
		return nil, fmt.Errorf("%s=%q: want a time-scale factor, a number >= 0 (100 runs a 12-minute join in 7.2 s; 0 is off)", EnvFactor, f)
	}
	q := Median
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv(EnvQuantile))); v {
	case "", "p50":
	case "p99":
		q = Tail
	default:
		return nil, fmt.Errorf("%s=%q: want p50 or p99", EnvQuantile, v)
	}
	return New(factor, q), nil
}
