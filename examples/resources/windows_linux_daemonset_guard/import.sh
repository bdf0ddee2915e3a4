# A guard of named DaemonSets is imported by <namespace>/<name>,<name>...
terraform import windows_linux_daemonset_guard.system kube-system/kube-proxy,kube-flannel-ds-amd64

# A guard of a whole namespace by the namespace alone: it takes the
# DaemonSets whose node selector the guard's field manager owns.
terraform import windows_linux_daemonset_guard.flannel kube-flannel
