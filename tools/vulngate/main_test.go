package main

import (
	"strings"
	"testing"
)

// A stream as govulncheck -format json writes it: a standard-library finding
// the release toolchain fixes, one it does not, a called module finding, and
// a module finding the code never calls (no function in its first frame).
const stream = `{"config":{"protocol_version":"v1.0.0"}}
{"finding":{"osv":"GO-1","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http","function":"Get"}]}}
{"finding":{"osv":"GO-2","fixed_version":"v1.26.11","trace":[{"module":"stdlib","version":"v1.26.8","package":"crypto/tls","function":"Dial"}]}}
{"finding":{"osv":"GO-3","fixed_version":"v1.83.2","trace":[{"module":"google.golang.org/grpc","version":"v1.83.1","package":"google.golang.org/grpc/internal/transport","function":"HandleStreams"}]}}
{"finding":{"osv":"GO-4","fixed_version":"v0.59.0","trace":[{"module":"golang.org/x/crypto","version":"v0.58.0"}]}}
{"finding":{"osv":"GO-1","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http","function":"Do"}]}}
`

func TestGate(t *testing.T) {
	called, err := calledFindings(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(called) != 3 {
		t.Fatalf("called = %+v, want GO-1, GO-2, GO-3 once each", called)
	}
	allowed, failed := gate(called, "v1.26.10")
	if len(allowed) != 1 || !strings.Contains(allowed[0], "GO-1") {
		t.Errorf("allowed = %q, want only GO-1 (fixed in v1.26.9, before the release toolchain)", allowed)
	}
	if len(failed) != 2 || !strings.Contains(failed[0], "GO-2") || !strings.Contains(failed[1], "grpc v1.83.1") {
		t.Errorf("failed = %q, want GO-2 (fixed after the release toolchain) and GO-3 (a module)", failed)
	}
	// Without a toolchain directive, nothing is let through.
	if allowed, failed := gate(called, ""); len(allowed) != 0 || len(failed) != 3 {
		t.Errorf("without a release toolchain: allowed %q, failed %q", allowed, failed)
	}
}

func TestReleaseToolchain(t *testing.T) {
	got, err := releaseToolchain("../../go.mod")
	if err != nil || !strings.HasPrefix(got, "v1.") {
		t.Fatalf("releaseToolchain(go.mod) = %q, %v: go.mod needs the toolchain directive the release is built with", got, err)
	}
}
