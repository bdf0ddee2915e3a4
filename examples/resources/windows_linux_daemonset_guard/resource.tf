# Keep kube-proxy and flannel (which tolerate every taint) off Windows nodes.
resource "windows_linux_daemonset_guard" "system" {
  namespace = "kube-system"
  names     = ["kube-proxy", "kube-flannel-ds-amd64"]
}

# Every DaemonSet of a namespace that has no OS selector when the guard is
# created.
resource "windows_linux_daemonset_guard" "flannel" {
  namespace = "kube-flannel"
}
