#!/usr/bin/env bash
# Runs one native Go fuzz target for a fuzz time: scripts/fuzz-target.sh <pkg> <Target> <fuzztime>
#
# Go 1.26's fuzz coordinator can report a bare "context deadline exceeded"
# as a failure when -fuzztime runs out while a worker is mid-call
# (golang/go#75804, fixed in Go 1.27): no input failed, none is written to
# testdata/fuzz. Such a run, and only such a run, is tried once more; any
# other failure (a written input, a panic, a t.Error) fails at once.
set -uo pipefail
pkg=$1 target=$2 fuzztime=$3
for attempt in 1 2; do
  out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1)
  status=$?
  awk '/^fuzz: elapsed/ { last = $0; next } { print } END { if (last) print last }' <<<"$out"
  [ $status = 0 ] && exit 0
  if [ $attempt = 1 ] && grep -q '^    context deadline exceeded$' <<<"$out" &&
     ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' <<<"$out"; then
    echo ">> $target: the fuzz time ran out mid-call (golang/go#75804), no input failed: running it once more"
    continue
  fi
  exit $status
done
