# Import by identity: Terraform 1.12 or later, or OpenTofu 1.12 or later.
import {
  to       = windows_linux_daemonset_guard.system
  provider = windows.admin
  identity = {
    namespace = "kube-system"
    names     = ["kube-flannel-ds-amd64", "kube-proxy"]
  }
}

# A guard of a whole namespace has no names.
import {
  to = windows_linux_daemonset_guard.flannel
  identity = {
    namespace = "kube-flannel"
  }
}
