# Installed once per cluster, with a cluster administrator's identity (guide
# "Least privilege"): a provider configuration of its own, by alias. The
# default configuration keeps the everyday identity of examples/rbac.
provider "windows" {
  alias = "admin"
  kubernetes {
    config_path = "~/.kube/admin.conf"
  }
}

# Keep kube-proxy and flannel (which tolerate every taint) off Windows nodes.
resource "windows_linux_daemonset_guard" "system" {
  provider = windows.admin

  namespace = "kube-system"
  names     = ["kube-proxy", "kube-flannel-ds-amd64"]
}

# Every DaemonSet of a namespace that has no OS selector when the guard is
# created.
resource "windows_linux_daemonset_guard" "flannel" {
  provider = windows.admin

  namespace = "kube-flannel"
}
