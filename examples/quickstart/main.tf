# The quickstart: what `make demo` applies against the sandbox.
#
# The provider reads its settings from the environment (VSPHERE_*, KUBECONFIG),
# which `go run ./cmd/sandbox --env-file sandbox.env` writes for the sandbox.
terraform {
  required_providers {
    windows = {
      source = "wincluster/windows"
    }
  }
}

provider "windows" {}

# One RuntimeClass per Windows Server release the cluster runs. Pods set
# `runtimeClassName: windows-2022` and land on Windows Server 2022 nodes only.
resource "windows_runtime_class" "release" {
  for_each = toset(["2019", "2022"])

  name            = "windows-${each.key}"
  windows_version = each.key
}

output "runtime_classes" {
  description = "RuntimeClass name => Windows build it selects."
  value       = { for rc in windows_runtime_class.release : rc.name => rc.windows_build }
}

output "ltsc2022_build" {
  description = "The provider function modules use to compute a build."
  value       = provider::windows::build_number("2022")
}
