#!/usr/bin/env bash
# Builds the sandbox's Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler) from this module into a cache
# directory keyed by the Kubernetes version and this module's go.sum, and does
# nothing when that directory is already complete. It also builds kubeletcheck
# (./kubeletcheck), which judges a simulated Windows kubelet's command line
# and KubeletConfiguration with the kubelet's own code (internal/sandbox/kubeletsim
# runs it from this directory). kubectl, which only people look with (make
# demo), is built into the same directory on request.
#
#   build.sh            prints the bin directory (building it first if needed)
#   build.sh --kubectl  the same, with kubectl in it too
#
# The first build compiles about 2,000 packages and takes 15-20 minutes on two
# cores; later builds reuse the binaries outright. One `go build` compiles
# them all: it links the five binaries side by side and keeps both cores busy
# where one build after another left one idle during each link.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

k8s_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
key=$(sha256sum go.mod go.sum build.sh kubeletcheck/*.go | sha256sum | cut -c1-12)
cache_root=${SANDBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-windows}
bin="$cache_root/controlplane/$k8s_version-$key"
with_kubectl=false
[ "${1:-}" = --kubectl ] && with_kubectl=true
# go build -o DIR/ names each binary after its package's last path element
# (the one before a major version suffix: go.etcd.io/etcd/server/v3 is
# "server", renamed etcd below).
tools=(go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
       k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler ./kubeletcheck)
names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubeletcheck)

complete() { for n in "${names[@]}"; do [ -x "$bin/$n" ] || return 1; done; }

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# build OUT_DIR PACKAGE... compiles the packages in one go build, showing
# progress every 100 packages.
build() {
  local out=$1; shift
  local total start
  total=$(go list -deps "$@" | wc -l)
  start=$(date +%s)
  echo ">> $total packages to compile (fewer where the Go build cache has them)." >&2
  go build -trimpath -v -ldflags "$ldflags" -o "$out/" "$@" 2>&1 |
    awk -v total="$total" -v start="$start" '
      { n++; if (n % 100 == 0) { printf(">>     %d packages compiled (of at most %d), %ds\n", n, total, systime()-start) > "/dev/stderr"; fflush("/dev/stderr") } }
      /^#|\.go:[0-9]+:/ { print > "/dev/stderr" }'
}

if ! complete; then
  echo ">> Building the Kubernetes $k8s_version control plane for the sandbox (once; cached in $bin):" >&2
  echo ">> 15-20 minutes on 2 cores from empty caches." >&2
  tmp="$bin.tmp.$$"
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  start=$(date +%s)
  build "$tmp" "${tools[@]}"
  mv "$tmp/server" "$tmp/etcd" 2>/dev/null || true
  for n in "${names[@]}"; do [ -x "$tmp/$n" ] || { echo ">> building $n failed" >&2; exit 1; }; done
  rm -rf "$bin"; mkdir -p "$(dirname "$bin")"; mv "$tmp" "$bin"; trap - EXIT
  echo ">> control plane ready in $(( $(date +%s) - start ))s" >&2
fi

if $with_kubectl && [ ! -x "$bin/kubectl" ]; then
  echo ">> Building kubectl $k8s_version into $bin (once; about 2 minutes on 2 cores after the control plane)." >&2
  tmp="$bin/kubectl.tmp.$$"
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  build "$tmp" k8s.io/kubernetes/cmd/kubectl
  [ -x "$tmp/kubectl" ] || { echo ">> building kubectl failed" >&2; exit 1; }
  mv "$tmp/kubectl" "$bin/kubectl"; rm -rf "$tmp"; trap - EXIT
fi
echo "$bin"
