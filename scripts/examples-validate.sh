#!/usr/bin/env bash
# terraform validate in every examples/ directory on its own, as a user who
# copies the directory would run it: the provider is the one built here,
# through a dev_overrides CLI configuration (no init, nothing downloaded), and
# each directory must name it in required_providers (without, Terraform
# resolves hashicorp/windows, which does not exist).
#
# Left out: the import-by-identity snippets (import blocks with identity need
# Terraform 1.12; the CLI here is 1.11). A directory that needs another
# provider (vmware/vsphere, hashicorp/http, hashicorp/kubernetes) cannot be
# validated offline: it is listed, and TestExamplesMatchTheSchema checks its
# windows_* blocks against the schema instead.
#
# Usage: scripts/examples-validate.sh <terraform> <provider binary> <work dir>
set -euo pipefail
tf=$1 binary=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
cp "$binary" "$work/bin/terraform-provider-windows"
cat > "$work/cli.tfrc" <<CFG
provider_installation {
  dev_overrides {
    "registry.terraform.io/wincluster/windows" = "$work/bin"
    "registry.opentofu.org/wincluster/windows" = "$work/bin"
  }
  filesystem_mirror {
    path    = "$work/no-mirror"
    include = ["*/*"]
  }
}
CFG
export TF_CLI_CONFIG_FILE=$work/cli.tfrc CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
failed=0 validated=0 offline=0
for dir in $(find examples -name '*.tf' -printf '%h\n' | sort -u); do
  unit=$work/units/${dir//\//_}
  mkdir -p "$unit"
  find "$dir" -maxdepth 1 -type f ! -name 'import-by-identity*.tf' -exec cp {} "$unit/" \;
  out=$(cd "$unit" && "$tf" validate -json -no-color 2>"$unit.stderr" || true)
  missing=$(jq -r '.diagnostics[]? | select(.summary == "Missing required provider") | .detail' <<<"$out" 2>/dev/null |
    grep -o 'registry\.[a-z.]*/[a-z0-9-]*/[a-z0-9-]*' | sort -u || true)
  if [ -n "$missing" ] && ! grep -q '/windows$' <<<"$missing"; then
    echo "-- $dir: not validated offline: needs $(tr '\n' ' ' <<<"$missing")"
    offline=$((offline + 1))
    continue
  fi
  # The one warning dev_overrides always adds is not the example's.
  out=$(jq '.diagnostics |= map(select(.summary != "Provider development overrides are in effect"))' <<<"$out" 2>/dev/null || echo "$out")
  if [ "$(jq -r '.valid' <<<"$out" 2>/dev/null)" = true ] && [ "$(jq '[.diagnostics[]?] | length' <<<"$out")" = 0 ]; then
    echo "ok $dir"
    validated=$((validated + 1))
    continue
  fi
  echo "FAIL $dir"
  jq -r '.diagnostics[]? | "   \(.severity): \(.range.filename // "-"):\(.range.start.line // "-"): \(.summary): \(.detail)"' <<<"$out" 2>/dev/null || echo "$out"
  cat "$unit.stderr"
  failed=$((failed + 1))
done
echo "examples: $validated validated, $offline need providers not available offline, $failed failed"
[ "$failed" = 0 ]
