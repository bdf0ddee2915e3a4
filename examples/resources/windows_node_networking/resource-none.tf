# The cluster runs Calico or Antrea, which install their own Windows agents
# (and kube-proxy, or its replacement): the provider installs nothing
# cluster-level, and nodes join with containerd, the CNI directories and the
# kubelet only.
resource "windows_node_networking" "calico" {
  cni = "none"
}
