#!/usr/bin/env bash
# The body of `make demo`. cmd/sandbox runs it once the sandbox is ready, with
# the sandbox's settings (VSPHERE_*, KUBECONFIG, TF_VAR_*) in the environment,
# and tears the sandbox down when it returns.
#
#   scripts/demo.sh TERRAFORM PLUGIN_DIR WORK_DIR
set -euo pipefail
terraform=$1 plugins=$2 work=$3
# The provider runs as its ServiceAccount (KUBECONFIG, bound by
# examples/rbac/terraform-provider-windows.yaml); kubectl looks as the admin.
kubectl() { "$SANDBOX_CONTROLPLANE_BIN/kubectl" --kubeconfig "$SANDBOX_ADMIN_KUBECONFIG" "$@"; }
examples=$(cd "$(dirname "$0")/../examples/quickstart" && pwd)

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

rm -rf "$work" && mkdir -p "$work"
cp "$examples"/*.tf "$work/"
cd "$work"

step "terraform init (the provider comes from $plugins; no registry is contacted)"
"$terraform" init -input=false -plugin-dir="$plugins"

step "the provider's Kubernetes identity (KUBECONFIG): a ServiceAccount bound by examples/rbac, not an admin"
"$SANDBOX_CONTROLPLANE_BIN/kubectl" --kubeconfig "$KUBECONFIG" auth whoami

step "terraform apply"
"$terraform" apply -input=false -auto-approve

step "terraform output golden_image (the template windows_node clones)"
"$terraform" output golden_image

step "what the golden image build ran on the guest (the simulated host's script log)"
# One line per script the provider sent to the build VM: its step, exit code
# and duration. The transport proves each new connection with a trivial
# script first: the second one is the reconnection after the reboot that
# enabling the Containers feature takes.
for log in "$SANDBOX_HOSTS_DIR"/WIN2022-K8S/scripts.log; do
  printf '%s\n' "$(basename "$(dirname "$log")")"
  awk 'function flush() { if (n) printf "  %-22s exit=%s %s\n", (step != "" ? step : (ready ? "(connection check)" : "(unnamed script)")), ex, dur }
       /^=== / { flush(); n = 1; step = ""; ready = 0
                 for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "exit") ex = kv[2]; if (kv[1] == "duration") dur = kv[2]; if (kv[1] == "step") step = kv[2] }
                 next }
       /Write-Output .ready./ { ready = 1 }
       END { flush() }' "$log"
done
step "how the steps reached the guests (make demo puts this machine outside their subnet, as a CI runner is)"
# The quickstart sets no transport: the default, vmtools, runs every step
# through vCenter's guest operations. The stock templates' WinRM HTTP
# listener admits only the guests' own subnet on their Public network.
for log in "$SANDBOX_HOSTS_DIR"/WIN2022-K8S/scripts.log "$SANDBOX_HOSTS_DIR"/WIN-*/scripts.log; do
  printf '  %-12s %s\n' "$(basename "$(dirname "$log")")" "$(awk '/^=== / { n[$3]++ } END { for (t in n) printf "%s: %d scripts ", t, n[t] }' "$log")"
done
if grep -qF -- "$TF_VAR_admin_password" terraform.tfstate; then
  echo "The administrator password is in terraform.tfstate." >&2
  exit 1
fi
echo "The administrator password (write-only admin_password_wo) is not in terraform.tfstate."

step "kubectl get runtimeclasses"
kubectl get runtimeclasses -o custom-columns='NAME:.metadata.name,HANDLER:.handler,WINDOWS-BUILD:.scheduling.nodeSelector.node\.kubernetes\.io/windows-build,TOLERATIONS:.scheduling.tolerations[*].key'

step "terraform output nodes / cluster"
"$terraform" output nodes
"$terraform" output cluster

step "kubectl get nodes (the simulated kubelets joined the real control plane)"
kubectl get nodes -o wide
kubectl get nodes -o custom-columns='NAME:.metadata.name,PROVIDER-ID:.spec.providerID,BUILD:.metadata.labels.node\.kubernetes\.io/windows-build,TAINTS:.spec.taints[*].key'

# The quickstart's networking mode (var.cni; make demo CNI=calico|antrea) and its
# agents' DaemonSets.
case "${TF_VAR_cni:-flannel}" in
  calico) agents="kube-proxy-windows-calico calico-node-windows" ;;
  antrea) agents="antrea-agent-windows" ;; # AntreaProxy serves Services: no kube-proxy
  *) agents="kube-proxy-windows kube-flannel-ds-windows" ;;
esac
step "the node agents ($agents) Running on every Windows node, with identities of their own"
"$terraform" output node_networking
kubectl -n kube-system get daemonsets -l app.kubernetes.io/part-of=windows-node-networking -o wide
kubectl -n kube-system get pods -l app.kubernetes.io/part-of=windows-node-networking \
  -o custom-columns='POD:.metadata.name,NODE:.spec.nodeName,STATUS:.status.phase,READY:.status.containerStatuses[*].ready,SERVICEACCOUNT:.spec.serviceAccountName'
for node in $(kubectl get nodes -l kubernetes.io/os=windows -o jsonpath='{.items[*].metadata.name}'); do
  for ds in $agents; do
    ready=$(kubectl -n kube-system get pods -l windows.wincluster.io/agent=$ds --field-selector spec.nodeName="$node" \
      -o jsonpath='{.items[*].status.conditions[?(@.type=="Ready")].status}')
    if [ "$ready" != True ]; then
      echo "$ds is not Running and Ready on $node" >&2
      exit 1
    fi
  done
done
echo "$agents are Running and Ready on every Windows node."

step "deploy the sample Windows web server with runtimeClassName: windows-2022"
kubectl apply -f "$examples/win-webserver.yaml"
kubectl rollout status deployment/win-webserver --timeout=120s
kubectl get pods -l app=win-webserver -o wide
kubectl delete -f "$examples/win-webserver.yaml" --wait=true

step "terraform plan (nothing to change)"
"$terraform" plan -input=false -detailed-exitcode

step "terraform destroy"
"$terraform" destroy -input=false -auto-approve
