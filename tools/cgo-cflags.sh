#!/usr/bin/env bash
# Prints the CGO_CFLAGS that building internal/sandbox/winsim needs, for running go
# build/test/vet outside make:  export CGO_CFLAGS="$(tools/cgo-cflags.sh)"
#
# The PowerShell grammar (github.com/airbus-cert/tree-sitter-powershell) has a
# src/scanner.c that includes <tree_sitter/parser.h> with angle brackets, so
# cgo finds that header only with the grammar's src directory on the include
# path. A #cgo directive cannot name the module cache portably, hence this.
set -euo pipefail
mod=github.com/airbus-cert/tree-sitter-powershell
cd "$(dirname "$0")/.."
go mod download "$mod" >/dev/null
dir=$(go list -m -f '{{.Dir}}' "$mod")
echo "${CGO_CFLAGS:--O2 -g} -I$dir/src"
