# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
# The VM's instance UUID (instance_uuid; govc vm.info -json shows it as
# Config.InstanceUuid). `terraform query` with the windows_node list resource
# writes these blocks for every Windows node it finds.
import {
  to = windows_node.worker["win-0"]
  identity = {
    instance_uuid = "5021a7c3-8f4e-4b0a-9d2e-6f1c3b7a9e10"
  }
}
