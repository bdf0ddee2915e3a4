#!/usr/bin/env bash
# Lints the planted violations (depguard_canary.go, build tag
# depguardcanary), one per depguard rule of .golangci.yml, and fails unless
# depguard reports every one: the proof that the layer rules can fail.
# Usage: scripts/depguard-canary.sh <golangci-lint command...>
set -euo pipefail
cd "$(dirname "$0")/.."
out=$("$@" run --build-tags depguardcanary --enable-only depguard \
  ./internal/winnode/ ./internal/sandbox/vmtools/ ./internal/kube/ ./internal/guest/guesttest/ 2>&1) && {
  echo "depguard canary: golangci-lint passed with the planted violations in place:"; echo "$out"; exit 1; }
status=0
for rule in provider-without-simulators simulated-world terraform-stops-at-resources lower-layers-point-down; do
  if grep "depguard_canary.go" <<<"$out" | grep -q "from list '$rule'"; then
    echo "depguard canary: rule $rule reported its planted violation"
  else
    echo "depguard canary: rule $rule did NOT report its planted violation"; status=1
  fi
done
[ $status = 0 ] || { echo "$out"; exit 1; }
