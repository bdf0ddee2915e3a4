#!/usr/bin/env bash
# Builds the sandbox's Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, and kubectl for looking at it) from this module into a cache
# directory keyed by the Kubernetes version and this module's go.sum, and does
# nothing when that directory is already complete. It also builds kubeletcheck
# (./kubeletcheck), which judges a simulated Windows kubelet's command line
# and KubeletConfiguration with the kubelet's own code (internal/sandbox/kubeletsim
# runs it from this directory).
#
#   build.sh            prints the bin directory (building it first if needed)
#
# The first build compiles about 2,000 packages and takes 15-20 minutes on two
# cores; later builds reuse the binaries outright.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

k8s_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
key=$(sha256sum go.mod go.sum build.sh kubeletcheck/*.go | sha256sum | cut -c1-12)
cache_root=${SANDBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-windows}
bin="$cache_root/controlplane/$k8s_version-$key"
tools=(go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
       k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
       k8s.io/kubernetes/cmd/kubectl ./kubeletcheck)
names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubeletcheck)

complete() { for n in "${names[@]}"; do [ -x "$bin/$n" ] || return 1; done; }
if complete; then echo "$bin"; exit 0; fi

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

total=$(go list -deps "${tools[@]}" | wc -l)
echo ">> Building the Kubernetes $k8s_version control plane for the sandbox (once; cached in $bin)." >&2
echo ">> $total packages to compile: 15-20 minutes on 2 cores from empty caches, seconds after that." >&2
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
for i in "${!tools[@]}"; do
  echo ">> [$((i+1))/${#tools[@]}] ${names[$i]}" >&2
  go build -trimpath -v -ldflags "$ldflags" -o "$tmp/${names[$i]}" "${tools[$i]}" 2>&1 |
    awk -v total="$total" -v start="$start" '
      { n++; if (n % 100 == 0) { printf(">>     %d packages compiled (of at most %d), %ds\n", n, total, systime()-start) > "/dev/stderr"; fflush("/dev/stderr") } }
      /^#|\.go:[0-9]+:/ { print > "/dev/stderr" }'
  [ -x "$tmp/${names[$i]}" ] || { echo ">> building ${names[$i]} failed" >&2; exit 1; }
done
rm -rf "$bin"; mkdir -p "$(dirname "$bin")"; mv "$tmp" "$bin"; trap - EXIT
echo ">> control plane ready in $(( $(date +%s) - start ))s" >&2
echo "$bin"
