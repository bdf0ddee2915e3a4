# <namespace>/<name>,<name>... for a guard of named DaemonSets...
import {
  to       = windows_linux_daemonset_guard.system
  provider = windows.admin
  id       = "kube-system/kube-proxy,kube-flannel-ds-amd64"
}

# ...the namespace alone for a guard of a whole namespace.
import {
  to = windows_linux_daemonset_guard.flannel
  id = "kube-flannel"
}
