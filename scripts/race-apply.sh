#!/usr/bin/env bash
# The body of `make race-apply`: examples/quickstart with 20 nodes, applied and
# destroyed by a provider built with the race detector, in a process of its
# own. cmd/sandbox runs it with the sandbox's settings in the environment.
# The sandbox stays out of the race detector's sight: govmomi v0.56.0's
# simulator races with itself (a VM's DestroyTask deletes its disks in a task
# of its own that reads the Datastore's VM list while UnregisterVM writes it),
# which would stop an in-process run on a race that is not the provider's.
#
#   scripts/race-apply.sh TERRAFORM RACE_PLUGIN_DIR WORK_DIR
set -euo pipefail
terraform=$1 plugins=$2 work=$3
examples=$(cd "$(dirname "$0")/../examples/quickstart" && pwd)

rm -rf "$work" && mkdir -p "$work"
cp "$examples"/*.tf "$work/"
cd "$work"
# An override file (Terraform merges *_override.tf into the resource).
printf 'resource "windows_node" "worker" {\n  count = 20\n}\n' > race_override.tf

# Every race report goes to a file of its own (race.<pid>); the provider
# exits at the first one, which fails the run too.
export GORACE="log_path=$work/race halt_on_error=1"
"$terraform" init -input=false -plugin-dir="$plugins" >/dev/null
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
