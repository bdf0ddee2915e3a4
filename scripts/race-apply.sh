#!/usr/bin/env bash
# The body of `make race-apply`: examples/quickstart with 20 nodes, applied and
# destroyed by a provider built with the race detector, in a process of its
# own. cmd/sandbox runs it with the sandbox's settings in the environment.
# The sandbox stays out of the race detector's sight: govmomi v0.56.0's
# simulator races with itself (a VM's DestroyTask deletes its disks in a task
# of its own that reads the Datastore's VM list while UnregisterVM writes it),
# which would stop an in-process run on a race that is not the provider's.
#
# First, when CANARY_PLUGIN_DIR is given, the check proves it can fail: a
# provider built with -tags racecanary (race_canary.go) races at start-up,
# and a plan with it must leave the detector's report naming that file.
#
#   scripts/race-apply.sh TERRAFORM RACE_PLUGIN_DIR WORK_DIR [CANARY_PLUGIN_DIR]
set -euo pipefail
terraform=$1 plugins=$2 work=$3 canary=${4:-}
examples=$(cd "$(dirname "$0")/../examples/quickstart" && pwd)

# prepare DIR PLUGIN_DIR: the quickstart with 20 nodes in DIR, initialised
# with the provider in PLUGIN_DIR. Every race report goes to a file of its
# own (DIR/race.<pid>); the provider exits at the first one, which fails
# the run too.
prepare() {
  rm -rf "$1" && mkdir -p "$1"
  cp "$examples"/*.tf "$1/"
  # An override file (Terraform merges *_override.tf into the resource).
  printf 'resource "windows_node" "worker" {\n  count = 20\n}\n' > "$1/race_override.tf"
  (cd "$1" && "$terraform" init -input=false -plugin-dir="$2" >/dev/null)
  export GORACE="log_path=$1/race halt_on_error=1"
}

if [ -n "$canary" ]; then
  prepare "$work/canary" "$canary"
  (cd "$work/canary" && "$terraform" plan -input=false >plan.log 2>&1) || true
  if ! grep -qs 'race_canary\.go' "$work/canary"/race.*; then
    tail -20 "$work/canary/plan.log"
    echo "race-apply: the canary provider's data race went unreported: this check could not fail" >&2
    exit 1
  fi
  echo "race-apply: the canary's data race was reported, as it must be"
fi

prepare "$work" "$plugins"
cd "$work"
status=0
"$terraform" apply -input=false -auto-approve -parallelism=10 >apply.log 2>&1 || status=$?
"$terraform" destroy -input=false -auto-approve -parallelism=10 >destroy.log 2>&1 || status=$?
if compgen -G "$work/race.*" >/dev/null; then
  cat "$work"/race.*
  echo "race-apply: the race detector found a data race in the provider (reports above)" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  tail -40 apply.log destroy.log
  echo "race-apply: the apply or destroy failed" >&2
  exit 1
fi
nodes=$(grep -c 'windows_node\.worker\[[0-9]*\]: Creation complete' apply.log || true)
if [ "$nodes" -ne 20 ]; then
  echo "race-apply: $nodes nodes created, want 20" >&2
  exit 1
fi
echo "race-apply: 20 nodes applied and destroyed by a provider built with -race; no data race reported"
