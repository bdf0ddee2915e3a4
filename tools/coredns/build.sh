#!/usr/bin/env bash
# Builds the sandbox's cluster DNS, CoreDNS with the kubernetes plugin (./main.go),
# from this module into a cache directory keyed by the CoreDNS version and
# this module's files, and does nothing when that binary is already there.
# internal/sandbox runs it against the real API server, behind the real
# kube-dns Service (SANDBOX_COREDNS_BIN names the directory).
#
#   build.sh            prints the bin directory (building it first if needed)
#
# From empty caches this compiles about 800 packages (5m15s measured on 2 shared
# cores); later runs reuse the binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

version=$(go list -m -f '{{.Version}}' github.com/coredns/coredns)
key=$(sha256sum go.mod go.sum build.sh main.go | sha256sum | cut -c1-12)
cache_root=${SANDBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-windows}
bin="$cache_root/coredns/$version-$key"

if [ -x "$bin/coredns" ]; then echo "$bin"; exit 0; fi

echo ">> Building CoreDNS $version for the sandbox's cluster DNS (once; cached in $bin)." >&2
tmp="$bin.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .
rm -rf "$bin"; mkdir -p "$(dirname "$bin")"; mv "$tmp" "$bin"; trap - EXIT
echo ">> CoreDNS ready in $(( $(date +%s) - start ))s" >&2
echo "$bin"
