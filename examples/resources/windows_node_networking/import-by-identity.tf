# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
import {
  to       = windows_node_networking.this
  provider = windows.admin
  identity = {
    namespace = "kube-system"
  }
}
