#!/usr/bin/env bash
# The body of `make demo`. cmd/sandbox runs it once the sandbox is ready, with
# the sandbox's settings (VSPHERE_*, KUBECONFIG, TF_VAR_*) in the environment,
# and tears the sandbox down when it returns.
#
#   scripts/demo.sh TERRAFORM PLUGIN_DIR WORK_DIR
set -euo pipefail
terraform=$1 plugins=$2 work=$3
kubectl="$SANDBOX_CONTROLPLANE_BIN/kubectl"
examples=$(cd "$(dirname "$0")/../examples/quickstart" && pwd)

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

rm -rf "$work" && mkdir -p "$work"
cp "$examples"/*.tf "$work/"
cd "$work"

step "terraform init (the provider comes from $plugins; no registry is contacted)"
"$terraform" init -input=false -plugin-dir="$plugins"

step "terraform apply"
"$terraform" apply -input=false -auto-approve

step "terraform output"
"$terraform" output

step "kubectl get runtimeclasses"
"$kubectl" get runtimeclasses -o custom-columns='NAME:.metadata.name,HANDLER:.handler,WINDOWS-BUILD:.scheduling.nodeSelector.node\.kubernetes\.io/windows-build,TOLERATIONS:.scheduling.tolerations[*].key'

step "terraform plan (nothing to change)"
"$terraform" plan -input=false -detailed-exitcode

step "terraform destroy"
"$terraform" destroy -input=false -auto-approve
