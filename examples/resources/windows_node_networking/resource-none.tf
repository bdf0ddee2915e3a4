# The cluster runs Calico or Antrea, which install their own Windows agents
# (and kube-proxy, or its replacement): the provider installs nothing
# cluster-level, and nodes join with containerd, the CNI directories and the
# kubelet only. (windows.admin: the administrator's provider configuration
# of the example above.)
resource "windows_node_networking" "calico" {
  provider = windows.admin

  cni = "none"
}
